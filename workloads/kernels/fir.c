/* fir.c: a 64-tap finite impulse response filter in Q15 fixed point over
 * 8192 samples, the inner loop of EEMBC's telecom FIR benchmarks and
 * MiBench's telecomm filters: one multiply-accumulate of two loads per tap,
 * with saturation on output. Argument: repetitions (default 50). */
#include "kernel.h"

enum { TAPS = 64, N = 8192 };
static int16_t coef[TAPS];
static int16_t x[N + TAPS];
static int16_t y[N];

static int16_t saturate(int64_t v) {
    if (v > 32767)
        return 32767;
    if (v < -32768)
        return -32768;
    return (int16_t)v;
}

static void fir(const int16_t *in, int16_t *out, int n) {
    for (int i = 0; i < n; i++) {
        int64_t acc = 0;
        for (int k = 0; k < TAPS; k++)
            acc += (int32_t)coef[k] * in[i + k];
        out[i] = saturate(acc >> 15);
    }
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 50, "fir");
    /* A windowed low-pass filter, built in integers: a triangle window. */
    for (int k = 0; k < TAPS; k++) {
        int t = k < TAPS / 2 ? k + 1 : TAPS - k;
        coef[k] = (int16_t)(t * 30);
    }
    for (int i = 0; i < N + TAPS; i++)
        x[i] = (int16_t)((int)(kernel_rand() % 20000) - 10000 + ((i / 40) % 2 ? 8000 : -8000));
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) {
        fir(x, y, N);
        for (int i = 0; i < N; i++)
            sum = sum * 1000003 + (uint16_t)y[i];
        /* Feed part of the output back so that repetitions differ. */
        for (int i = 0; i < N; i += 97)
            x[i] = y[i];
    }
    printf("y[0] %d y[%d] %d\n", y[0], N - 1, y[N - 1]);
    kernel_done("fir", reps, sum);
    return 0;
}

/* fp_filter.c: a 32-tap FIR filter in single precision, run over a
 * 4,096-sample signal made with libm's sinf and cosf, again and again:
 * hot loops of flw, fmadd.s and fsw, with conversions to and from int.
 * Prints a checksum and the last samples as bits. Argument: repetitions
 * (default 30). */
#include <math.h>
#include <stdlib.h>
#include "corpus.h"

enum { N = 4096, T = 32 };
static float x[N], h[T], y[N];

int main(int argc, char **argv) {
    long reps = argc > 1 ? strtol(argv[1], NULL, 10) : 30;
    for (int i = 0; i < N; i++)
        x[i] = sinf(i * 0.01f) + 0.25f * cosf(i * 0.37f);
    for (int t = 0; t < T; t++)
        h[t] = 1.0f / ((t + 1.5f) * 4.2f);
    float acc = 0;
    for (long rep = 0; rep < reps; rep++) {
        for (int i = T; i < N; i++) {
            float s = 0;
            for (int t = 0; t < T; t++)
                s += h[t] * x[i - t];
            y[i] = s;
        }
        for (int i = 0; i < N; i++) {
            x[i] = y[i] * 0.5f + x[i] * 0.5f;
            acc += (float)(int)(y[i] * 100.0f) / 100.0f;
        }
    }
    PF("checksum", acc);
    for (int i = N - 4; i < N; i++)
        PF("sample", y[i]);
    printf("fflags %s\n", fflags_str(rv_take_fflags()));
    return 0;
}

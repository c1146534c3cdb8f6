/* matmul.c: dense matrix multiply C = A x B of 96x96 doubles in the
 * cache-friendly i-k-j order, plus a 96x96 integer multiply, the
 * compute-bound kernel of EEMBC's matrix benchmarks: two loads, a
 * multiply-add and a store per inner iteration, with a short backward loop
 * branch. Argument: repetitions (default 15). */
#include "kernel.h"

enum { N = 96 };
static double a[N][N], b[N][N], c[N][N];
static int32_t ia[N][N], ib[N][N];
static int64_t ic[N][N];

static void matmul_f64(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            c[i][j] = 0.0;
        for (int k = 0; k < N; k++) {
            double aik = a[i][k];
            for (int j = 0; j < N; j++)
                c[i][j] += aik * b[k][j];
        }
    }
}

static void matmul_i32(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            ic[i][j] = 0;
        for (int k = 0; k < N; k++) {
            int64_t aik = ia[i][k];
            for (int j = 0; j < N; j++)
                ic[i][j] += aik * ib[k][j];
        }
    }
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 15, "matmul");
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (double)((int)(kernel_rand() % 2001) - 1000) / 256.0;
            b[i][j] = (double)((int)(kernel_rand() % 2001) - 1000) / 512.0;
            ia[i][j] = (int32_t)(kernel_rand() % 65536) - 32768;
            ib[i][j] = (int32_t)(kernel_rand() % 65536) - 32768;
        }
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) {
        matmul_f64();
        matmul_i32();
        double trace = 0.0;
        for (int i = 0; i < N; i++)
            trace += c[i][i];
        sum = sum * 31 + (uint64_t)(int64_t)(trace * 1024.0) + (uint64_t)ic[r % N][(r * 7) % N];
        /* Perturb one element so that repetitions differ. */
        a[r % N][(r * 5) % N] += 1.0 / 64.0;
        ia[r % N][(r * 3) % N] += 1;
    }
    printf("c[0][0] %.6f c[%d][%d] %.6f ic[1][2] %lld\n", c[0][0], N - 1, N - 1, c[N - 1][N - 1], (long long)ic[1][2]);
    kernel_done("matmul", reps, sum);
    return 0;
}

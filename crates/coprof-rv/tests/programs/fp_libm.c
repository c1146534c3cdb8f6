/* fp_libm.c: libm's exp, log, sin, pow, sinf and expf in a hot loop, as
 * numeric programs call them: their polynomial kernels, table lookups and
 * the accrued-flags saves and restores (frflags, fsflags) around them.
 * Prints the sums as bits and the flags. Argument: iterations (default
 * 20000). */
#include <math.h>
#include <stdlib.h>
#include "corpus.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    double s = 0;
    float f = 0;
    rv_take_fflags();
    for (long i = 1; i < n; i++) {
        double x = i * 1e-5;
        s += exp(-x) + log(x) + sin(x) + pow(x, 0.3);
        f += sinf((float)x) + expf(-(float)x);
    }
    PD("sum of doubles", s);
    PF("sum of floats", f);
    printf("fflags %s\n", fflags_str(rv_take_fflags()));
    return 0;
}

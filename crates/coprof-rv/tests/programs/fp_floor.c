/* fp_floor.c: libm's floor, ceil, round, trunc, lround and their single
 * precision forms in a hot loop, as programs round measurements to
 * integers: conversions to integers in the static rounding modes down,
 * up and to nearest with ties away from zero (RISC-V unprivileged spec
 * section 11.7), back to floats in the same modes, and the flag saves
 * and restores around them. Over steps of 0.37 and of halves (ties).
 * Prints the sums as bits and the flags. Argument: iterations (default
 * 20000). */
#include <math.h>
#include <stdlib.h>
#include "corpus.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    double s = 0;
    float f = 0;
    long t = 0;
    rv_take_fflags();
    for (long i = 0; i < n; i++) {
        double x = i * 0.37 - 1000.5, h = (double)(i % 4001 - 2000) * 0.5;
        s += floor(x) + ceil(x * 0.5) + round(h) + trunc(x * 1.5);
        t += lround(x) + lround(h) + (long)floor(h);
        f += floorf((float)x) + ceilf((float)h) + roundf((float)h);
    }
    PD("sum of doubles", s);
    PF("sum of floats", f);
    printf("sum of integers %ld\n", t);
    printf("fflags %s\n", fflags_str(rv_take_fflags()));
    return 0;
}

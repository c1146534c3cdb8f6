/* printf_float.c: decimal and hexadecimal formatting of floats, doubles and
 * long doubles (binary128 on RV64, done in software by libgcc) through
 * glibc's printf, and parsing back through strtod/strtof/strtold/sscanf.
 * glibc's conversion uses multi-precision integer arithmetic, so this
 * exercises long chains of 64-bit multiplies, divides and carries. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "corpus.h"

static volatile double vals[] = {
    0.0, -0.0, 1.0, 0.1, 0.2, 0.3, 1.0 / 3.0, 2.0 / 3.0, 0.5, 1.5, 2.5, 1e-5, 123.456, 1e15, 1e16, 1e17,
    9007199254740993.0, 1e21, 1e22, 1e23, 1.7976931348623157e308, 2.2250738585072014e-308, 4.9406564584124654e-324,
    -273.15, 6.02214076e23, 299792458.0, 3.141592653589793, 2.718281828459045, 0.000123456789, 1e100, 1e-100,
};
#define N (sizeof vals / sizeof vals[0])

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    printf("== doubles in many formats ==\n");
    for (unsigned i = 0; i < N; i++) {
        double d = vals[i];
        printf("[%f] [%.0f] [%.1f] [%.3f] [%.20f] [%e] [%.0e] [%.15e] [%g] [%.17g] [%#g] [%a] [%.3a]\n", d, d, d, d, d, d,
               d, d, d, d, d, d, d);
        printf("  [%12.4f] [%-12.4f|] [%+.2e] [% g] [%012.3f] [%G] [%E] [%.0g] [%.30g]\n", d, d, d, d, -d, d, d, d, d);
    }
    printf("== floats (promoted) ==\n");
    for (unsigned i = 0; i < N; i++) {
        float f = (float)vals[i];
        printf("%.9g %a %f %e\n", (double)f, (double)f, (double)f, (double)f);
    }
    printf("== rounding of halfway decimals ==\n");
    static volatile double halves[] = {0.125, 0.375, 2.5, 3.5, 0.0625, 1.0005, 1.0015, 1.0025, 1e-7 * 5, 1234.5, 1235.5};
    for (unsigned i = 0; i < sizeof halves / sizeof halves[0]; i++)
        printf("%.2f %.0f %.3g %.1e\n", halves[i], halves[i], halves[i], halves[i]);
    printf("== long double (binary128) ==\n");
    volatile long double ld = 1.0L;
    for (int i = 1; i <= 30; i++) {
        ld = ld * 3.0L / 7.0L + 1.0L / i;
        printf("%2d %.36Lg %La %.10Le\n", i, ld, ld, ld);
    }
    long double pi = 3.14159265358979323846264338327950288L;
    printf("pi %.40Lf sqrtl(2) %.36Lg LDBL_MAX %Lg LDBL_EPSILON %Lg\n", pi, sqrtl(2.0L), LDBL_MAX, LDBL_EPSILON);
    printf("(long double)0.1 %.40Lg (double)(0.1L) %.20g\n", (long double)vals[3], (double)(0.1L));
    printf("== parsing ==\n");
    static const char *texts[] = {"0",        "-0",        "1e-400",   "1e400",          "0x1.8p3",     "inf",
                                  "-Infinity", "nan",      "nan(123)", "2.2250738585072011e-308", "1.00000000000000011102230246251565404236316680908203125",
                                  "1.00000000000000011102230246251565404236316680908203124", "  42.5xyz", "4.9e-324", "2.4703282292062328e-324",
                                  "123456789012345678901234567890", ".5e+2", "1e", "-.e3"};
    for (unsigned i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char *end;
        double d = strtod(texts[i], &end);
        char *endf;
        float f = strtof(texts[i], &endf);
        long double l = strtold(texts[i], NULL);
        printf("strtod(\"%s\") = %016llx %.17g consumed %d ; strtof %08x consumed %d ; strtold %La\n", texts[i],
               (unsigned long long)f64_bits(d), d, (int)(end - texts[i]), f32_bits(f), (int)(endf - texts[i]), l);
    }
    double a, b;
    float c;
    int n = sscanf("3.25 -1e-3 7.5e1", "%lf %lf %f", &a, &b, &c);
    printf("sscanf %d: %g %g %g\n", n, a, b, (double)c);
    printf("== round trip of a pseudo-random sequence ==\n");
    unsigned long long x = 0x9e3779b97f4a7c15ULL, bad = 0, h = FNV_INIT;
    char buf[64];
    for (int i = 0; i < 3000; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        unsigned long long bits = x * 2685821657736338717ULL;
        double d = f64_from(bits);
        if (isnan(d))
            continue;
        snprintf(buf, sizeof buf, "%.17g", d);
        double back = strtod(buf, NULL);
        if (f64_bits(back) != bits)
            bad++;
        h = fnv1a(h, buf, strlen(buf));
    }
    printf("round-trip failures %llu checksum of texts %016llx\n", bad, h);
    return 0;
}

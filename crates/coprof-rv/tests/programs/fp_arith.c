/* fp_arith.c: F and D arithmetic (RISC-V unprivileged spec chapters 11 and
 * 12): add, sub, mul, div, sqrt and the four fused multiply-adds on normal,
 * subnormal, infinite and zero operands, each result printed as bits with
 * the exception flags it raised (fflags, section 11.2), then libm functions
 * built on them. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

static volatile double dv[] = {
    0.0, -0.0, 1.0, -1.0, 0.1, 3.0, 1e308, -1e308, 5e-324, 2.2250738585072014e-308,
    DBL_MAX, DBL_EPSILON, INFINITY, -INFINITY, 1.0 / 3.0, 123456789.0, 1e-300, 2.5,
};
static volatile float fv[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 3.0f, 1e38f, -1e38f, 1e-45f, 1.17549435e-38f,
    FLT_MAX, FLT_EPSILON, INFINITY, -INFINITY, 1.0f / 3.0f, 16777217.0f, 1e-30f, 2.5f,
};
#define ND (sizeof dv / sizeof dv[0])
#define NF (sizeof fv / sizeof fv[0])

static OPAQUE double add_d(double a, double b) { return a + b; }
static OPAQUE double sub_d(double a, double b) { return a - b; }
static OPAQUE double mul_d(double a, double b) { return a * b; }
static OPAQUE double div_d(double a, double b) { return a / b; }
static OPAQUE float add_s(float a, float b) { return a + b; }
static OPAQUE float sub_s(float a, float b) { return a - b; }
static OPAQUE float mul_s(float a, float b) { return a * b; }
static OPAQUE float div_s(float a, float b) { return a / b; }
static OPAQUE double sqrt_d(double a) { return sqrt(a); }
static OPAQUE float sqrt_s(float a) { return sqrtf(a); }

FOP3(fmadd_d, double, "fmadd", "d")
FOP3(fmsub_d, double, "fmsub", "d")
FOP3(fnmadd_d, double, "fnmadd", "d")
FOP3(fnmsub_d, double, "fnmsub", "d")
FOP3(fmadd_s, float, "fmadd", "s")
FOP3(fnmsub_s, float, "fnmsub", "s")

int main(void) {
    rv_take_fflags();
    printf("== double binary ops ==\n");
    for (unsigned i = 0; i < ND; i++) {
        for (unsigned j = 0; j < ND; j++) {
            double a = dv[i], b = dv[j];
            double r;
            unsigned f;
            printf("%a %a", a, b);
            r = add_d(a, b); f = rv_take_fflags(); printf(" +%016llx%s", (unsigned long long)f64_bits(r), fflags_str(f));
            r = sub_d(a, b); f = rv_take_fflags(); printf(" -%016llx%s", (unsigned long long)f64_bits(r), fflags_str(f));
            r = mul_d(a, b); f = rv_take_fflags(); printf(" *%016llx%s", (unsigned long long)f64_bits(r), fflags_str(f));
            r = div_d(a, b); f = rv_take_fflags(); printf(" /%016llx%s\n", (unsigned long long)f64_bits(r), fflags_str(f));
        }
    }
    printf("== float binary ops ==\n");
    for (unsigned i = 0; i < NF; i++) {
        for (unsigned j = 0; j < NF; j++) {
            float a = fv[i], b = fv[j];
            float r;
            unsigned f;
            printf("%a %a", (double)a, (double)b);
            r = add_s(a, b); f = rv_take_fflags(); printf(" +%08x%s", f32_bits(r), fflags_str(f));
            r = sub_s(a, b); f = rv_take_fflags(); printf(" -%08x%s", f32_bits(r), fflags_str(f));
            r = mul_s(a, b); f = rv_take_fflags(); printf(" *%08x%s", f32_bits(r), fflags_str(f));
            r = div_s(a, b); f = rv_take_fflags(); printf(" /%08x%s\n", f32_bits(r), fflags_str(f));
        }
    }
    printf("== sqrt ==\n");
    for (unsigned i = 0; i < ND; i++) {
        double r = sqrt_d(dv[i]);
        unsigned f = rv_take_fflags();
        float s = sqrt_s(fv[i]);
        unsigned g = rv_take_fflags();
        printf("sqrt %a = %016llx %s ; sqrtf %a = %08x %s\n", dv[i], (unsigned long long)f64_bits(r),
               fflags_str(f), (double)fv[i], f32_bits(s), fflags_str(g));
    }
    printf("== fused multiply-add ==\n");
    for (unsigned i = 0; i < ND; i += 2) {
        for (unsigned j = 1; j < ND; j += 3) {
            double a = dv[i], b = dv[j], c = dv[(i + j) % ND];
            double r1 = fmadd_d(a, b, c); unsigned f1 = rv_take_fflags();
            double r2 = fmsub_d(a, b, c); unsigned f2 = rv_take_fflags();
            double r3 = fnmadd_d(a, b, c); unsigned f3 = rv_take_fflags();
            double r4 = fnmsub_d(a, b, c); unsigned f4 = rv_take_fflags();
            printf("%a*%a+%a fmadd %016llx%s fmsub %016llx%s fnmadd %016llx%s fnmsub %016llx%s\n", a, b, c,
                   (unsigned long long)f64_bits(r1), fflags_str(f1), (unsigned long long)f64_bits(r2),
                   fflags_str(f2), (unsigned long long)f64_bits(r3), fflags_str(f3),
                   (unsigned long long)f64_bits(r4), fflags_str(f4));
            float x = fv[i], y = fv[j], z = fv[(i + j) % NF];
            float s1 = fmadd_s(x, y, z); unsigned g1 = rv_take_fflags();
            float s2 = fnmsub_s(x, y, z); unsigned g2 = rv_take_fflags();
            printf("   f: fmadd %08x%s fnmsub %08x%s\n", f32_bits(s1), fflags_str(g1), f32_bits(s2), fflags_str(g2));
        }
    }
    /* fma is exact before its single rounding: 0.1*10-1 differs from a
     * separately rounded product. */
    volatile double t = 0.1, ten = 10.0, one = 1.0;
    PD("fma(0.1,10,-1)", fma(t, ten, -one));
    PD("0.1*10-1", t * ten - one);
    printf("== libm ==\n");
    for (int i = -20; i <= 20; i++) {
        volatile double x = i * 0.37;
        printf("x=%.2f sin %.17g cos %.17g tan %.17g exp %.17g log|x| %.17g pow(x,1.5) %.17g atan2 %.17g cbrt %.17g\n",
               x, sin(x), cos(x), tan(x), exp(x), log(fabs(x)), pow(x, 1.5), atan2(x, 0.7), cbrt(x));
        printf("      sinf %.9g expf %.9g logf %.9g floor %g ceil %g round %g trunc %g rint %g fmod %.17g hypot %.17g\n",
               (double)sinf((float)x), (double)expf((float)x), (double)logf(fabsf((float)x)), floor(x), ceil(x),
               round(x), trunc(x), rint(x), fmod(x, 0.3), hypot(x, 1.25));
    }
    printf("== a long floating loop ==\n");
    double acc = 0.0, v = 1.0;
    float facc = 0.0f;
    for (int i = 1; i < 300000; i++) {
        v = v * 1.0000001 + 1.0 / i;
        acc += sqrt(v) / (i + 0.5);
        facc += (float)i / (facc + 1.0f);
    }
    PD("loop acc", acc);
    PD("loop v", v);
    PF("loop facc", facc);
    return 0;
}

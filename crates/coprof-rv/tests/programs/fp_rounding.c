/* fp_rounding.c: the five rounding modes (RISC-V unprivileged spec section
 * 11.2, table 11.1: RNE, RTZ, RDN, RUP, RMM), set dynamically through
 * fesetround (which writes frm) and statically in the instruction's rm
 * field, and the accrued exception flags read through fetestexcept (which
 * reads fflags). RMM has no C name, so it is reached with inline asm and
 * by writing frm directly. */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "corpus.h"

static volatile double dv[] = {1.0, -1.0, 0.1, -0.1, 2.5, -2.5, 1e308, 3.0, 1e-310, 7.0};
static volatile float fv[] = {1.0f, -1.0f, 0.1f, -0.1f, 2.5f, -2.5f, 3e38f, 3.0f, 1e-40f, 7.0f};
#define N (sizeof dv / sizeof dv[0])

static const struct { int mode; const char *name; } modes[] = {
    {FE_TONEAREST, "RNE"}, {FE_TOWARDZERO, "RTZ"}, {FE_DOWNWARD, "RDN"}, {FE_UPWARD, "RUP"},
};

#define STATIC_RM(rm)                                                                   \
    static double add_##rm(double a, double b) { double r; __asm__ volatile("fadd.d %0,%1,%2," #rm : "=f"(r) : "f"(a), "f"(b)); return r; } \
    static double div_##rm(double a, double b) { double r; __asm__ volatile("fdiv.d %0,%1,%2," #rm : "=f"(r) : "f"(a), "f"(b)); return r; } \
    static float mulf_##rm(float a, float b) { float r; __asm__ volatile("fmul.s %0,%1,%2," #rm : "=f"(r) : "f"(a), "f"(b)); return r; } \
    static float sqrtf_##rm(float a) { float r; __asm__ volatile("fsqrt.s %0,%1," #rm : "=f"(r) : "f"(a)); return r; } \
    static long cvtl_##rm(double a) { long r; __asm__ volatile("fcvt.l.d %0,%1," #rm : "=r"(r) : "f"(a)); return r; } \
    static int cvtw_##rm(float a) { int r; __asm__ volatile("fcvt.w.s %0,%1," #rm : "=r"(r) : "f"(a)); return r; } \
    static float cvtsd_##rm(double a) { float r; __asm__ volatile("fcvt.s.d %0,%1," #rm : "=f"(r) : "f"(a)); return r; } \
    static double cvtdl_##rm(long a) { double r; __asm__ volatile("fcvt.d.l %0,%1," #rm : "=f"(r) : "r"(a)); return r; }
STATIC_RM(rne) STATIC_RM(rtz) STATIC_RM(rdn) STATIC_RM(rup) STATIC_RM(rmm)

static void show_flags(const char *what) {
    int e = fetestexcept(FE_ALL_EXCEPT);
    printf("  %-22s fetestexcept:%s%s%s%s%s\n", what, e & FE_INVALID ? " INVALID" : "",
           e & FE_DIVBYZERO ? " DIVBYZERO" : "", e & FE_OVERFLOW ? " OVERFLOW" : "",
           e & FE_UNDERFLOW ? " UNDERFLOW" : "", e & FE_INEXACT ? " INEXACT" : "");
    feclearexcept(FE_ALL_EXCEPT);
}

/* Computes a table under the current dynamic rounding mode, then prints
 * it. glibc's printf aborts when frm holds RMM (it knows only the four C
 * modes), so `restore` switches back to RNE between computing and
 * printing; the other modes print under their own mode, which also tests
 * that printf's decimal rounding follows frm. */
static void dynamic_round(const char *name, int restore) {
    volatile double third = 1.0 / 3.0;
    unsigned long frm;
    __asm__ volatile("frrm %0" : "=r"(frm));
    double d[N][6];
    float f[N][3];
    long l[N];
    for (unsigned i = 0; i < N; i++) {
        double a = dv[i], b = dv[(i + 3) % N];
        float x = fv[i], y = fv[(i + 3) % N];
        d[i][0] = a + b; d[i][1] = a * b; d[i][2] = a / b; d[i][3] = sqrt(fabs(a));
        d[i][4] = rint(a * 3.5); d[i][5] = nearbyint(a * 3.5); l[i] = lrint(a * 3.5);
        f[i][0] = x + y; f[i][1] = x / y; f[i][2] = (float)(a / 3.0);
    }
    double extra[4] = {third * 3.0, dv[6] * 10.0, -dv[6] * 10.0, dv[8] / 3.0};
    int e = fetestexcept(FE_ALL_EXCEPT);
    if (restore)
        fesetround(FE_TONEAREST);
    printf("mode %s frm=%lu\n", name, frm);
    for (unsigned i = 0; i < N; i++) {
        printf("  %a,%a  + %a  * %a  / %a  sqrt %a  f+ %a f/ %a  rint %a nearbyint %a lrint %ld (float) %a\n", dv[i],
               dv[(i + 3) % N], d[i][0], d[i][1], d[i][2], d[i][3], (double)f[i][0], (double)f[i][1], d[i][4],
               d[i][5], l[i], (double)f[i][2]);
        printf("      decimal: %.3f %.0f %g %.10e %.2f\n", d[i][2], d[i][2] * 1000, d[i][1], d[i][3], (double)f[i][1]);
    }
    printf("  third*3 %a  1e308*10 %a  -1e308*10 %a  tiny/3 %a\n", extra[0], extra[1], extra[2], extra[3]);
    printf("  flags %d\n", e);
    feclearexcept(FE_ALL_EXCEPT);
}

int main(void) {
    feclearexcept(FE_ALL_EXCEPT);
    printf("== dynamic rounding via fesetround ==\n");
    for (unsigned m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        if (fesetround(modes[m].mode) != 0)
            printf("fesetround(%s) failed\n", modes[m].name);
        dynamic_round(modes[m].name, 0);
        fesetround(FE_TONEAREST);
    }
    printf("== dynamic RMM via frm=4 ==\n");
    __asm__ volatile("fsrmi 4");
    dynamic_round("RMM", 1);
    printf("== a bad fesetround ==\n");
    printf("fesetround(12345) -> %d, mode still %d\n", fesetround(12345), fegetround());

    printf("== static rounding modes in the instruction ==\n");
    for (unsigned i = 0; i < N; i++) {
        double a = dv[i], b = dv[(i + 1) % N];
        printf("%a,%a add rne %a rtz %a rdn %a rup %a rmm %a\n", a, b, add_rne(a, b), add_rtz(a, b),
               add_rdn(a, b), add_rup(a, b), add_rmm(a, b));
        printf("   div rne %a rtz %a rdn %a rup %a rmm %a\n", div_rne(a, b), div_rtz(a, b), div_rdn(a, b),
               div_rup(a, b), div_rmm(a, b));
        float x = fv[i], y = fv[(i + 1) % N];
        printf("   mulf rne %a rtz %a rdn %a rup %a rmm %a\n", (double)mulf_rne(x, y), (double)mulf_rtz(x, y),
               (double)mulf_rdn(x, y), (double)mulf_rup(x, y), (double)mulf_rmm(x, y));
        printf("   sqrtf rne %a rtz %a rdn %a rup %a rmm %a\n", (double)sqrtf_rne(fabsf(x)),
               (double)sqrtf_rtz(fabsf(x)), (double)sqrtf_rdn(fabsf(x)), (double)sqrtf_rup(fabsf(x)),
               (double)sqrtf_rmm(fabsf(x)));
        printf("   fcvt.s.d rne %a rtz %a rdn %a rup %a rmm %a\n", (double)cvtsd_rne(a / 3), (double)cvtsd_rtz(a / 3),
               (double)cvtsd_rdn(a / 3), (double)cvtsd_rup(a / 3), (double)cvtsd_rmm(a / 3));
    }
    static volatile double halves[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -2.5001, 1e19, -1e19, 4503599627370497.5};
    for (unsigned i = 0; i < sizeof halves / sizeof halves[0]; i++) {
        double h = halves[i];
        printf("fcvt.l.d %a: rne %ld rtz %ld rdn %ld rup %ld rmm %ld | fcvt.w.s rne %d rtz %d rdn %d rup %d rmm %d\n", h,
               cvtl_rne(h), cvtl_rtz(h), cvtl_rdn(h), cvtl_rup(h), cvtl_rmm(h), cvtw_rne((float)h),
               cvtw_rtz((float)h), cvtw_rdn((float)h), cvtw_rup((float)h), cvtw_rmm((float)h));
    }
    static volatile long bigs[] = {(1L << 53) + 1, (1L << 54) + 3, -((1L << 53) + 1), 0x7fffffffffffffffL, -0x7fffffffffffffffL};
    for (unsigned i = 0; i < sizeof bigs / sizeof bigs[0]; i++) {
        long b = bigs[i];
        printf("fcvt.d.l %ld: rne %a rtz %a rdn %a rup %a rmm %a\n", b, cvtdl_rne(b), cvtdl_rtz(b), cvtdl_rdn(b),
               cvtdl_rup(b), cvtdl_rmm(b));
    }

    printf("== exception flags via fetestexcept ==\n");
    feclearexcept(FE_ALL_EXCEPT);
    show_flags("nothing");
    volatile double zero = 0.0, one = 1.0, big = 1e308, tiny = 1e-308;
    volatile double r;
    r = one / zero; show_flags("1/0");
    r = zero / zero; show_flags("0/0");
    r = big * big; show_flags("1e308*1e308");
    r = tiny * tiny; show_flags("1e-308*1e-308");
    r = one / 3.0; show_flags("1/3");
    r = one + one; show_flags("1+1");
    r = sqrt(-one); show_flags("sqrt(-1)");
    r = tiny / 3.0; show_flags("1e-308/3");
    r = 0x1p-1022 * 0.5; show_flags("min normal/2 exact");
    (void)r;
    feraiseexcept(FE_OVERFLOW | FE_INEXACT);
    show_flags("feraiseexcept(OF|NX)");
    fexcept_t saved;
    r = one / zero;
    fegetexceptflag(&saved, FE_ALL_EXCEPT);
    feclearexcept(FE_ALL_EXCEPT);
    fesetexceptflag(&saved, FE_DIVBYZERO);
    show_flags("restored DZ only");
    fenv_t env;
    fesetround(FE_UPWARD);
    r = one / zero;
    feholdexcept(&env);
    printf("  after feholdexcept: round %d flags %d\n", fegetround(), fetestexcept(FE_ALL_EXCEPT));
    fesetround(FE_DOWNWARD);
    r = zero / zero;
    feupdateenv(&env);
    printf("  after feupdateenv: round %d\n", fegetround());
    show_flags("merged flags");
    fesetround(FE_TONEAREST);
    unsigned long fcsr;
    __asm__ volatile("fscsr %0, %1" : "=r"(fcsr) : "r"(0xffUL));
    __asm__ volatile("frcsr %0" : "=r"(fcsr));
    printf("fcsr after writing 0xff reads %#lx\n", fcsr);
    __asm__ volatile("fscsr zero");
    __asm__ volatile("csrrs %0, fflags, %1" : "=r"(fcsr) : "r"(0x3UL));
    __asm__ volatile("frflags %0" : "=r"(fcsr));
    printf("fflags after csrrs 3 reads %#lx\n", fcsr);
    __asm__ volatile("csrrci %0, fflags, 1" : "=r"(fcsr));
    __asm__ volatile("frflags %0" : "=r"(fcsr));
    printf("fflags after csrrci 1 reads %#lx\n", fcsr);
    __asm__ volatile("fsrmi %0, 3" : "=r"(fcsr));
    __asm__ volatile("frcsr %0" : "=r"(fcsr));
    printf("fcsr after fsrmi 3 reads %#lx\n", fcsr);
    __asm__ volatile("fscsr zero");
    return 0;
}

/* fp_convert.c: conversions between integers and floats (RISC-V
 * unprivileged spec sections 11.7 and 12.5). Out-of-range and NaN inputs
 * saturate as table 11.4 says (NaN and +inf give the largest value, -inf the
 * smallest, with the invalid flag), which C leaves undefined, so they go
 * through inline fcvt. Also int-to-float rounding, float<->double, moves
 * between register files (fmv.x.w sign-extends) and NaN boxing of singles
 * held in 64-bit registers (section 12.2). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

#define CVT_TO_INT(name, ins, T, FT)                                                  \
    static OPAQUE T name(FT a) { T r; __asm__ volatile(ins " %0,%1,rtz" : "=r"(r) : "f"(a)); return r; }
CVT_TO_INT(cvt_w_d, "fcvt.w.d", int64_t, double)
CVT_TO_INT(cvt_wu_d, "fcvt.wu.d", int64_t, double)
CVT_TO_INT(cvt_l_d, "fcvt.l.d", int64_t, double)
CVT_TO_INT(cvt_lu_d, "fcvt.lu.d", int64_t, double)
CVT_TO_INT(cvt_w_s, "fcvt.w.s", int64_t, float)
CVT_TO_INT(cvt_wu_s, "fcvt.wu.s", int64_t, float)
CVT_TO_INT(cvt_l_s, "fcvt.l.s", int64_t, float)
CVT_TO_INT(cvt_lu_s, "fcvt.lu.s", int64_t, float)

static OPAQUE float s_l(int64_t v) { return (float)v; }
static OPAQUE double d_l(int64_t v) { return (double)v; }
static OPAQUE float s_lu(int64_t v) { return (float)(uint64_t)v; }
static OPAQUE double d_lu(int64_t v) { return (double)(uint64_t)v; }
static OPAQUE float s_w(int64_t v) { return (float)(int32_t)v; }
static OPAQUE double d_wu(int64_t v) { return (double)(uint32_t)v; }
static OPAQUE float s_d(double v) { return (float)v; }
static OPAQUE double d_s(float v) { return (double)v; }

static volatile double dsrc[] = {
    0.0, -0.0, 0.9, -0.9, 1.5, -1.5, 2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0,
    -2147483649.0, 4294967295.0, 4294967296.0, 9.2233720368547748e18, 9.2233720368547758e18,
    -9.2233720368547758e18, -9.2233720368547779e18, 1.8446744073709550e19, 1.8446744073709552e19,
    1e30, -1e30, INFINITY, -INFINITY, NAN, -NAN, 5e-324, -1.0,
};

int main(void) {
    rv_take_fflags();
    printf("== double -> integer (rtz), saturating ==\n");
    for (unsigned i = 0; i < sizeof dsrc / sizeof dsrc[0]; i++) {
        double d = dsrc[i];
        int64_t a = cvt_w_d(d); unsigned fa = rv_take_fflags();
        int64_t b = cvt_wu_d(d); unsigned fb = rv_take_fflags();
        int64_t c = cvt_l_d(d); unsigned fc = rv_take_fflags();
        int64_t e = cvt_lu_d(d); unsigned fe = rv_take_fflags();
        printf("%-24a w %016llx %s wu %016llx %s l %016llx %s lu %016llx %s\n", d, (unsigned long long)a,
               fflags_str(fa), (unsigned long long)b, fflags_str(fb), (unsigned long long)c, fflags_str(fc),
               (unsigned long long)e, fflags_str(fe));
    }
    printf("== float -> integer (rtz), saturating ==\n");
    for (unsigned i = 0; i < sizeof dsrc / sizeof dsrc[0]; i++) {
        float f = (float)dsrc[i];
        rv_take_fflags();
        int64_t a = cvt_w_s(f); unsigned fa = rv_take_fflags();
        int64_t b = cvt_wu_s(f); unsigned fb = rv_take_fflags();
        int64_t c = cvt_l_s(f); unsigned fc = rv_take_fflags();
        int64_t e = cvt_lu_s(f); unsigned fe = rv_take_fflags();
        printf("%-16a w %016llx %s wu %016llx %s l %016llx %s lu %016llx %s\n", (double)f, (unsigned long long)a,
               fflags_str(fa), (unsigned long long)b, fflags_str(fb), (unsigned long long)c, fflags_str(fc),
               (unsigned long long)e, fflags_str(fe));
    }
    printf("== C conversions where defined ==\n");
    for (unsigned i = 0; i < sizeof dsrc / sizeof dsrc[0]; i++) {
        double d = dsrc[i];
        if (!(d > -2147483649.0 && d < 2147483648.0))
            continue;
        printf("%a (int)%d (long)%ld (short)%d (float)%a lround %ld llrint %lld\n", d, (int)d, (long)d,
               (short)(int)d, (double)(float)d, lround(d), llrint(d));
    }
    printf("== integer -> float, rounding to nearest ==\n");
    static volatile int64_t isrc[] = {0, 1, -1, 16777217, -16777217, 16777219, 2147483647, -2147483647 - 1,
                                      (1LL << 53) + 1, (1LL << 53) + 3, INT64_MAX, INT64_MIN, -3};
    for (unsigned i = 0; i < sizeof isrc / sizeof isrc[0]; i++) {
        int64_t v = isrc[i];
        float f1 = s_l(v); unsigned g1 = rv_take_fflags();
        double d1 = d_l(v); unsigned g2 = rv_take_fflags();
        float f2 = s_lu(v); unsigned g3 = rv_take_fflags();
        double d2 = d_lu(v); unsigned g4 = rv_take_fflags();
        float f3 = s_w(v); unsigned g5 = rv_take_fflags();
        double d3 = d_wu(v); unsigned g6 = rv_take_fflags();
        printf("%lld s.l %08x%s d.l %016llx%s s.lu %08x%s d.lu %016llx%s s.w %08x%s d.wu %016llx%s\n", (long long)v,
               f32_bits(f1), fflags_str(g1), (unsigned long long)f64_bits(d1), fflags_str(g2), f32_bits(f2),
               fflags_str(g3), (unsigned long long)f64_bits(d2), fflags_str(g4), f32_bits(f3), fflags_str(g5),
               (unsigned long long)f64_bits(d3), fflags_str(g6));
    }
    printf("== double <-> float ==\n");
    static volatile double dd[] = {0.1, 1e39, -1e39, 1e-46, 1.4e-45, 3.4028235677973366e38, 3.4028235e38,
                                   NAN, INFINITY, 1.0 + 0x1p-24, 1.0 + 0x1p-23 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-40};
    for (unsigned i = 0; i < sizeof dd / sizeof dd[0]; i++) {
        float f = s_d(dd[i]); unsigned g = rv_take_fflags();
        double back = d_s(f); unsigned h = rv_take_fflags();
        printf("%-26a -> %08x %s -> %016llx %s\n", dd[i], f32_bits(f), fflags_str(g), (unsigned long long)f64_bits(back),
               fflags_str(h));
    }
    /* A signalling NaN single widens to the canonical double NaN with NV. */
    volatile float snan = f32_from(0x7f800001);
    rv_take_fflags();
    double w = d_s(snan); unsigned g = rv_take_fflags();
    printf("sNaN float -> double %016llx %s\n", (unsigned long long)f64_bits(w), fflags_str(g));
    volatile double snand = f64_from(0x7ff0000000000001ULL);
    rv_take_fflags();
    float n = s_d(snand); g = rv_take_fflags();
    printf("sNaN double -> float %08x %s\n", f32_bits(n), fflags_str(g));

    printf("== fmv between register files ==\n");
    static volatile uint64_t raw[] = {0x3f800000, 0x80000000, 0xffffffff, 0x7fc00001, 0x123456789abcdef0ULL};
    for (unsigned i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        uint64_t r = raw[i], xw, xd;
        __asm__ volatile("fmv.w.x ft0,%1\n\tfmv.x.w %0,ft0" : "=r"(xw) : "r"(r) : "ft0");
        __asm__ volatile("fmv.d.x ft0,%1\n\tfmv.x.d %0,ft0" : "=r"(xd) : "r"(r) : "ft0");
        printf("%016llx fmv.x.w(fmv.w.x) %016llx fmv.x.d(fmv.d.x) %016llx\n", (unsigned long long)r,
               (unsigned long long)xw, (unsigned long long)xd);
    }
    printf("== NaN boxing ==\n");
    /* fmv.w.x writes the single with the upper 32 bits all ones; reading it
     * as a double shows the box. */
    uint64_t boxed;
    __asm__ volatile("fmv.w.x ft0,%1\n\tfmv.x.d %0,ft0" : "=r"(boxed) : "r"(0x40490fdbUL) : "ft0");
    printf("fmv.w.x then fmv.x.d: %016llx\n", (unsigned long long)boxed);
    static volatile uint64_t unboxed[] = {0x000000003f800000ULL, 0xfffffffe3f800000ULL, 0xffffffff3f800000ULL,
                                          0x7ff0000040000000ULL};
    for (unsigned i = 0; i < sizeof unboxed / sizeof unboxed[0]; i++) {
        uint64_t in = unboxed[i], sum, cls, mv, sgn;
        __asm__ volatile("fmv.d.x ft0,%2\n\tfadd.s ft1,ft0,ft0\n\tfmv.x.w %0,ft1\n\tfclass.s %1,ft0"
                         : "=r"(sum), "=r"(cls) : "r"(in) : "ft0", "ft1");
        __asm__ volatile("fmv.d.x ft0,%1\n\tfmv.x.w %0,ft0" : "=r"(mv) : "r"(in) : "ft0");
        __asm__ volatile("fmv.d.x ft0,%1\n\tfsgnj.s ft1,ft0,ft0\n\tfmv.x.d %0,ft1" : "=r"(sgn) : "r"(in) : "ft0", "ft1");
        unsigned fl = rv_take_fflags();
        printf("%016llx as single: x+x %016llx fclass %#llx fmv.x.w %016llx fsgnj.s(box) %016llx %s\n",
               (unsigned long long)in, (unsigned long long)sum, (unsigned long long)cls, (unsigned long long)mv,
               (unsigned long long)sgn, fflags_str(fl));
    }
    printf("== flw/fsw keep bits ==\n");
    static volatile uint32_t mem32[4] = {0x7f800001, 0xffc00000, 0x00000001, 0x80000000};
    volatile uint32_t out32[4];
    for (int i = 0; i < 4; i++) {
        __asm__ volatile("flw ft0,0(%1)\n\tfsw ft0,0(%0)" : : "r"(&out32[i]), "r"(&mem32[i]) : "ft0", "memory");
        printf("flw/fsw %08x -> %08x\n", mem32[i], out32[i]);
    }
    return 0;
}

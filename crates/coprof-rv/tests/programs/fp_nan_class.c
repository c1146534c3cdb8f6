/* fp_nan_class.c: NaNs and the operations that treat them specially
 * (RISC-V unprivileged spec chapter 11): canonical NaN results (section
 * 11.3), fmin/fmax (section 11.6: a single NaN operand yields the other
 * operand, -0 < +0, signalling NaNs raise NV), quiet and signalling
 * comparisons feq/flt/fle (section 11.8), sign injection, and fclass's ten
 * classes (section 11.9). Each operation is shown on every pair of a
 * set of special values with the flags it raised. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

#define BIN_D(name, ins)                                                                      \
    static OPAQUE uint64_t name(uint64_t a, uint64_t b) {                                    \
        uint64_t r;                                                                           \
        __asm__ volatile("fmv.d.x ft0,%1\n\tfmv.d.x ft1,%2\n\t" ins " ft2,ft0,ft1\n\tfmv.x.d %0,ft2" \
                         : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1", "ft2");                   \
        return r;                                                                             \
    }
#define BIN_S(name, ins)                                                                      \
    static OPAQUE uint64_t name(uint64_t a, uint64_t b) {                                    \
        uint64_t r;                                                                           \
        __asm__ volatile("fmv.w.x ft0,%1\n\tfmv.w.x ft1,%2\n\t" ins " ft2,ft0,ft1\n\tfmv.x.w %0,ft2" \
                         : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1", "ft2");                   \
        return r;                                                                             \
    }
#define CMP(name, ins, mv)                                                                    \
    static OPAQUE uint64_t name(uint64_t a, uint64_t b) {                                    \
        uint64_t r;                                                                           \
        __asm__ volatile(mv " ft0,%1\n\t" mv " ft1,%2\n\t" ins " %0,ft0,ft1"                  \
                         : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1");                           \
        return r;                                                                             \
    }
BIN_D(fmin_d, "fmin.d") BIN_D(fmax_d, "fmax.d") BIN_D(fadd_d, "fadd.d") BIN_D(fmul_d, "fmul.d")
BIN_D(fsgnj_d, "fsgnj.d") BIN_D(fsgnjn_d, "fsgnjn.d") BIN_D(fsgnjx_d, "fsgnjx.d")
BIN_S(fmin_s, "fmin.s") BIN_S(fmax_s, "fmax.s") BIN_S(fadd_s, "fadd.s") BIN_S(fdiv_s, "fdiv.s")
BIN_S(fsgnjn_s, "fsgnjn.s")
CMP(feq_d, "feq.d", "fmv.d.x") CMP(flt_d, "flt.d", "fmv.d.x") CMP(fle_d, "fle.d", "fmv.d.x")
CMP(feq_s, "feq.s", "fmv.w.x") CMP(flt_s, "flt.s", "fmv.w.x") CMP(fle_s, "fle.s", "fmv.w.x")

static OPAQUE uint64_t fclass_d(uint64_t a) {
    uint64_t r;
    __asm__ volatile("fmv.d.x ft0,%1\n\tfclass.d %0,ft0" : "=r"(r) : "r"(a) : "ft0");
    return r;
}
static OPAQUE uint64_t fclass_s(uint64_t a) {
    uint64_t r;
    __asm__ volatile("fmv.w.x ft0,%1\n\tfclass.s %0,ft0" : "=r"(r) : "r"(a) : "ft0");
    return r;
}

static const uint64_t D[] = {
    0x0000000000000000ULL, 0x8000000000000000ULL, 0x3ff0000000000000ULL, 0xbff0000000000000ULL,
    0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0x7ff8000000000000ULL, 0xfff8000000000001ULL,
    0x7ff0000000000001ULL, 0xfff4000000000000ULL, 0x0000000000000001ULL, 0x800fffffffffffffULL,
    0x7fefffffffffffffULL, 0x0010000000000000ULL,
};
static const uint32_t S[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
    0x7f800001, 0xffa00000, 0x00000001, 0x807fffff, 0x7f7fffff, 0x00800000,
};
#define ND (sizeof D / sizeof D[0])
#define NS (sizeof S / sizeof S[0])

static const char *class_name(uint64_t c) {
    static const char *names[] = {"-inf", "-normal", "-subnormal", "-0", "+0", "+subnormal", "+normal",
                                  "+inf", "sNaN", "qNaN"};
    for (int i = 0; i < 10; i++)
        if (c == (1ULL << i))
            return names[i];
    return "?";
}

int main(void) {
    rv_take_fflags();
    printf("== fclass ==\n");
    for (unsigned i = 0; i < ND; i++) {
        uint64_t c = fclass_d(D[i]);
        uint64_t s = fclass_s(S[i]);
        printf("d %016llx %#5llx %-10s  s %08x %#5llx %-10s\n", (unsigned long long)D[i], (unsigned long long)c,
               class_name(c), S[i], (unsigned long long)s, class_name(s));
    }
    printf("== double pairs: fmin fmax fadd fmul feq flt fle fsgnj fsgnjn fsgnjx ==\n");
    for (unsigned i = 0; i < ND; i++) {
        for (unsigned j = 0; j < ND; j++) {
            uint64_t a = D[i], b = D[j];
            unsigned long long r[10];
            unsigned f[10];
            r[0] = fmin_d(a, b); f[0] = rv_take_fflags();
            r[1] = fmax_d(a, b); f[1] = rv_take_fflags();
            r[2] = fadd_d(a, b); f[2] = rv_take_fflags();
            r[3] = fmul_d(a, b); f[3] = rv_take_fflags();
            r[4] = feq_d(a, b); f[4] = rv_take_fflags();
            r[5] = flt_d(a, b); f[5] = rv_take_fflags();
            r[6] = fle_d(a, b); f[6] = rv_take_fflags();
            r[7] = fsgnj_d(a, b); f[7] = rv_take_fflags();
            r[8] = fsgnjn_d(a, b); f[8] = rv_take_fflags();
            r[9] = fsgnjx_d(a, b); f[9] = rv_take_fflags();
            printf("%016llx %016llx", (unsigned long long)a, (unsigned long long)b);
            for (int k = 0; k < 10; k++)
                printf(" %llx/%s", r[k], fflags_str(f[k]));
            printf("\n");
        }
    }
    printf("== single pairs: fmin fmax fadd fdiv feq flt fle fsgnjn ==\n");
    for (unsigned i = 0; i < NS; i++) {
        for (unsigned j = 0; j < NS; j++) {
            uint64_t a = S[i], b = S[j];
            unsigned long long r[8];
            unsigned f[8];
            r[0] = fmin_s(a, b); f[0] = rv_take_fflags();
            r[1] = fmax_s(a, b); f[1] = rv_take_fflags();
            r[2] = fadd_s(a, b); f[2] = rv_take_fflags();
            r[3] = fdiv_s(a, b); f[3] = rv_take_fflags();
            r[4] = feq_s(a, b); f[4] = rv_take_fflags();
            r[5] = flt_s(a, b); f[5] = rv_take_fflags();
            r[6] = fle_s(a, b); f[6] = rv_take_fflags();
            r[7] = fsgnjn_s(a, b); f[7] = rv_take_fflags();
            printf("%08llx %08llx", (unsigned long long)a, (unsigned long long)b);
            for (int k = 0; k < 8; k++)
                printf(" %llx/%s", r[k], fflags_str(f[k]));
            printf("\n");
        }
    }
    printf("== C library on NaNs ==\n");
    volatile double qn = NAN, one = 1.0, inf = INFINITY, mz = -0.0;
    printf("isnan %d isinf %d signbit(-nan) %d fmin(nan,1) %g fmax(1,nan) %g fmin(-0,0) %g fmax(-0,0) %g\n", isnan(qn),
           isinf(inf), signbit(-qn) != 0, fmin(qn, one), fmax(one, qn), fmin(mz, 0.0), fmax(mz, 0.0));
    printf("nan==nan %d nan<1 %d nan!=nan %d isunordered %d isless %d copysign(1,-0) %g nan(\"7\") %016llx\n",
           qn == qn, qn < one, qn != qn, isunordered(qn, one), isless(qn, one), copysign(one, mz),
           (unsigned long long)f64_bits(nan("7")));
    printf("inf-inf %016llx 0*inf %016llx inf/inf %016llx fmod(1,0) %016llx\n",
           (unsigned long long)f64_bits(inf - inf), (unsigned long long)f64_bits(0.0 * inf),
           (unsigned long long)f64_bits(inf / inf), (unsigned long long)f64_bits(fmod(one, 0.0)));
    printf("printf: %f %e %g %a %F %E %G %A\n", qn, -qn, inf, -inf, qn, inf, -inf, qn);
    return 0;
}

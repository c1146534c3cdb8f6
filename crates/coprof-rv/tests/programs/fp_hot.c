/* fp_hot.c: F and D arithmetic, square roots, minimum and maximum,
 * compares and conversions (RISC-V unprivileged spec chapters 11 and 12)
 * run often enough to be hot: each op over 2,000 generated operands, most of them ordinary numbers, the
 * rest small integers, subnormals, numbers near overflow, zeros,
 * infinities and NaNs; per op a checksum of every result's bits and the
 * flags it raised (fflags, section 11.2), in the dynamic rounding mode
 * round-to-nearest, then again toward zero and upward. Conversions from
 * and to integers run in the static modes too (down, up, to nearest with
 * ties away from zero), as libm's floor, ceil and round use them, over
 * numbers and over halves (ties). */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

enum { ROUNDS = 2000 };

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state ^ (state >> 29);
}

/* A double: exponent bits chosen by class, any mantissa and sign. */
static double gen_d(void) {
    uint64_t r = next(), m = next() & 0x800fffffffffffffull;
    unsigned c = r % 20, e;
    if (c < 12)
        e = 1023 - 40 + (unsigned)(r >> 8) % 80;
    else if (c < 14)
        return (double)((int64_t)(r >> 8) % 2000 - 1000);
    else if (c < 16)
        e = (unsigned)(r >> 8) % 90; /* subnormals and the smallest normals */
    else if (c < 18)
        e = 2046 - (unsigned)(r >> 8) % 80; /* near overflow */
    else {
        static const uint64_t special[] = {
            0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
            0x7ff8000000000000ull, 0x7ff4000000000000ull, 0x3ff0000000000000ull,
            0x4340000000000000ull, /* 2^53 */
            0x43e0000000000000ull, /* 2^63 */
            0xc1e0000000000000ull, /* -2^31 */
        };
        return f64_from(special[(r >> 8) % (sizeof special / sizeof special[0])]);
    }
    return f64_from(m | (uint64_t)e << 52);
}

static float gen_s(void) {
    uint64_t r = next();
    uint32_t m = (uint32_t)next() & 0x807fffffu;
    unsigned c = r % 20, e;
    if (c < 12)
        e = 127 - 20 + (unsigned)(r >> 8) % 40;
    else if (c < 14)
        return (float)((int32_t)((r >> 8) % 2000) - 1000);
    else if (c < 16)
        e = (unsigned)(r >> 8) % 30;
    else if (c < 18)
        e = 254 - (unsigned)(r >> 8) % 30;
    else {
        static const uint32_t special[] = {
            0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
            0x7fa00000u, 0x3f800000u, 0x4b800000u, 0x5f000000u, 0xcf000000u,
        };
        return f32_from(special[(r >> 8) % (sizeof special / sizeof special[0])]);
    }
    return f32_from(m | e << 23);
}

static int64_t gen_i(void) {
    uint64_t r = next();
    switch (r % 4) {
    case 0:
        return (int64_t)(r >> 8) % 200000 - 100000;
    case 1:
        return (int64_t)next();
    case 2:
        return (int64_t)((1ull << 53) + (r >> 40));
    default:
        return (int32_t)next();
    }
}

#define FOP2_RNE(name, T, ins, suf)                                         \
    static OPAQUE T name(T a, T b) {                                        \
        T r;                                                                \
        __asm__ volatile(ins "." suf " %0,%1,%2,rne" : "=f"(r) : "f"(a), "f"(b)); \
        return r;                                                           \
    }

static OPAQUE double add_d(double a, double b) { return a + b; }
static OPAQUE double sub_d(double a, double b) { return a - b; }
static OPAQUE double mul_d(double a, double b) { return a * b; }
static OPAQUE double div_d(double a, double b) { return a / b; }
static OPAQUE float add_s(float a, float b) { return a + b; }
static OPAQUE float sub_s(float a, float b) { return a - b; }
static OPAQUE float mul_s(float a, float b) { return a * b; }
static OPAQUE float div_s(float a, float b) { return a / b; }
FOP2_RNE(add_d_rne, double, "fadd", "d")
FOP2_RNE(mul_s_rne, float, "fmul", "s")
FOP3(fmadd_d, double, "fmadd", "d")
FOP3(fmsub_d, double, "fmsub", "d")
FOP3(fnmadd_d, double, "fnmadd", "d")
FOP3(fnmsub_d, double, "fnmsub", "d")
FOP3(fmadd_s, float, "fmadd", "s")
FOP3(fmsub_s, float, "fmsub", "s")
FOP3(fnmadd_s, float, "fnmadd", "s")
FOP3(fnmsub_s, float, "fnmsub", "s")
static OPAQUE long lt_d(double a, double b) { return a < b; }
static OPAQUE long le_d(double a, double b) { return a <= b; }
static OPAQUE long eq_d(double a, double b) { return a == b; }
static OPAQUE long lt_s(float a, float b) { return a < b; }
static OPAQUE long le_s(float a, float b) { return a <= b; }
static OPAQUE long eq_s(float a, float b) { return a == b; }
static OPAQUE int64_t d_to_w(double a) { return (int32_t)a; }
static OPAQUE int64_t d_to_l(double a) { return (int64_t)a; }
static OPAQUE int64_t s_to_w(float a) { return (int32_t)a; }
static OPAQUE int64_t s_to_l(float a) { return (int64_t)a; }
static OPAQUE uint64_t d_to_wu(double a) { return (uint32_t)a; }
static OPAQUE uint64_t d_to_lu(double a) { return (uint64_t)a; }
static OPAQUE uint64_t s_to_wu(float a) { return (uint32_t)a; }
static OPAQUE uint64_t s_to_lu(float a) { return (uint64_t)a; }
/* lrint, llrint: the dynamic rounding mode. */
static OPAQUE int64_t d_to_l_dyn(double a) {
    int64_t r;
    __asm__ volatile("fcvt.l.d %0,%1,dyn" : "=r"(r) : "f"(a));
    return r;
}
static OPAQUE int64_t s_to_w_dyn(float a) {
    int64_t r;
    __asm__ volatile("fcvt.w.s %0,%1,dyn" : "=r"(r) : "f"(a));
    return r;
}
/* Conversions in a static rounding mode (section 11.7). */
#define CVT_TO_INT(name, T, ins, rm)                                        \
    static OPAQUE int64_t name(T a) {                                       \
        int64_t r;                                                          \
        __asm__ volatile(ins " %0,%1," rm : "=r"(r) : "f"(a));              \
        return r;                                                           \
    }
#define CVT_FROM_INT(name, T, ins, rm)                                      \
    static OPAQUE T name(int64_t v) {                                       \
        T r;                                                                \
        __asm__ volatile(ins " %0,%1," rm : "=f"(r) : "r"(v));              \
        return r;                                                           \
    }
CVT_TO_INT(d_to_l_rdn, double, "fcvt.l.d", "rdn")
CVT_TO_INT(d_to_l_rup, double, "fcvt.l.d", "rup")
CVT_TO_INT(d_to_l_rmm, double, "fcvt.l.d", "rmm")
CVT_TO_INT(d_to_w_rdn, double, "fcvt.w.d", "rdn")
CVT_TO_INT(d_to_wu_rup, double, "fcvt.wu.d", "rup")
CVT_TO_INT(d_to_lu_rmm, double, "fcvt.lu.d", "rmm")
CVT_TO_INT(s_to_w_rdn, float, "fcvt.w.s", "rdn")
CVT_TO_INT(s_to_w_rup, float, "fcvt.w.s", "rup")
CVT_TO_INT(s_to_l_rmm, float, "fcvt.l.s", "rmm")
CVT_TO_INT(s_to_lu_rdn, float, "fcvt.lu.s", "rdn")
CVT_FROM_INT(l_to_d_rdn, double, "fcvt.d.l", "rdn")
CVT_FROM_INT(lu_to_d_rup, double, "fcvt.d.lu", "rup")
CVT_FROM_INT(w_to_s_rmm, float, "fcvt.s.w", "rmm")
CVT_FROM_INT(l_to_s_rtz, float, "fcvt.s.l", "rtz")
static OPAQUE double floor_d(double a) { return floor(a); }
static OPAQUE double ceil_d(double a) { return ceil(a); }
static OPAQUE double round_d(double a) { return round(a); }
static OPAQUE int64_t lround_d(double a) { return lround(a); }
static OPAQUE float floor_s(float a) { return floorf(a); }
static OPAQUE float roundf_s(float a) { return roundf(a); }
static OPAQUE double w_to_d(int64_t v) { return (double)(int32_t)v; }
static OPAQUE double wu_to_d(int64_t v) { return (double)(uint32_t)v; }
static OPAQUE double l_to_d(int64_t v) { return (double)v; }
static OPAQUE double lu_to_d(int64_t v) { return (double)(uint64_t)v; }
static OPAQUE float w_to_s(int64_t v) { return (float)(int32_t)v; }
static OPAQUE float wu_to_s(int64_t v) { return (float)(uint32_t)v; }
static OPAQUE float l_to_s(int64_t v) { return (float)v; }
static OPAQUE float lu_to_s(int64_t v) { return (float)(uint64_t)v; }
static OPAQUE float d_to_s(double a) { return (float)a; }
static OPAQUE double s_to_d(float a) { return (double)a; }
static OPAQUE float neg_s(float a) { return -a; }
static OPAQUE float abs_s(float a) { return __builtin_fabsf(a); }
static OPAQUE float sign_s(float a, float b) { return __builtin_copysignf(a, b); }
static OPAQUE double sqrt_d(double a) { return __builtin_sqrt(a); }
static OPAQUE float sqrt_s(float a) { return __builtin_sqrtf(a); }
static OPAQUE double min_d(double a, double b) { return __builtin_fmin(a, b); }
static OPAQUE double max_d(double a, double b) { return __builtin_fmax(a, b); }
static OPAQUE float min_s(float a, float b) { return __builtin_fminf(a, b); }
static OPAQUE float max_s(float a, float b) { return __builtin_fmaxf(a, b); }
static OPAQUE int64_t bits_s(float a) {
    int64_t r;
    __asm__ volatile("fmv.x.w %0,%1" : "=r"(r) : "f"(a));
    return r;
}

/* The checksum of one op: its results' bits and flags, in order. */
struct sum {
    uint64_t h;
    unsigned flags;
};

static void add(struct sum *s, uint64_t bits) {
    unsigned f = rv_take_fflags();
    uint64_t h = (s->h ^ bits) + f;
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finaliser */
    s->h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    s->flags |= f;
}

static void show(const char *name, const struct sum *s) {
    printf("%-10s %016llx%s\n", name, (unsigned long long)s->h, fflags_str(s->flags));
}

#define RUN(name, expr)                                     \
    do {                                                    \
        struct sum s = {0xcbf29ce484222325ull, 0};          \
        state = 0x9e3779b97f4a7c15ull;                      \
        for (unsigned i = 0; i < ROUNDS; i++) {             \
            double xd = gen_d(), yd = gen_d(), zd = gen_d(); \
            float xs = gen_s(), ys = gen_s(), zs = gen_s(); \
            int64_t v = gen_i();                            \
            double hd = (double)(v % 4001) * 0.5;           \
            float hs = (float)(v % 401) * 0.5f;             \
            (void)xd, (void)yd, (void)zd, (void)xs;         \
            (void)ys, (void)zs, (void)v, (void)hd, (void)hs; \
            rv_take_fflags();                               \
            add(&s, (expr));                                \
        }                                                   \
        show(name, &s);                                     \
    } while (0)

static void all(void) {
    RUN("add.d", f64_bits(add_d(xd, yd)));
    RUN("sub.d", f64_bits(sub_d(xd, yd)));
    RUN("mul.d", f64_bits(mul_d(xd, yd)));
    RUN("div.d", f64_bits(div_d(xd, yd)));
    RUN("add.d rne", f64_bits(add_d_rne(xd, yd)));
    RUN("fmadd.d", f64_bits(fmadd_d(xd, yd, zd)));
    RUN("fmsub.d", f64_bits(fmsub_d(xd, yd, zd)));
    RUN("fnmadd.d", f64_bits(fnmadd_d(xd, yd, zd)));
    RUN("fnmsub.d", f64_bits(fnmsub_d(xd, yd, zd)));
    RUN("add.s", f32_bits(add_s(xs, ys)));
    RUN("sub.s", f32_bits(sub_s(xs, ys)));
    RUN("mul.s", f32_bits(mul_s(xs, ys)));
    RUN("div.s", f32_bits(div_s(xs, ys)));
    RUN("mul.s rne", f32_bits(mul_s_rne(xs, ys)));
    RUN("fmadd.s", f32_bits(fmadd_s(xs, ys, zs)));
    RUN("fmsub.s", f32_bits(fmsub_s(xs, ys, zs)));
    RUN("fnmadd.s", f32_bits(fnmadd_s(xs, ys, zs)));
    RUN("fnmsub.s", f32_bits(fnmsub_s(xs, ys, zs)));
    RUN("lt.d", (uint64_t)lt_d(xd, yd));
    RUN("le.d", (uint64_t)le_d(xd, (i & 1) ? xd : yd));
    RUN("eq.d", (uint64_t)eq_d(xd, (i & 1) ? xd : yd));
    RUN("lt.s", (uint64_t)lt_s(xs, ys));
    RUN("le.s", (uint64_t)le_s(xs, (i & 1) ? xs : ys));
    RUN("eq.s", (uint64_t)eq_s(xs, (i & 1) ? xs : ys));
    RUN("d->w", (uint64_t)d_to_w(xd));
    RUN("d->l", (uint64_t)d_to_l(xd));
    RUN("s->w", (uint64_t)s_to_w(xs));
    RUN("s->l", (uint64_t)s_to_l(xs));
    RUN("d->wu", d_to_wu(xd));
    RUN("d->lu", d_to_lu(xd));
    RUN("s->wu", s_to_wu(xs));
    RUN("s->lu", s_to_lu(xs));
    RUN("d->l dyn", (uint64_t)d_to_l_dyn(xd));
    RUN("s->w dyn", (uint64_t)s_to_w_dyn(xs));
    RUN("d->l rdn", (uint64_t)d_to_l_rdn(xd));
    RUN("d->l rup", (uint64_t)d_to_l_rup(xd));
    RUN("d->l rmm", (uint64_t)d_to_l_rmm(xd));
    RUN("d->l rmm h", (uint64_t)d_to_l_rmm(hd));
    RUN("d->l rdn h", (uint64_t)d_to_l_rdn(hd));
    RUN("d->w rdn", (uint64_t)d_to_w_rdn(xd));
    RUN("d->wu rup", (uint64_t)d_to_wu_rup(xd));
    RUN("d->lu rmm", (uint64_t)d_to_lu_rmm((i & 1) ? hd : xd));
    RUN("s->w rdn", (uint64_t)s_to_w_rdn(xs));
    RUN("s->w rup h", (uint64_t)s_to_w_rup(hs));
    RUN("s->l rmm", (uint64_t)s_to_l_rmm((i & 1) ? hs : xs));
    RUN("s->lu rdn", (uint64_t)s_to_lu_rdn((i & 1) ? hs : xs));
    RUN("l->d rdn", f64_bits(l_to_d_rdn(v)));
    RUN("lu->d rup", f64_bits(lu_to_d_rup(v)));
    RUN("w->s rmm", f32_bits(w_to_s_rmm(v)));
    RUN("l->s rtz", f32_bits(l_to_s_rtz(v)));
    RUN("floor", f64_bits(floor_d((i & 1) ? hd : xd)));
    RUN("ceil", f64_bits(ceil_d((i & 1) ? hd : xd)));
    RUN("round", f64_bits(round_d((i & 1) ? hd : xd)));
    RUN("lround", (uint64_t)lround_d((i & 1) ? hd : xd));
    RUN("floorf", f32_bits(floor_s((i & 1) ? hs : xs)));
    RUN("roundf", f32_bits(roundf_s((i & 1) ? hs : xs)));
    RUN("w->d", f64_bits(w_to_d(v)));
    RUN("wu->d", f64_bits(wu_to_d(v)));
    RUN("l->d", f64_bits(l_to_d(v)));
    RUN("lu->d", f64_bits(lu_to_d(v)));
    RUN("w->s", f32_bits(w_to_s(v)));
    RUN("wu->s", f32_bits(wu_to_s(v)));
    RUN("l->s", f32_bits(l_to_s(v)));
    RUN("lu->s", f32_bits(lu_to_s(v)));
    RUN("d->s", f32_bits(d_to_s(xd)));
    RUN("s->d", f64_bits(s_to_d(xs)));
    RUN("neg.s", f32_bits(neg_s(xs)));
    RUN("abs.s", f32_bits(abs_s(xs)));
    RUN("sign.s", f32_bits(sign_s(xs, ys)));
    RUN("fmv.x.w", (uint64_t)bits_s(xs));
    RUN("sqrt.d", f64_bits(sqrt_d(xd)));
    RUN("sqrt.s", f32_bits(sqrt_s(xs)));
    RUN("min.d", f64_bits(min_d(xd, (i & 3) ? yd : -xd)));
    RUN("max.d", f64_bits(max_d(xd, (i & 3) ? yd : -xd)));
    RUN("min.s", f32_bits(min_s(xs, (i & 3) ? ys : -xs)));
    RUN("max.s", f32_bits(max_s(xs, (i & 3) ? ys : -xs)));
}

int main(void) {
    static const struct {
        int mode;
        const char *name;
    } modes[] = {{FE_TONEAREST, "to nearest"}, {FE_TOWARDZERO, "toward zero"}, {FE_UPWARD, "upward"}};
    for (unsigned m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        fesetround(modes[m].mode);
        printf("== %s ==\n", modes[m].name);
        all();
    }
    return 0;
}

/* coprof-corpus: +zb (also built with -march=rv64gc_zba_zbb_zbs) */
/* int_arith.c: RV64I integer arithmetic on 64-bit edge values: wrapping
 * add/sub, the W (32-bit, sign-extending) forms, shifts with amounts the
 * hardware masks (RV64I, unprivileged spec section 5.2), set-less-than and
 * signed/unsigned comparisons. Values come through volatile memory so the
 * compiler cannot fold them away at -O2. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

static volatile int64_t vals[] = {
    0, 1, -1, 2, -2, 7, -7, 0x7fffffff, -0x7fffffffLL - 1, 0x80000000LL, 0xffffffffLL,
    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 0x123456789abcdef0LL,
    (int64_t)0xfedcba9876543210ULL, 0x5555555555555555LL, (int64_t)0xaaaaaaaaaaaaaaaaULL,
    1000000007, -1000000007, 0x100000000LL, 0x8000000000000000ULL >> 1,
};
#define NV (sizeof vals / sizeof vals[0])

/* Shift with the raw amount in a register: sll/srl/sra use only the low six
 * bits (sllw/srlw/sraw the low five), which C leaves undefined. */
static int64_t rv_sll(int64_t a, int64_t s) { int64_t r; __asm__("sll %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_srl(int64_t a, int64_t s) { int64_t r; __asm__("srl %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_sra(int64_t a, int64_t s) { int64_t r; __asm__("sra %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_sllw(int64_t a, int64_t s) { int64_t r; __asm__("sllw %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_srlw(int64_t a, int64_t s) { int64_t r; __asm__("srlw %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_sraw(int64_t a, int64_t s) { int64_t r; __asm__("sraw %0,%1,%2" : "=r"(r) : "r"(a), "r"(s)); return r; }
static int64_t rv_addw(int64_t a, int64_t b) { int64_t r; __asm__("addw %0,%1,%2" : "=r"(r) : "r"(a), "r"(b)); return r; }
static int64_t rv_subw(int64_t a, int64_t b) { int64_t r; __asm__("subw %0,%1,%2" : "=r"(r) : "r"(a), "r"(b)); return r; }

int main(void) {
    uint64_t h = FNV_INIT;
    printf("== add/sub/xor/and/or (wrapping) ==\n");
    for (unsigned i = 0; i < NV; i++) {
        for (unsigned j = 0; j < NV; j += 3) {
            uint64_t a = (uint64_t)vals[i], b = (uint64_t)vals[j];
            uint64_t s = a + b, d = a - b, x = a ^ b, n = a & b, o = a | b;
            if ((i + j) % 5 == 0)
                printf("%016llx %016llx add %016llx sub %016llx xor %016llx and %016llx or %016llx\n",
                       (unsigned long long)a, (unsigned long long)b, (unsigned long long)s,
                       (unsigned long long)d, (unsigned long long)x, (unsigned long long)n,
                       (unsigned long long)o);
            uint64_t r[5] = {s, d, x, n, o};
            h = fnv1a(h, r, sizeof r);
        }
    }
    printf("checksum addsub %016llx\n", (unsigned long long)h);

    printf("== W forms sign-extend bit 31 ==\n");
    for (unsigned i = 0; i < NV; i++) {
        int64_t a = vals[i], b = vals[(i * 7 + 3) % NV];
        printf("%016llx %016llx addw %016llx subw %016llx (int32)+ %d\n", (unsigned long long)a,
               (unsigned long long)b, (unsigned long long)rv_addw(a, b),
               (unsigned long long)rv_subw(a, b), (int)((uint32_t)a + (uint32_t)b));
    }

    printf("== shifts by masked amounts ==\n");
    static volatile int64_t amts[] = {0, 1, 5, 31, 32, 33, 63, 64, 65, 127, -1, -32, 0x1000};
    for (unsigned i = 0; i < NV; i += 2) {
        for (unsigned k = 0; k < sizeof amts / sizeof amts[0]; k++) {
            int64_t a = vals[i], s = amts[k];
            printf("%016llx <<>> %5lld sll %016llx srl %016llx sra %016llx sllw %016llx srlw %016llx sraw %016llx\n",
                   (unsigned long long)a, (long long)s, (unsigned long long)rv_sll(a, s),
                   (unsigned long long)rv_srl(a, s), (unsigned long long)rv_sra(a, s),
                   (unsigned long long)rv_sllw(a, s), (unsigned long long)rv_srlw(a, s),
                   (unsigned long long)rv_sraw(a, s));
        }
    }
    printf("== C shifts in range ==\n");
    for (unsigned i = 0; i < NV; i++) {
        uint64_t u = (uint64_t)vals[i];
        int64_t s = vals[i];
        for (int k = 0; k < 64; k += 9) {
            uint64_t r[3] = {u << k, u >> k, (uint64_t)(s >> k)};
            h = fnv1a(h, r, sizeof r);
        }
        int32_t w = (int32_t)s;
        printf("%016llx w=%d w>>3=%d (u32)w>>3=%u w<<4=%d\n", (unsigned long long)u, w, w >> 3,
               (uint32_t)w >> 3, (int32_t)((uint32_t)w << 4));
    }
    printf("checksum shifts %016llx\n", (unsigned long long)h);

    printf("== comparisons ==\n");
    for (unsigned i = 0; i < NV; i += 2) {
        for (unsigned j = 1; j < NV; j += 4) {
            int64_t a = vals[i], b = vals[j];
            printf("%lld %lld lt=%d ltu=%d eq=%d ge=%d geu=%d\n", (long long)a, (long long)b, a < b,
                   (uint64_t)a < (uint64_t)b, a == b, a >= b, (uint64_t)a >= (uint64_t)b);
        }
    }
    printf("== immediates and lui/auipc-style constants ==\n");
    volatile int64_t z = 0;
    PX("z+2047", z + 2047);
    PX("z-2048", z - 2048);
    PX("z+0x7ffff800", z + 0x7ffff800);
    PX("z^0xfffff000", z ^ 0xfffff000LL);
    PX("z|-0x80000000", z | -0x80000000LL);
    PX("z+0x123456789", z + 0x123456789LL);
    PX("(int32)0x80000000", (int64_t)(int32_t)(z + 0x80000000LL));
    PX("(int8)0x80", (int64_t)(int8_t)(z + 0x80));
    PX("(uint8)-1", (int64_t)(uint8_t)(z - 1));
    PX("(int16)0x8000", (int64_t)(int16_t)(z + 0x8000));
    PX("(uint16)-1", (int64_t)(uint16_t)(z - 1));
    PX("(uint32)-1", (int64_t)(uint32_t)(z - 1));

    printf("== a long loop of mixed arithmetic ==\n");
    uint64_t x = 88172645463325252ULL, acc = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += (x % 1000) * (uint64_t)i - (x >> 50);
        acc = (acc << 3) | (acc >> 61);
    }
    printf("xorshift %016llx acc %016llx\n", (unsigned long long)x, (unsigned long long)acc);
    printf("checksum final %016llx\n", (unsigned long long)h);
    return 0;
}

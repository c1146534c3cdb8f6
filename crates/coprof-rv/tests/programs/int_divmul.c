/* coprof-corpus: +zb (also built with -march=rv64gc_zba_zbb_zbs) */
/* int_divmul.c: the M extension (RISC-V unprivileged spec chapter 13) on
 * its edge cases: division by zero (quotient all ones, remainder the
 * dividend), signed overflow INT_MIN / -1 (quotient INT_MIN, remainder 0)
 * for div/divu/rem/remu and their W forms (table 13.1), and the high-half
 * multiplies mulh, mulhsu, mulhu. C makes these undefined, so they go
 * through inline assembly; the defined cases are also computed in C. */
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

#define RR(op)                                                                 \
    static int64_t rv_##op(int64_t a, int64_t b) {                             \
        int64_t r;                                                             \
        __asm__ volatile(#op " %0,%1,%2" : "=r"(r) : "r"(a), "r"(b));          \
        return r;                                                              \
    }
RR(div) RR(divu) RR(rem) RR(remu) RR(divw) RR(divuw) RR(remw) RR(remuw)
RR(mul) RR(mulh) RR(mulhsu) RR(mulhu) RR(mulw)

static volatile int64_t vals[] = {
    0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 0x7fffffff, -0x7fffffffLL - 1, 0x80000000LL,
    0xffffffffLL, INT64_MAX, INT64_MIN, INT64_MIN + 1, 0x123456789abcdef0LL,
    (int64_t)0xfedcba9876543210ULL, 1000000007, (int64_t)0xffffffff80000000ULL,
};
#define NV (sizeof vals / sizeof vals[0])

int main(void) {
    printf("== div/rem with every pair, including zero and overflow ==\n");
    for (unsigned i = 0; i < NV; i++) {
        for (unsigned j = 0; j < NV; j++) {
            int64_t a = vals[i], b = vals[j];
            printf("%llx/%llx div %llx divu %llx rem %llx remu %llx divw %llx divuw %llx remw %llx remuw %llx\n",
                   (unsigned long long)a, (unsigned long long)b, (unsigned long long)rv_div(a, b),
                   (unsigned long long)rv_divu(a, b), (unsigned long long)rv_rem(a, b),
                   (unsigned long long)rv_remu(a, b), (unsigned long long)rv_divw(a, b),
                   (unsigned long long)rv_divuw(a, b), (unsigned long long)rv_remw(a, b),
                   (unsigned long long)rv_remuw(a, b));
        }
    }
    printf("== C division where defined (truncates toward zero) ==\n");
    for (unsigned i = 0; i < NV; i++) {
        for (unsigned j = 0; j < NV; j++) {
            int64_t a = vals[i], b = vals[j];
            if (b == 0 || (a == INT64_MIN && b == -1))
                continue;
            if ((i * NV + j) % 7 != 0)
                continue;
            printf("%lld / %lld = %lld r %lld ; u %llu r %llu\n", (long long)a, (long long)b,
                   (long long)(a / b), (long long)(a % b), (unsigned long long)((uint64_t)a / (uint64_t)b),
                   (unsigned long long)((uint64_t)a % (uint64_t)b));
        }
    }
    printf("== multiplies: low and high halves ==\n");
    for (unsigned i = 0; i < NV; i++) {
        for (unsigned j = i; j < NV; j += 2) {
            int64_t a = vals[i], b = vals[j];
            __int128 ps = (__int128)a * b;
            unsigned __int128 pu = (unsigned __int128)(uint64_t)a * (uint64_t)b;
            __int128 psu = (__int128)a * (__int128)(unsigned __int128)(uint64_t)b;
            printf("%llx*%llx mul %llx mulh %llx mulhsu %llx mulhu %llx mulw %llx | c: %llx %llx %llx\n",
                   (unsigned long long)a, (unsigned long long)b, (unsigned long long)rv_mul(a, b),
                   (unsigned long long)rv_mulh(a, b), (unsigned long long)rv_mulhsu(a, b),
                   (unsigned long long)rv_mulhu(a, b), (unsigned long long)rv_mulw(a, b),
                   (unsigned long long)(uint64_t)(ps >> 64), (unsigned long long)(uint64_t)(pu >> 64),
                   (unsigned long long)(uint64_t)(psu >> 64));
        }
    }
    printf("== 128-bit arithmetic (libgcc helpers) ==\n");
    unsigned __int128 f = 1;
    for (int k = 1; k <= 34; k++) {
        f *= (unsigned)k;
        unsigned __int128 q = f / 1000000007u, r = f % 1000000007u;
        printf("%2d! = %016llx%016llx  /1e9+7 -> %016llx%016llx r %llu\n", k,
               (unsigned long long)(uint64_t)(f >> 64), (unsigned long long)(uint64_t)f,
               (unsigned long long)(uint64_t)(q >> 64), (unsigned long long)(uint64_t)q,
               (unsigned long long)(uint64_t)r);
    }
    __int128 s = -1;
    s <<= 100;
    PX("(-1<<100)>>64", (int64_t)(s >> 64));
    PX("(-1<<100)>>99", (int64_t)(s >> 99));
    PX("(-1<<100)/-3 hi", (int64_t)((s / -3) >> 64));
    PX("(-1<<100)/-3 lo", (int64_t)(s / -3));
    printf("== a division-heavy loop ==\n");
    uint64_t acc = 0, x = 12345;
    for (int i = 1; i < 100000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t d = (x >> 40) | 1;
        acc += x / d + x % d;
        acc ^= (uint64_t)((int64_t)x / -(int64_t)(i | 1));
        acc += (uint32_t)x / (uint32_t)(i);
    }
    printf("divloop %016llx\n", (unsigned long long)acc);
    return 0;
}

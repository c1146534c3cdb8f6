/* atomics.c: the A extension (RISC-V unprivileged spec chapter 14): every
 * AMO in its W and D forms (section 14.4, the W forms sign-extend the old
 * value), LR/SC loops written by hand (section 14.2; sc writes 0 on
 * success), and the __atomic builtins the compiler lowers to them,
 * including the 8- and 16-bit forms (masked LR/SC sequences or libatomic)
 * and compare-exchange failure paths. */
#include <stdint.h>
#include <stdio.h>
#include "corpus.h"

#define AMO(name, ins, T)                                                                  \
    static OPAQUE int64_t name(volatile T *p, int64_t v) {                                \
        int64_t old;                                                                       \
        __asm__ volatile(ins " %0,%2,(%1)" : "=r"(old) : "r"(p), "r"(v) : "memory");       \
        return old;                                                                        \
    }
AMO(amoswap_w, "amoswap.w", int32_t) AMO(amoadd_w, "amoadd.w", int32_t) AMO(amoand_w, "amoand.w", int32_t)
AMO(amoor_w, "amoor.w", int32_t) AMO(amoxor_w, "amoxor.w", int32_t) AMO(amomax_w, "amomax.w", int32_t)
AMO(amomin_w, "amomin.w", int32_t) AMO(amomaxu_w, "amomaxu.w", int32_t) AMO(amominu_w, "amominu.w", int32_t)
AMO(amoswap_d, "amoswap.d.aqrl", int64_t) AMO(amoadd_d, "amoadd.d.aq", int64_t) AMO(amoand_d, "amoand.d.rl", int64_t)
AMO(amoor_d, "amoor.d", int64_t) AMO(amoxor_d, "amoxor.d", int64_t) AMO(amomax_d, "amomax.d", int64_t)
AMO(amomin_d, "amomin.d", int64_t) AMO(amomaxu_d, "amomaxu.d", int64_t) AMO(amominu_d, "amominu.d", int64_t)

typedef int64_t (*amo32_fn)(volatile int32_t *, int64_t);
typedef int64_t (*amo64_fn)(volatile int64_t *, int64_t);

/* Atomically multiplies *p by k with an LR/SC retry loop; returns the old
 * value and counts the attempts (a single-threaded run succeeds at once). */
static OPAQUE int64_t lrsc_mul_d(volatile int64_t *p, int64_t k, int *tries) {
    int64_t old, tmp, fail;
    int n = 0;
    do {
        n++;
        __asm__ volatile("lr.d.aq %0,(%3)\n\tmul %1,%0,%4\n\tsc.d.rl %2,%1,(%3)"
                         : "=&r"(old), "=&r"(tmp), "=&r"(fail)
                         : "r"(p), "r"(k)
                         : "memory");
    } while (fail != 0);
    *tries = n;
    return old;
}
static OPAQUE int64_t lrsc_inc_w(volatile int32_t *p, int *tries) {
    int64_t old, tmp, fail;
    int n = 0;
    do {
        n++;
        __asm__ volatile("lr.w %0,(%3)\n\taddiw %1,%0,1\n\tsc.w %2,%1,(%3)"
                         : "=&r"(old), "=&r"(tmp), "=&r"(fail)
                         : "r"(p)
                         : "memory");
    } while (fail != 0);
    *tries = n;
    return old;
}
/* An sc.w whose reservation was taken by lr.w on another word, then an sc
 * after the reservation was consumed: the spec allows failure (nonzero)
 * and the program prints only whether memory changed consistently. */
static OPAQUE void sc_without_reservation(volatile int64_t *p) {
    int64_t r1, r2, v;
    __asm__ volatile("lr.d %0,(%3)\n\tsc.d %1,%4,(%3)\n\tsc.d %2,%5,(%3)"
                     : "=&r"(v), "=&r"(r1), "=&r"(r2)
                     : "r"(p), "r"(111L), "r"(222L)
                     : "memory");
    printf("lr then two sc: first sc %s, second sc %s, memory %lld\n", r1 == 0 ? "ok" : "failed",
           r2 == 0 ? "ok" : "failed", (long long)*p);
}

int main(void) {
    static const struct { const char *n; amo32_fn f; } w[] = {
        {"amoswap.w", amoswap_w}, {"amoadd.w", amoadd_w}, {"amoand.w", amoand_w}, {"amoor.w", amoor_w},
        {"amoxor.w", amoxor_w},   {"amomax.w", amomax_w}, {"amomin.w", amomin_w}, {"amomaxu.w", amomaxu_w},
        {"amominu.w", amominu_w},
    };
    static const struct { const char *n; amo64_fn f; } d[] = {
        {"amoswap.d", amoswap_d}, {"amoadd.d", amoadd_d}, {"amoand.d", amoand_d}, {"amoor.d", amoor_d},
        {"amoxor.d", amoxor_d},   {"amomax.d", amomax_d}, {"amomin.d", amomin_d}, {"amomaxu.d", amomaxu_d},
        {"amominu.d", amominu_d},
    };
    static const int64_t init[] = {0, 5, -5, 0x7fffffff, (int64_t)0xffffffff80000000LL, INT64_MIN, INT64_MAX, 0x1234567890LL};
    static const int64_t ops[] = {3, -3, 0x80000000LL, -1, INT64_MIN, 0x7fffffff};
    printf("== AMOs ==\n");
    for (unsigned i = 0; i < sizeof w / sizeof w[0]; i++) {
        for (unsigned a = 0; a < sizeof init / sizeof init[0]; a++) {
            for (unsigned b = 0; b < sizeof ops / sizeof ops[0]; b++) {
                volatile int32_t m32[2] = {(int32_t)init[a], 0x5a5a5a5a};
                int64_t old32 = w[i].f(&m32[0], ops[b]);
                volatile int64_t m64 = init[a];
                int64_t old64 = d[i].f(&m64, ops[b]);
                printf("%s %llx %llx -> old %llx mem %08x guard %08x | %s old %llx mem %llx\n", w[i].n,
                       (unsigned long long)init[a], (unsigned long long)ops[b], (unsigned long long)old32,
                       (uint32_t)m32[0], (uint32_t)m32[1], d[i].n, (unsigned long long)old64,
                       (unsigned long long)m64);
            }
        }
    }
    printf("== LR/SC loops ==\n");
    volatile int64_t cell = 3;
    int tries, max_tries = 0;
    for (int i = 0; i < 20; i++) {
        int64_t old = lrsc_mul_d(&cell, -3, &tries);
        if (tries > max_tries)
            max_tries = tries;
        printf("lr/sc mul step %d old %lld\n", i, (long long)old);
    }
    volatile int32_t counter = 0x7ffffff0;
    for (int i = 0; i < 40; i++) {
        lrsc_inc_w(&counter, &tries);
        if (tries > max_tries)
            max_tries = tries;
    }
    printf("lr/sc counter %d (wrapped), retries needed: %s\n", counter, max_tries > 3 ? "many" : "few");
    volatile int64_t probe = 7;
    sc_without_reservation(&probe);
    printf("== __atomic builtins ==\n");
    uint8_t b8 = 250;
    uint16_t h16 = 65530;
    uint32_t u32 = 0xfffffff0u;
    uint64_t u64 = 0;
    for (int i = 0; i < 10; i++) {
        uint8_t o8 = __atomic_fetch_add(&b8, 3, __ATOMIC_SEQ_CST);
        uint16_t o16 = __atomic_fetch_sub(&h16, 7000, __ATOMIC_ACQ_REL);
        uint32_t o32 = __atomic_fetch_xor(&u32, 0x0f0f0f0fu << i, __ATOMIC_RELAXED);
        uint64_t o64 = __atomic_add_fetch(&u64, 0x1111111111111111ULL, __ATOMIC_SEQ_CST);
        uint8_t n8 = __atomic_or_fetch(&b8, 0x80, __ATOMIC_SEQ_CST);
        uint16_t n16 = __atomic_nand_fetch(&h16, 0x0ff0, __ATOMIC_SEQ_CST);
        printf("i=%d u8 %u->%u u16 %u->%u u32 %08x->%08x u64 %016llx\n", i, o8, n8, o16, n16, o32, u32,
               (unsigned long long)o64);
    }
    int64_t expected = 5, cas = 5;
    int ok1 = __atomic_compare_exchange_n(&cas, &expected, 9, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    int ok2 = __atomic_compare_exchange_n(&cas, &expected, 11, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
    printf("cas64: first %d (cell %lld), second %d expected now %lld\n", ok1, (long long)cas, ok2, (long long)expected);
    uint16_t c16 = 0xbeef, e16 = 0xbeef;
    int ok3 = __atomic_compare_exchange_n(&c16, &e16, 0xcafe, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    while (!ok3) /* weak CAS may fail spuriously; retry */
        ok3 = __atomic_compare_exchange_n(&c16, &e16, 0xcafe, 1, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    uint8_t c8 = 1, e8 = 2;
    int ok4 = __atomic_compare_exchange_n(&c8, &e8, 3, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    printf("cas16 %d -> %04x ; cas8 %d expected %u\n", ok3, c16, ok4, e8);
    int32_t xchg = -1;
    int32_t prev = __atomic_exchange_n(&xchg, 0x12345678, __ATOMIC_SEQ_CST);
    printf("xchg prev %d now %x, test_and_set %d %d\n", prev, xchg, __atomic_test_and_set(&b8, __ATOMIC_SEQ_CST),
           __atomic_test_and_set(&c8, __ATOMIC_SEQ_CST));
    __atomic_store_n(&u64, 42, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    printf("load %llu always_lock_free(8) %d\n", (unsigned long long)__atomic_load_n(&u64, __ATOMIC_ACQUIRE),
           (int)__atomic_always_lock_free(8, 0));
    uint64_t sum = 0;
    for (uint64_t i = 0; i < 100000; i++)
        __atomic_fetch_add(&sum, i ^ (i >> 3), __ATOMIC_RELAXED);
    printf("atomic accumulation %llu\n", (unsigned long long)sum);
    return 0;
}

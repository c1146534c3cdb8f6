/* corpus.h: small printing helpers shared by the simulator's differential
 * test programs. Everything printed is a pure function of the program's
 * input (argv, stdin, files it writes itself): never a time, a pid or an
 * address, so that two correct RV64 implementations print the same bytes. */
#ifndef COPROF_CORPUS_H
#define COPROF_CORPUS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The build (optimisation level, "dyn" for the dynamically linked,
 * position-independent one, or "zb" for the one with the bit-manipulation
 * extensions), for the names of the files it writes: the
 * builds of one program may run at once. */
#if defined(__PIE__)
#define LEVEL "dyn"
#elif defined(__riscv_zbb)
#define LEVEL "zb"
#elif defined(__OPTIMIZE_SIZE__)
#define LEVEL "Os"
#elif defined(__OPTIMIZE__)
#define LEVEL "O2"
#else
#define LEVEL "O0"
#endif

/* A system call's result, and errno's text when it failed, after the name
 * padded to `width` columns. */
static inline void show_rc(int width, const char *what, long rc) {
    printf("%-*s rc %ld errno %s\n", width, what, rc, rc < 0 ? strerror(errno) : "-");
}

/* The bit pattern of a float or double, so that a one-ulp or a NaN-payload
 * difference shows even where printf would round it away. */
static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}
static inline float f32_from(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline double f64_from(uint64_t u) {
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

#define PF(name, f) printf("%-28s %08x %.9g\n", (name), f32_bits(f), (double)(f))
#define PD(name, d) printf("%-28s %016llx %.17g\n", (name), (unsigned long long)f64_bits(d), (d))
#define PX(name, x) printf("%-28s %016llx %lld\n", (name), (unsigned long long)(x), (long long)(x))

/* Reads the accrued floating-point exception flags (fflags, RISC-V
 * unprivileged spec, chapter "F" section 11.2) and clears them. The
 * operations whose flags are read must sit in OPAQUE functions: the
 * compiler may move plain arithmetic across this asm, but not a call it
 * cannot see into. */
static inline unsigned rv_take_fflags(void) {
    unsigned long f;
    __asm__ volatile("csrrw %0, fflags, zero" : "=r"(f) : : "memory");
    return (unsigned)f;
}
#define OPAQUE __attribute__((noipa))

/* An OPAQUE function `name` of three operands of type T running one
 * R4-type instruction, `ins.suf` (fmadd.d, fnmsub.s, ...), in the
 * dynamic rounding mode. */
#define FOP3(name, T, ins, suf)                                                          \
    static OPAQUE T name(T a, T b, T c) {                                                \
        T r;                                                                             \
        __asm__ volatile(ins "." suf " %0,%1,%2,%3" : "=f"(r) : "f"(a), "f"(b), "f"(c)); \
        return r;                                                                        \
    }

/* fflags as letters NV DZ OF UF NX, "-" where clear. */
static inline const char *fflags_str(unsigned f) {
    static char s[6];
    s[0] = (f & 16) ? 'V' : '-';
    s[1] = (f & 8) ? 'Z' : '-';
    s[2] = (f & 4) ? 'O' : '-';
    s[3] = (f & 2) ? 'U' : '-';
    s[4] = (f & 1) ? 'X' : '-';
    s[5] = 0;
    return s;
}

/* A 64-bit FNV-1a running checksum, printed at the end of long loops. */
static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

#endif

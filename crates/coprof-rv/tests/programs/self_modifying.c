/* self_modifying.c: code written at run time (what a JIT does), which
 * tests that a simulator's pre-decoded instruction cache follows stores to
 * code: instructions are stored into an executable mapping, made visible
 * with fence.i (Zifencei, RISC-V unprivileged spec chapter 3), called,
 * rewritten in place with other immediates and other lengths (32-bit and
 * compressed 16-bit forms, chapter 16), and the mapping is replaced by a
 * new one at the same address. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "corpus.h"

typedef long (*fn0)(void);
typedef long (*fn1)(long);

static void sync_code(void) { __asm__ volatile("fence.i" ::: "memory"); }

/* addi rd, rs1, imm (I-type, section 2.4). */
static uint32_t addi(int rd, int rs1, int imm) { return ((uint32_t)(imm & 0xfff) << 20) | (uint32_t)rs1 << 15 | (uint32_t)rd << 7 | 0x13; }
/* lui rd, imm20 */
static uint32_t lui(int rd, uint32_t imm20) { return (imm20 << 12) | (uint32_t)rd << 7 | 0x37; }
/* slli rd, rs1, sh (RV64: 6-bit shift amount) */
static uint32_t slli(int rd, int rs1, int sh) { return (uint32_t)sh << 20 | (uint32_t)rs1 << 15 | 1u << 12 | (uint32_t)rd << 7 | 0x13; }
/* add rd, rs1, rs2 */
static uint32_t add(int rd, int rs1, int rs2) { return (uint32_t)rs2 << 20 | (uint32_t)rs1 << 15 | (uint32_t)rd << 7 | 0x33; }
static const uint32_t RET = 0x00008067; /* jalr zero, 0(ra) */
/* c.li rd, imm6 and c.jr ra (quadrants 1 and 2). */
static uint16_t c_li(int rd, int imm) { return (uint16_t)(0x4001 | ((imm >> 5) & 1) << 12 | rd << 7 | (imm & 31) << 2); }
static const uint16_t C_JR_RA = 0x8082;
static const uint16_t C_ADD_A0_A0 = 0x952a; /* c.add a0, a0 */

int main(void) {
    size_t page = 4096;
    unsigned char *code = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("mmap rwx");
        return 1;
    }
    uint32_t *w = (uint32_t *)code;
    printf("== rewriting an immediate in place ==\n");
    long sum = 0;
    for (int i = -40; i < 60; i++) {
        w[0] = addi(10, 0, i * 37); /* a0 = i*37 */
        w[1] = RET;
        sync_code();
        long r = ((fn0)code)();
        sum += r;
        if (i % 10 == 0)
            printf("imm %d -> %ld\n", i * 37, r);
    }
    printf("sum of 100 rewritten results %ld\n", sum);
    printf("== a longer function rewritten, then its tail ==\n");
    /* f(x) = ((x << 3) + 0x12345000 + 7) */
    w[0] = slli(10, 10, 3);
    w[1] = lui(5, 0x12345);
    w[2] = add(10, 10, 5);
    w[3] = addi(10, 10, 7);
    w[4] = RET;
    sync_code();
    printf("f(5) = %#lx\n", ((fn1)code)(5));
    w[3] = addi(10, 10, -7);
    sync_code();
    printf("after rewriting the 4th instruction f(5) = %#lx\n", ((fn1)code)(5));
    w[0] = slli(10, 10, 20);
    sync_code();
    printf("after rewriting the 1st instruction f(5) = %#lx\n", ((fn1)code)(5));
    printf("== 32-bit code replaced by compressed code ==\n");
    uint16_t *h = (uint16_t *)code;
    h[0] = c_li(10, 13);
    h[1] = C_ADD_A0_A0;
    h[2] = C_JR_RA;
    sync_code();
    printf("c.li 13; c.add; c.jr -> %ld\n", ((fn0)code)());
    h[0] = c_li(10, -32 + 5); /* negative 6-bit immediate */
    sync_code();
    printf("c.li -27; c.add; c.jr -> %ld\n", ((fn0)code)());
    /* A 32-bit instruction starting at a 2-byte boundary. */
    h[0] = 0x0001; /* c.nop */
    memcpy(code + 2, &(uint32_t){addi(10, 0, 99)}, 4);
    h[3] = C_JR_RA;
    sync_code();
    printf("c.nop; addi at offset 2; c.jr -> %ld\n", ((fn0)code)());
    printf("== code across a page boundary ==\n");
    unsigned char *edge = code + page - 2;
    uint32_t ins = addi(10, 0, 321);
    memcpy(edge, &ins, 4);
    memcpy(edge + 4, &RET, 4);
    sync_code();
    printf("instruction split across pages -> %ld\n", ((fn0)edge)());
    printf("== a new mapping at the same address ==\n");
    munmap(code, 2 * page);
    unsigned char *again = mmap(code, page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    printf("remapped at the same address %d\n", again == code);
    w = (uint32_t *)again;
    w[0] = addi(10, 0, 555);
    w[1] = RET;
    sync_code();
    printf("fresh code -> %ld\n", ((fn0)again)());
    printf("== a loop that patches its own callee 10000 times ==\n");
    uint64_t hsum = FNV_INIT;
    for (int i = 0; i < 10000; i++) {
        w[0] = addi(10, 10, (i % 2047));
        sync_code();
        long r = ((fn1)again)(i);
        hsum = hsum * 31 + (uint64_t)r;
    }
    printf("checksum %016llx\n", (unsigned long long)hsum);
    munmap(again, page);
    return 0;
}

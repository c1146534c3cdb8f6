/* mapped_code.c: code that comes from files, as a loader maps it, with no
 * fence.i: a file's code run hot (so that a simulator that translates hot
 * code has translated it), another file's mapped over it (which Linux
 * makes visible without fence.i), a third mapped beside it while the
 * first stays good, the code made not executable, which must then fault,
 * and executable again, which must then run. A simulator that keeps the
 * code it decoded across such calls, or the fault it met, runs stale code
 * or faults again. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "corpus.h"

typedef long (*fn0)(void);

/* addi rd, rs1, imm (I-type, RISC-V unprivileged spec section 2.4). */
static uint32_t addi(int rd, int rs1, int imm) { return ((uint32_t)(imm & 0xfff) << 20) | (uint32_t)rs1 << 15 | (uint32_t)rd << 7 | 0x13; }
static const uint32_t RET = 0x00008067; /* jalr zero, 0(ra) */

/* A file of code (two instructions: a0 = imm, ret), open for mapping;
 * its name, the same on every run (a random one would make the loads that
 * copy it differ between implementations), is removed at once. */
static int code_file(int imm) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/coprof-corpus-code-" LEVEL "-%d", imm);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror("open");
        exit(1);
    }
    unlink(path);
    uint32_t code[2] = {addi(10, 0, imm), RET};
    if (write(fd, code, sizeof code) != (ssize_t)sizeof code) {
        perror("write");
        exit(1);
    }
    return fd;
}

static sigjmp_buf fault_env;
static void on_fault(int sig) { siglongjmp(fault_env, sig); }

/* Runs `f` 1000 times (so that a simulator that translates hot code has
 * translated it) and returns the sum of its results. */
static long run_hot(fn0 f) {
    long sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += f();
    return sum;
}

/* `base`: two free pages, where the code above was (the same place under
 * every implementation, relative to the program's other mapped code). */
static void mapped_code(unsigned char *base, size_t page) {
    printf("== code mapped from files, no fence.i ==\n");
    int a = code_file(11), b = code_file(22), c = code_file(33);
    unsigned char *at = mmap(base, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, a, 0);
    if (at == MAP_FAILED) {
        perror("mmap a");
        return;
    }
    printf("file a, 1000 calls -> %ld\n", run_hot((fn0)at));
    unsigned char *over = mmap(at, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, b, 0);
    printf("file b mapped over it at the same address %d\n", over == at);
    printf("file b, 1000 calls -> %ld\n", run_hot((fn0)at));
    unsigned char *elsewhere = mmap(base + page, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, c, 0);
    printf("file c mapped elsewhere, 1000 calls -> %ld\n", run_hot((fn0)elsewhere));
    printf("file b again, 1000 calls -> %ld\n", run_hot((fn0)at));
    show_rc(24, "mprotect read-only", mprotect(at, page, PROT_READ));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sigaction(SIGSEGV, &sa, NULL);
    int sig = sigsetjmp(fault_env, 1);
    if (sig == 0) {
        long r = ((fn0)at)();
        printf("ran code that is not executable: %ld\n", r);
    } else {
        printf("calling it now: signal %s\n", sig == SIGSEGV ? "SIGSEGV" : "other");
    }
    signal(SIGSEGV, SIG_DFL);
    show_rc(24, "mprotect executable", mprotect(at, page, PROT_READ | PROT_EXEC));
    printf("file b once more -> %ld\n", ((fn0)at)());
    munmap(at, page);
    munmap(elsewhere, page);
    close(a);
    close(b);
    close(c);
}

int main(void) {
    size_t page = 4096;
    /* Two pages, where the code goes: reserved, then freed for it. */
    unsigned char *base = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    munmap(base, 2 * page);
    mapped_code(base, page);
    return 0;
}

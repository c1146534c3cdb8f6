/* setjmp_longjmp.c: non-local jumps, which save and restore callee-saved
 * integer and floating registers (s0-s11, fs0-fs11), sp and ra: longjmp out
 * of deep recursion, a jump buffer reused in a loop, volatile locals that
 * keep their updates, longjmp(env, 0) returning 1, sigsetjmp/siglongjmp
 * restoring the signal mask (rt_sigprocmask), and an exception-like error
 * handler stack. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "corpus.h"

static jmp_buf env;
static int depth_reached;

static OPAQUE void dive(int depth, double carry) {
    double local = carry * 1.5 + depth;
    depth_reached = depth;
    if (depth == 500)
        longjmp(env, (int)local % 1000 + 1);
    if (depth < 100000) /* always true; tells the compiler the recursion ends */
        dive(depth + 1, local / 1.25);
}

/* An error-handler stack: try blocks nest, throw jumps to the innermost. */
static jmp_buf *handlers[16];
static int nhandlers;
static OPAQUE void throw_(int code) { longjmp(*handlers[nhandlers - 1], code); }
static OPAQUE int parse_digit(char c) {
    if (c < '0' || c > '9')
        throw_(100 + c);
    return c - '0';
}
static int parse_number(const char *s) {
    jmp_buf here;
    volatile int value = 0;
    handlers[nhandlers++] = &here;
    int code = setjmp(here);
    if (code) {
        nhandlers--;
        printf("  inner handler caught %d after value %d\n", code, value);
        if (code == 100 + '!')
            throw_(7); /* rethrow to the outer handler */
        return -1;
    }
    for (const char *p = s; *p; p++)
        value = value * 10 + parse_digit(*p);
    nhandlers--;
    return value;
}

static sigjmp_buf senv;

int main(void) {
    printf("== longjmp out of 500 frames ==\n");
    int r = setjmp(env);
    if (r == 0) {
        dive(0, 1.0);
        printf("not reached\n");
    } else {
        printf("came back with %d from depth %d\n", r, depth_reached);
    }
    printf("== a jump buffer reused in a loop, callee-saved registers ==\n");
    volatile int round = 0;
    volatile double acc = 0.5;
    register long keep_s = 12345; /* lives in a callee-saved register across setjmp at -O2 */
    jmp_buf loop;
    int v = setjmp(loop);
    printf("setjmp returned %d round %d acc %g keep %ld\n", v, round, acc, keep_s);
    if (round < 6) {
        round++;
        acc = acc * 3;
        longjmp(loop, round == 3 ? 0 : round * 10);
    }
    printf("== error handler stack ==\n");
    jmp_buf outer;
    handlers[nhandlers++] = &outer;
    int code = setjmp(outer);
    if (code == 0) {
        printf("parse 12345 -> %d\n", parse_number("12345"));
        printf("parse 12x45 -> %d\n", parse_number("12x45"));
        printf("parse 9!9 -> %d\n", parse_number("9!9"));
        printf("not reached\n");
    } else {
        printf("outer handler caught %d\n", code);
    }
    nhandlers = 0;
    printf("== sigsetjmp / siglongjmp and the signal mask ==\n");
    sigset_t set, cur;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (sigsetjmp(senv, 1) == 0) {
        sigaddset(&set, SIGUSR2);
        sigprocmask(SIG_BLOCK, &set, NULL);
        sigprocmask(SIG_SETMASK, NULL, &cur);
        printf("before siglongjmp: USR1 %d USR2 %d\n", sigismember(&cur, SIGUSR1), sigismember(&cur, SIGUSR2));
        siglongjmp(senv, 5);
    }
    sigprocmask(SIG_SETMASK, NULL, &cur);
    printf("after siglongjmp (mask restored): USR1 %d USR2 %d\n", sigismember(&cur, SIGUSR1),
           sigismember(&cur, SIGUSR2));
    if (sigsetjmp(senv, 0) == 0) {
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        siglongjmp(senv, 1);
    }
    sigprocmask(SIG_SETMASK, NULL, &cur);
    printf("after siglongjmp without saving: USR1 %d USR2 %d\n", sigismember(&cur, SIGUSR1),
           sigismember(&cur, SIGUSR2));
    printf("== many jumps ==\n");
    volatile uint64_t h = FNV_INIT;
    volatile int i = 0;
    jmp_buf many;
    int got = setjmp(many);
    h = h * 31 + (uint64_t)got;
    if (++i < 20000)
        longjmp(many, (i * 7) % 13);
    printf("20000 jumps checksum %016llx\n", (unsigned long long)h);
    return 0;
}

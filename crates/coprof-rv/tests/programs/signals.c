/* signals.c: signal handlers run as Linux runs them. Signals the program
 * sends itself with raise, kill and tgkill, a signal held while blocked
 * and delivered when unblocked (by sigprocmask and by a handler's
 * return), sigsuspend and sigtimedwait, the handler's mask (SA_NODEFER),
 * SA_RESETHAND,
 * SA_ONSTACK on an alternate stack, the siginfo and
 * ucontext a SA_SIGINFO handler gets, registers and FP state preserved
 * across a handler, a handler that edits the saved PC, and faults caught
 * by handlers that leave with siglongjmp: SIGSEGV (unmapped and
 * read-only), SIGILL, SIGTRAP (ebreak) and SIGBUS (a misaligned atomic).
 * Everything printed is independent of addresses and pids. Two things
 * qemu-user 7.2 gets wrong are left to coprof's own tests
 * (crates/coprof/tests/run.rs): sa_mask blocked while a handler runs,
 * and SS_AUTODISARM. */
#define _GNU_SOURCE
#include "corpus.h"

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>


static volatile sig_atomic_t hits[65];
static volatile int order[16];
static volatile int norder;
static volatile int depth, max_depth;

static void count(int sig) {
    hits[sig]++;
    if (norder < 16)
        order[norder++] = sig;
}

static void plain(int sig) { count(sig); }

/* Whether `sig` is blocked while the handler runs. */
static volatile int blocked_inside[65];
static void report_mask(int sig) {
    sigset_t cur;
    sigprocmask(SIG_SETMASK, NULL, &cur);
    blocked_inside[sig] = sigismember(&cur, sig);
    count(sig);
}

/* Raises itself again once; with SA_NODEFER the nested call runs inside. */
static void recurse(int sig) {
    depth++;
    if (depth > max_depth)
        max_depth = depth;
    count(sig);
    if (hits[sig] == 1)
        raise(sig);
    depth--;
}

static volatile int info_code, info_signo, info_pid_ok, uc_ok;
static void with_info(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    info_signo = si->si_signo;
    info_code = si->si_code;
    info_pid_ok = si->si_pid == getpid();
    /* The saved PC lies in the program's code, and the saved sp above
     * the frame the handler runs on. */
    uintptr_t pc = uc->uc_mcontext.__gregs[REG_PC];
    uintptr_t sp = uc->uc_mcontext.__gregs[REG_SP];
    uc_ok = pc > 0x10000 && sp > (uintptr_t)&uc;
    count(sig);
}

static char alt[16384];
static volatile int on_alt, alt_flags_inside;
static void where_am_i(int sig) {
    char here;
    on_alt = &here >= alt && &here < alt + sizeof alt;
    stack_t now;
    sigaltstack(NULL, &now);
    alt_flags_inside = now.ss_flags;
    count(sig);
}

/* Clobbers registers and FP state: the interrupted code must not see it. */
static void clobber(int sig) {
    volatile double d = 1.0;
    for (int i = 0; i < 10; i++)
        d = d * 3.7 + 1.0;
    __asm__ volatile("fsflags %0" : : "r"(31));
    __asm__ volatile("fsrm %0" : : "r"(1));
    count(sig);
}

static sigjmp_buf jump;
static volatile int fault_code;
static volatile uintptr_t fault_addr;
static void escape(int sig, siginfo_t *si, void *ctx) {
    (void)ctx;
    count(sig);
    fault_code = si->si_code;
    fault_addr = (uintptr_t)si->si_addr;
    siglongjmp(jump, sig);
}

/* Steps the saved PC over the 4-byte ebreak it stopped at. */
static void skip_ebreak(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    count(sig);
    fault_code = si->si_code;
    uc->uc_mcontext.__gregs[REG_PC] += 4;
}

static void set(int sig, void (*h)(int), int flags, int also_block) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (also_block)
        sigaddset(&sa.sa_mask, also_block);
    sigaction(sig, &sa, NULL);
}

static void set_info(int sig, void (*h)(int, siginfo_t *, void *), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static OPAQUE int trap(void) {
    __asm__ volatile(".option push\n.option norvc\nebreak\n.option pop");
    return 7;
}

int main(void) {
    printf("== sent to itself ==\n");
    set(SIGUSR1, plain, 0, 0);
    printf("raise rc %d hits %d\n", raise(SIGUSR1), hits[SIGUSR1]);
    printf("kill rc %d hits %d\n", kill(getpid(), SIGUSR1), hits[SIGUSR1]);
    printf("tgkill rc %ld hits %d\n", syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1), hits[SIGUSR1]);

    printf("== held while blocked ==\n");
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    set(SIGUSR2, plain, 0, 0);
    sigprocmask(SIG_BLOCK, &s, &old);
    norder = 0;
    raise(SIGUSR2);
    raise(SIGUSR1);
    raise(SIGUSR1);
    sigset_t pend;
    sigpending(&pend);
    printf("pending USR1 %d USR2 %d, handled so far %d\n", sigismember(&pend, SIGUSR1),
           sigismember(&pend, SIGUSR2), norder);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("after unblocking: %d handled, order", norder);
    for (int i = 0; i < norder; i++)
        printf(" %d", order[i]);
    printf(" (one USR1: signals do not queue)\n");

    printf("== sigsuspend ==\n");
    norder = 0;
    set(SIGUSR1, report_mask, 0, 0);
    sigprocmask(SIG_BLOCK, &s, &old);
    raise(SIGUSR1);
    sigset_t wait_mask;
    sigfillset(&wait_mask);
    sigdelset(&wait_mask, SIGUSR1);
    errno = 0;
    int rc = sigsuspend(&wait_mask);
    printf("sigsuspend rc %d errno %s, handled %d, USR1 blocked inside %d\n", rc, strerror(errno),
           norder, blocked_inside[SIGUSR1]);
    sigset_t back;
    sigprocmask(SIG_SETMASK, NULL, &back);
    printf("mask restored: USR1 %d USR2 %d HUP %d\n", sigismember(&back, SIGUSR1),
           sigismember(&back, SIGUSR2), sigismember(&back, SIGHUP));

    printf("== sigtimedwait ==\n");
    sigset_t which;
    sigemptyset(&which);
    sigaddset(&which, SIGUSR2);
    raise(SIGUSR2); /* blocked: pending */
    struct timespec zero = {0, 0};
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int got = sigtimedwait(&which, &si, &zero);
    printf("took %d code %d (SI_TKILL %d) handled %d\n", got, si.si_code, SI_TKILL, norder);
    errno = 0;
    got = sigtimedwait(&which, &si, &zero);
    printf("again: rc %d errno %s\n", got, strerror(errno));
    struct timespec bad = {0, 1000000000};
    errno = 0;
    got = sigtimedwait(&which, &si, &bad);
    printf("bad timeout: rc %d errno %s\n", got, strerror(errno));
    raise(SIGUSR2);
    int which_sig = 0;
    printf("sigwait rc %d signal %d\n", sigwait(&which, &which_sig), which_sig);
    sigpending(&pend);
    printf("nothing pending %d\n", sigisemptyset(&pend));
    sigprocmask(SIG_SETMASK, &old, NULL);

    printf("== the handler's mask ==\n");
    set(SIGUSR1, report_mask, 0, 0);
    raise(SIGUSR1);
    printf("inside: USR1 blocked %d\n", blocked_inside[SIGUSR1]);
    sigprocmask(SIG_SETMASK, NULL, &old);
    printf("after: USR1 blocked %d, USR2 blocked %d\n", sigismember(&old, SIGUSR1),
           sigismember(&old, SIGUSR2));
    set(SIGUSR1, report_mask, SA_NODEFER, 0);
    raise(SIGUSR1);
    printf("SA_NODEFER inside: USR1 blocked %d\n", blocked_inside[SIGUSR1]);

    printf("== nesting ==\n");
    hits[SIGUSR2] = 0;
    set(SIGUSR2, recurse, 0, 0);
    raise(SIGUSR2);
    printf("deferred: hits %d, deepest %d\n", hits[SIGUSR2], max_depth);
    hits[SIGUSR2] = 0;
    max_depth = 0;
    set(SIGUSR2, recurse, SA_NODEFER, 0);
    raise(SIGUSR2);
    printf("SA_NODEFER: hits %d, deepest %d\n", hits[SIGUSR2], max_depth);

    printf("== a signal sent from a handler, held until it returns ==\n");
    norder = 0;
    set(SIGUSR1, plain, 0, 0);
    set(SIGHUP, recurse, 0, SIGUSR1);
    hits[SIGHUP] = 1; /* recurse raises nothing more */
    struct sigaction chain;
    memset(&chain, 0, sizeof chain);
    sigemptyset(&chain.sa_mask);
    sigaddset(&chain.sa_mask, SIGUSR1);
    chain.sa_handler = plain;
    sigaction(SIGHUP, &chain, NULL);
    /* The HUP handler blocks USR1; a USR1 raised before HUP's handler
     * returns waits for rt_sigreturn to unblock it. */
    sigprocmask(SIG_BLOCK, &s, &old);
    raise(SIGUSR1);
    raise(SIGHUP);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("order");
    for (int i = 0; i < norder; i++)
        printf(" %d", order[i]);
    printf("\n");

    printf("== SA_RESETHAND ==\n");
    set(SIGWINCH, plain, SA_RESETHAND, 0);
    hits[SIGWINCH] = 0;
    raise(SIGWINCH);
    raise(SIGWINCH); /* now SIG_DFL: ignored */
    struct sigaction now;
    sigaction(SIGWINCH, NULL, &now);
    printf("hits %d, handler reset to default %d\n", hits[SIGWINCH], now.sa_handler == SIG_DFL);

    printf("== siginfo and ucontext ==\n");
    set_info(SIGUSR1, with_info, 0);
    raise(SIGUSR1);
    printf("raise: signo %d code %d (SI_TKILL %d) pid ok %d ucontext ok %d\n", info_signo, info_code,
           SI_TKILL, info_pid_ok, uc_ok);
    kill(getpid(), SIGUSR1);
    printf("kill: code %d (SI_USER %d)\n", info_code, SI_USER);

    printf("== alternate stack ==\n");
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    show_rc(24, "sigaltstack", sigaltstack(&ss, NULL));
    set(SIGUSR2, where_am_i, SA_ONSTACK, 0);
    raise(SIGUSR2);
    printf("SA_ONSTACK: on it %d, flags inside %d (SS_ONSTACK %d)\n", on_alt, alt_flags_inside,
           SS_ONSTACK);
    set(SIGUSR2, where_am_i, 0, 0);
    raise(SIGUSR2);
    printf("without: on it %d\n", on_alt);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);

    printf("== state preserved across a handler ==\n");
    set(SIGUSR1, clobber, 0, 0);
    __asm__ volatile("fsflags zero; fsrm zero");
    volatile double x = 1.25;
    double before = x * 3.0;
    raise(SIGUSR1);
    unsigned long fl, rm;
    __asm__ volatile("frflags %0" : "=r"(fl));
    __asm__ volatile("frrm %0" : "=r"(rm));
    double after_d = x * 3.0;
    printf("fflags %lu frm %lu, value kept %d\n", fl, rm, before == after_d);

    printf("== faults caught ==\n");
    set_info(SIGSEGV, escape, 0);
    set_info(SIGILL, escape, 0);
    set_info(SIGBUS, escape, 0);
    volatile int *null_ish = (int *)16;
    int sig = sigsetjmp(jump, 1);
    if (sig == 0) {
        (void)*null_ish;
        printf("no fault?\n");
    } else {
        printf("read of address 16: signal %d code %d (SEGV_MAPERR %d) addr %lu\n", sig, fault_code,
               SEGV_MAPERR, (unsigned long)fault_addr);
    }
    long pg = sysconf(_SC_PAGESIZE);
    char *ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    sig = sigsetjmp(jump, 1);
    if (sig == 0) {
        ro[8] = 1;
        printf("no fault?\n");
    } else {
        printf("write to a read-only page: signal %d code %d (SEGV_ACCERR %d) at +%ld\n", sig,
               fault_code, SEGV_ACCERR, (long)(fault_addr - (uintptr_t)ro));
    }
    sig = sigsetjmp(jump, 1);
    if (sig == 0) {
        __asm__ volatile(".word 0");
        printf("no fault?\n");
    } else {
        printf("illegal instruction: signal %d code %d (ILL_ILLOPC %d)\n", sig, fault_code,
               ILL_ILLOPC);
    }
    static long words[4];
    sig = sigsetjmp(jump, 1);
    if (sig == 0) {
        long *odd = (long *)((char *)words + 4);
        __atomic_fetch_add(odd, 1, __ATOMIC_SEQ_CST);
        printf("misaligned atomic did not trap (allowed)\n");
    } else {
        printf("misaligned atomic: signal %d code %d (BUS_ADRALN %d)\n", sig, fault_code, BUS_ADRALN);
    }
    /* Blocked while it happens: the fault kills as if no handler. Not
     * run here; the mask after siglongjmp is back to the one saved. */
    sigprocmask(SIG_SETMASK, NULL, &old);
    printf("after the escapes: SEGV blocked %d\n", sigismember(&old, SIGSEGV));

    printf("== a handler that moves the PC ==\n");
    set_info(SIGTRAP, skip_ebreak, 0);
    int t = trap();
    printf("ebreak stepped over: returned %d, code %d (TRAP_BRKPT %d), hits %d\n", t, fault_code,
           TRAP_BRKPT, hits[SIGTRAP]);

    printf("done\n");
    return 0;
}

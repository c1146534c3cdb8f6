/* thread_waits.c: threads that wait in system calls for one another. A
 * reader blocked on an empty pipe until another thread writes; one write
 * of more than a pipe holds, taken by a reader thread; a ping-pong over
 * two pipes; poll without a timeout; sigwait, sigsuspend and pause woken
 * by a signal from another thread; a blocked read that a signal
 * interrupts (EINTR) and one that SA_RESTART makes again; the alternate
 * signal stack of a new thread. What is printed
 * does not depend on how the threads interleave. */
#define _GNU_SOURCE
#include "corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void check(int ok, const char *what) {
    if (!ok) {
        printf("FAILED: %s (errno %d)\n", what, errno);
        exit(1);
    }
}

/* Waits until `*flag` is set, then a little more, so that the thread that
 * set it is inside the call that follows (a real kernel runs it on another
 * core; the simulator has switched to it already). */
static void await_flag(int *flag) {
    while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST))
        sched_yield();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* 1. A large write taken by a reader thread. */
#define BIG (300 * 1000)
static int big_pipe[2];
static unsigned long big_sum;
static long big_read;

static void *read_big(void *arg) {
    static unsigned char buf[4096];
    for (;;) {
        ssize_t n = read(big_pipe[0], buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            big_sum += buf[i];
        big_read += n;
    }
    return arg;
}

/* 2. Ping-pong: each side blocks in read until the other writes. */
static int ping[2], pong[2];
#define ROUNDS 500

static void *ponger(void *arg) {
    int v;
    for (int i = 0; i < ROUNDS; i++) {
        check(read(ping[0], &v, sizeof v) == sizeof v, "pong read");
        v = v * 3 + 1;
        check(write(pong[1], &v, sizeof v) == sizeof v, "pong write");
    }
    return arg;
}

/* 3. poll without a timeout. */
static int poll_pipe[2];
static int poll_ready, poll_revents;
static void *poller(void *arg) {
    struct pollfd p = {poll_pipe[0], POLLIN, 0};
    __atomic_store_n(&poll_ready, 1, __ATOMIC_SEQ_CST);
    poll_revents = poll(&p, 1, -1) == 1 ? p.revents : -1;
    return arg;
}

/* 4. Waiting for a signal from another thread. */
static int sigwait_ready, sigwait_got;
static void *sigwaiter(void *arg) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    __atomic_store_n(&sigwait_ready, 1, __ATOMIC_SEQ_CST);
    check(sigwait(&set, &sigwait_got) == 0, "sigwait");
    return arg;
}

static volatile sig_atomic_t handled;
static void on_usr2(int sig) { handled += sig; }

static int suspend_ready, suspend_ret, suspend_errno;
static void *suspender(void *arg) {
    sigset_t none;
    sigemptyset(&none);
    __atomic_store_n(&suspend_ready, 1, __ATOMIC_SEQ_CST);
    suspend_ret = sigsuspend(&none);
    suspend_errno = errno;
    return arg;
}

static int pause_ready, pause_ret, pause_errno;
static void *pauser(void *arg) {
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    __atomic_store_n(&pause_ready, 1, __ATOMIC_SEQ_CST);
    pause_ret = pause();
    pause_errno = errno;
    return arg;
}

/* 5. A blocked read and a signal: EINTR, or made again with SA_RESTART
 * (then it reads the first byte, and the second read the next). */
static int intr_pipe[2];
static int intr_ready;
static long intr_first, intr_errno, intr_second;
static void *interrupted_reader(void *arg) {
    char c = 0;
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    __atomic_store_n(&intr_ready, 1, __ATOMIC_SEQ_CST);
    errno = 0;
    intr_first = read(intr_pipe[0], &c, 1);
    intr_errno = errno;
    intr_second = read(intr_pipe[0], &c, 1) == 1 ? c : -1;
    return arg;
}

static void signal_blocked_reader(int restart, const char *name) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sa.sa_flags = restart ? SA_RESTART : 0;
    check(sigaction(SIGUSR2, &sa, NULL) == 0, "sigaction");
    check(pipe(intr_pipe) == 0, "pipe");
    intr_ready = 0;
    handled = 0;
    pthread_t t;
    check(pthread_create(&t, NULL, interrupted_reader, NULL) == 0, "create");
    await_flag(&intr_ready);
    pthread_kill(t, SIGUSR2);
    /* The byte is written after the handler ran, so the first read cannot
     * have it. */
    while (!handled)
        sched_yield();
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    check(write(intr_pipe[1], "xy", 2) == 2, "write");
    pthread_join(t, NULL);
    printf("%s: first read %ld (%s), handler %d, then '%c'\n", name, intr_first,
           intr_errno == EINTR ? "EINTR" : "no error", (int)handled, (char)intr_second);
    close(intr_pipe[0]);
    close(intr_pipe[1]);
}

/* 6. The alternate signal stack is each thread's own: a new thread has
 * none, whatever the thread that made it has. */
static int altstack_flags = -1;
static void *altstack_of_new_thread(void *arg) {
    stack_t now;
    if (sigaltstack(NULL, &now) == 0)
        altstack_flags = now.ss_flags;
    return arg;
}

int main(void) {
    /* Every thread starts with SIGUSR1 and SIGUSR2 blocked; those that
     * take them unblock them. */
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &both, NULL);
    pthread_t t;

    /* 1 */
    check(pipe(big_pipe) == 0, "pipe");
    check(pthread_create(&t, NULL, read_big, NULL) == 0, "create");
    unsigned char *big = malloc(BIG);
    unsigned long sum = 0;
    for (long i = 0; i < BIG; i++) {
        big[i] = (unsigned char)(i * 7 + i / 251);
        sum += big[i];
    }
    ssize_t wrote = write(big_pipe[1], big, BIG);
    close(big_pipe[1]);
    pthread_join(t, NULL);
    close(big_pipe[0]);
    printf("one write of %d bytes: wrote %ld, reader got %ld, sums %s\n", BIG, (long)wrote,
           big_read, sum == big_sum ? "match" : "differ");

    /* 2 */
    check(pipe(ping) == 0 && pipe(pong) == 0, "pipes");
    check(pthread_create(&t, NULL, ponger, NULL) == 0, "create");
    /* Beside that thread, a descriptor opened O_NONBLOCK still does not
     * wait. */
    int empty[2];
    char c;
    check(pipe2(empty, O_NONBLOCK) == 0, "pipe2");
    long r = read(empty[0], &c, 1);
    printf("read of an empty O_NONBLOCK pipe beside a thread: %ld (%s)\n", r,
           errno == EAGAIN ? "EAGAIN" : "?");
    close(empty[0]);
    close(empty[1]);
    int v = 1;
    unsigned long trail = 0;
    for (int i = 0; i < ROUNDS; i++) {
        check(write(ping[1], &v, sizeof v) == sizeof v, "ping write");
        check(read(pong[0], &v, sizeof v) == sizeof v, "ping read");
        v %= 100003;
        trail = trail * 31 + (unsigned)v;
    }
    pthread_join(t, NULL);
    printf("ping-pong of %d rounds: %d, trail %lu\n", ROUNDS, v, trail % 1000000007);

    /* 3 */
    check(pipe(poll_pipe) == 0, "pipe");
    check(pthread_create(&t, NULL, poller, NULL) == 0, "create");
    await_flag(&poll_ready);
    check(write(poll_pipe[1], "p", 1) == 1, "write");
    pthread_join(t, NULL);
    printf("poll without a timeout: revents %#x\n", poll_revents);

    /* 4 */
    check(pthread_create(&t, NULL, sigwaiter, NULL) == 0, "create");
    await_flag(&sigwait_ready);
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    printf("sigwait: got signal %d\n", sigwait_got);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    check(sigaction(SIGUSR2, &sa, NULL) == 0, "sigaction");
    check(pthread_create(&t, NULL, suspender, NULL) == 0, "create");
    await_flag(&suspend_ready);
    pthread_kill(t, SIGUSR2);
    pthread_join(t, NULL);
    printf("sigsuspend: %d (%s), handler %d\n", suspend_ret,
           suspend_errno == EINTR ? "EINTR" : "?", (int)handled);

    handled = 0;
    check(pthread_create(&t, NULL, pauser, NULL) == 0, "create");
    await_flag(&pause_ready);
    pthread_kill(t, SIGUSR2);
    pthread_join(t, NULL);
    printf("pause: %d (%s), handler %d\n", pause_ret, pause_errno == EINTR ? "EINTR" : "?",
           (int)handled);

    /* 5 */
    signal_blocked_reader(0, "read without SA_RESTART");
    signal_blocked_reader(1, "read with SA_RESTART");

    /* 6 */
    stack_t alt = {malloc(1 << 16), 0, 1 << 16};
    check(sigaltstack(&alt, NULL) == 0, "sigaltstack");
    check(pthread_create(&t, NULL, altstack_of_new_thread, NULL) == 0, "create");
    pthread_join(t, NULL);
    stack_t mine;
    check(sigaltstack(NULL, &mine) == 0, "sigaltstack");
    printf("alternate stack: new thread's %s, this thread's %s\n",
           altstack_flags == SS_DISABLE ? "disabled" : "set",
           mine.ss_flags == SS_DISABLE ? "disabled" : "set");
    return 0;
}

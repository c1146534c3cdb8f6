/* select_calls.c: select and pselect (the pselect6 system call). Ready
 * and not-ready pipe ends in the read, write and exception sets, sets
 * written back with only the ready descriptors, a descriptor above 64
 * (the second word of a set), a zero timeout, a short timeout that runs
 * out, select as a sleep, EBADF for a descriptor that is not open, EINVAL
 * for a negative count, pselect's signal mask letting an interval timer's
 * signal in (EINTR), and a thread blocked in select until another thread
 * writes. What is printed does not depend on timing. */
#define _GNU_SOURCE
#include "corpus.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/time.h>
#include <unistd.h>

static void show_set(const char *name, fd_set *set, int n) {
    printf("  %s:", name);
    for (int fd = 0; fd < n; fd++)
        if (FD_ISSET(fd, set))
            printf(" %d", fd);
    printf("\n");
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { alarms += sig == SIGALRM; }

static int thread_pipe[2];
static int thread_rc = -2, thread_ready;
static void *select_in_thread(void *arg) {
    fd_set r;
    FD_ZERO(&r);
    FD_SET(thread_pipe[0], &r);
    __atomic_store_n(&thread_ready, 1, __ATOMIC_SEQ_CST);
    thread_rc = select(thread_pipe[0] + 1, &r, NULL, NULL, NULL);
    if (thread_rc == 1 && !FD_ISSET(thread_pipe[0], &r))
        thread_rc = -3;
    return arg;
}

int main(void) {
    int full[2], empty[2];
    if (pipe(full) || pipe(empty))
        return 1;
    if (write(full[1], "data", 4) != 4)
        return 1;
    /* A descriptor in the second word of the sets. */
    int high = dup2(empty[0], 70);
    if (high != 70)
        return 1;

    fd_set r, w, x;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&x);
    FD_SET(full[0], &r);
    FD_SET(empty[0], &r);
    FD_SET(high, &r);
    FD_SET(full[1], &w);
    FD_SET(empty[1], &w);
    FD_SET(full[0], &x);
    struct timeval zero = {0, 0};
    int rc = select(high + 1, &r, &w, &x, &zero);
    printf("ready ends, zero timeout: rc %d\n", rc);
    show_set("read", &r, high + 1);
    show_set("write", &w, high + 1);
    show_set("except", &x, high + 1);

    FD_ZERO(&r);
    FD_SET(empty[0], &r);
    FD_SET(high, &r);
    struct timeval short_wait = {0, 20 * 1000};
    rc = select(high + 1, &r, NULL, NULL, &short_wait);
    printf("empty pipe, 20 ms: rc %d, set %s\n", rc, FD_ISSET(high, &r) ? "kept" : "cleared");

    struct timeval nap = {0, 10 * 1000};
    show_rc(24, "select as a sleep", select(0, NULL, NULL, NULL, &nap));

    FD_ZERO(&r);
    FD_SET(55, &r);
    show_rc(24, "closed descriptor", select(56, &r, NULL, NULL, &zero));
    FD_ZERO(&r);
    show_rc(24, "negative count", select(-1, &r, NULL, NULL, &zero));

    /* pselect: SIGALRM is blocked except while it waits. */
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t alrm, none;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    struct itimerval once = {{0, 0}, {0, 30 * 1000}};
    setitimer(ITIMER_REAL, &once, NULL);
    FD_ZERO(&r);
    FD_SET(empty[0], &r);
    errno = 0;
    rc = pselect(empty[0] + 1, &r, NULL, NULL, NULL, &none);
    printf("pselect until the timer: rc %d (%s), alarms %d\n", rc,
           errno == EINTR ? "EINTR" : "?", (int)alarms);
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    printf("  SIGALRM blocked again after it: %s\n", sigismember(&now, SIGALRM) ? "yes" : "no");

    /* A thread in select until this one writes. */
    if (pipe(thread_pipe))
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, select_in_thread, NULL);
    while (!__atomic_load_n(&thread_ready, __ATOMIC_SEQ_CST))
        sched_yield();
    struct timespec settle = {0, 50 * 1000 * 1000};
    nanosleep(&settle, NULL);
    if (write(thread_pipe[1], "t", 1) != 1)
        return 1;
    pthread_join(t, NULL);
    printf("select in a thread until a write: rc %d\n", thread_rc);
    return 0;
}

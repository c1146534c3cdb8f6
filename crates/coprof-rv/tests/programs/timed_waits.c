/* timed_waits.c: waits with a timeout beside other threads, which must go
 * on while one thread sleeps. A worker computes while another thread
 * sleeps a millisecond at a time (the Go runtime's monitor thread does
 * this for the life of a Go program); a condition variable's timed wait
 * lasts its time; an absolute clock_nanosleep ends at its time; a poll
 * with a timeout ends when another thread writes; a signal from another
 * thread cuts a sleep short with EINTR and the time left; a select's
 * timeout runs out beside a thread blocked in read; sem_timedwait and
 * sigtimedwait run out. What is printed does not depend on how the
 * threads interleave, only that none holds up the others. */
#define _GNU_SOURCE
#include "corpus.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static void check(int ok, const char *what) {
    if (!ok) {
        printf("FAILED: %s (errno %d)\n", what, errno);
        exit(1);
    }
}

static double now_ms(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The time `ms` milliseconds from now on `clock`: an absolute timeout. */
static struct timespec ms_from_now(clockid_t clock, long ms) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += ms * 1000 * 1000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* 1. A worker computes while another thread sleeps in 1 ms steps. */
#define STEPS 100
static int worker_done, sleeps_when_done = -1;

static void *sleeper(void *arg) {
    (void)arg;
    for (int i = 0; i < STEPS; i++) {
        if (__atomic_load_n(&worker_done, __ATOMIC_SEQ_CST) && sleeps_when_done < 0)
            sleeps_when_done = i;
        struct timespec ms = {0, 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

static unsigned long work(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + i;
    return x;
}

/* A thread blocked in read until main writes, so that main is never the
 * only thread: its waits go off the hart. */
static int block_pipe[2];
static void *blocked_reader(void *arg) {
    (void)arg;
    char c;
    check(read(block_pipe[0], &c, 1) == 1, "blocked read");
    return NULL;
}

/* 4. A poll with a timeout ends when another thread writes. */
static int poll_pipe[2];
static void *late_writer(void *arg) {
    (void)arg;
    work(300 * 1000);
    check(write(poll_pipe[1], "p", 1) == 1, "write");
    return NULL;
}

/* 5. A signal from another thread cuts a sleep short. */
static volatile sig_atomic_t usr1;
static void on_usr1(int sig) { usr1 = sig; }
static int napper_in;
static long nap_rc = 1, nap_errno;
static struct timespec nap_left;
static void *napper(void *arg) {
    (void)arg;
    struct timespec ten = {10, 0};
    __atomic_store_n(&napper_in, 1, __ATOMIC_SEQ_CST);
    nap_rc = nanosleep(&ten, &nap_left);
    nap_errno = errno;
    return NULL;
}

int main(void) {
    check(pipe(block_pipe) == 0, "pipe");
    pthread_t blocked;
    check(pthread_create(&blocked, NULL, blocked_reader, NULL) == 0, "create");

    pthread_t s;
    check(pthread_create(&s, NULL, sleeper, NULL) == 0, "create");
    unsigned long x = work(2 * 1000 * 1000);
    __atomic_store_n(&worker_done, 1, __ATOMIC_SEQ_CST);
    pthread_join(s, NULL);
    printf("worker done (%lx) before the sleeper's %d sleeps of 1 ms ended: %s\n", x & 0xf,
           STEPS, sleeps_when_done >= 0 ? "yes" : "no");

    /* 2. A condition variable's timed wait (CLOCK_REALTIME, absolute). */
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    double t0 = now_ms(CLOCK_REALTIME);
    struct timespec until = ms_from_now(CLOCK_REALTIME, 50);
    pthread_mutex_lock(&m);
    int rc = pthread_cond_timedwait(&c, &m, &until);
    pthread_mutex_unlock(&m);
    printf("pthread_cond_timedwait 50 ms: %s, lasted at least 50 ms: %s\n",
           rc == ETIMEDOUT ? "ETIMEDOUT" : "?", now_ms(CLOCK_REALTIME) - t0 >= 49.9 ? "yes" : "no");

    /* 3. An absolute clock_nanosleep on CLOCK_MONOTONIC. */
    struct timespec wake = ms_from_now(CLOCK_MONOTONIC, 30);
    rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
    struct timespec after;
    clock_gettime(CLOCK_MONOTONIC, &after);
    int late = after.tv_sec > wake.tv_sec ||
               (after.tv_sec == wake.tv_sec && after.tv_nsec >= wake.tv_nsec);
    printf("clock_nanosleep to an absolute time: rc %d, woke at or after it: %s\n", rc,
           late ? "yes" : "no");
    rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
    printf("clock_nanosleep to a time that has passed: rc %d\n", rc);

    /* 4. poll with a 10 s timeout; another thread writes after it computed. */
    check(pipe(poll_pipe) == 0, "pipe");
    pthread_t w;
    check(pthread_create(&w, NULL, late_writer, NULL) == 0, "create");
    struct pollfd p = {poll_pipe[0], POLLIN, 0};
    t0 = now_ms(CLOCK_MONOTONIC);
    rc = poll(&p, 1, 10000);
    printf("poll(10 s) while a thread computes, then writes: rc %d, revents %#x, within 5 s: %s\n", rc,
           p.revents, now_ms(CLOCK_MONOTONIC) - t0 < 5000 ? "yes" : "no");
    pthread_join(w, NULL);
    rc = poll(&p, 1, 0);
    printf("poll(0) on the unread byte: rc %d\n", rc);

    /* 5. pthread_kill ends a 10 s nanosleep with EINTR and the time left. */
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t n;
    check(pthread_create(&n, NULL, napper, NULL) == 0, "create");
    while (!__atomic_load_n(&napper_in, __ATOMIC_SEQ_CST))
        sched_yield();
    struct timespec settle = {0, 20 * 1000 * 1000};
    nanosleep(&settle, NULL);
    pthread_kill(n, SIGUSR1);
    pthread_join(n, NULL);
    printf("nanosleep(10 s) and a signal: rc %ld (%s), handler %d, 5 s < left <= 10 s: %s\n",
           nap_rc, nap_errno == EINTR ? "EINTR" : "?", (int)usr1,
           nap_left.tv_sec >= 5 && (nap_left.tv_sec < 10 || (nap_left.tv_sec == 10 && nap_left.tv_nsec == 0))
               ? "yes"
               : "no");

    /* 6. select with a timeout: runs out, and writes back the time left. */
    int fds[2];
    check(pipe(fds) == 0, "pipe");
    fd_set r;
    FD_ZERO(&r);
    struct timeval tv = {0, 40 * 1000};
    t0 = now_ms(CLOCK_MONOTONIC);
    FD_SET(fds[0], &r);
    rc = select(fds[0] + 1, &r, NULL, NULL, &tv);
    printf("select 40 ms on an empty pipe: rc %d, lasted at least 40 ms: %s, time left %ld.%06ld\n", rc,
           now_ms(CLOCK_MONOTONIC) - t0 >= 39.9 ? "yes" : "no", (long)tv.tv_sec, (long)tv.tv_usec);

    /* 7. sem_timedwait and sigtimedwait run out. */
    sem_t sem;
    sem_init(&sem, 0, 0);
    until = ms_from_now(CLOCK_REALTIME, 20);
    rc = sem_timedwait(&sem, &until);
    printf("sem_timedwait 20 ms: rc %d (%s)\n", rc, errno == ETIMEDOUT ? "ETIMEDOUT" : "?");
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    struct timespec twenty = {0, 20 * 1000 * 1000};
    t0 = now_ms(CLOCK_MONOTONIC);
    rc = sigtimedwait(&usr2, NULL, &twenty);
    printf("sigtimedwait 20 ms: rc %d (%s), lasted at least 20 ms: %s\n", rc,
           errno == EAGAIN ? "EAGAIN" : "?", now_ms(CLOCK_MONOTONIC) - t0 >= 19.9 ? "yes" : "no");

    check(write(block_pipe[1], "b", 1) == 1, "write");
    pthread_join(blocked, NULL);
    printf("done\n");
    return 0;
}

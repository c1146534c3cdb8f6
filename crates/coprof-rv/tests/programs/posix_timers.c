/* posix_timers.c: POSIX timers (timer_create and its calls). A one-shot
 * CLOCK_MONOTONIC timer waited for with sigwaitinfo (si_code SI_TIMER,
 * the sigev_value), a periodic timer caught by a handler
 * then deleted, an absolute CLOCK_REALTIME time, the default sigevent
 * (SIGALRM), SIGEV_NONE read with timer_gettime, a
 * CPU-time timer that expires while the program computes, SIGEV_THREAD
 * (a callback in the C library's helper thread), and the errors: unknown
 * clock, signal or timer, bad itimerspec. What is printed does not
 * depend on timing. */
#define _GNU_SOURCE
#include "corpus.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t ticks, last_value;
static void on_tick(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    ticks++;
    last_value = si->si_value.sival_int;
}

static sem_t called;
static int callback_value;
static void callback(union sigval v) {
    callback_value = v.sival_int;
    sem_post(&called);
}

static void arm(timer_t t, long first_ns, long every_ns, int flags) {
    struct itimerspec its = {{0, every_ns}, {first_ns / 1000000000, first_ns % 1000000000}};
    if (timer_settime(t, flags, &its, NULL) != 0) {
        printf("timer_settime failed: %s\n", strerror(errno));
        exit(1);
    }
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);

    /* 1: one shot, waited for. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 42;
    timer_t one;
    show_rc(28, "timer_create monotonic", timer_create(CLOCK_MONOTONIC, &ev, &one));
    arm(one, 20 * 1000000L, 0, 0);
    siginfo_t si;
    int sig = sigwaitinfo(&usr1, &si);
    printf("sigwaitinfo: signal %d, SI_TIMER %s, value %d\n", sig,
           si.si_code == SI_TIMER ? "yes" : "no", si.si_value.sival_int);
    struct itimerspec now;
    timer_gettime(one, &now);
    printf("after it: value %ld.%09ld, interval %ld\n", (long)now.it_value.tv_sec,
           now.it_value.tv_nsec, now.it_interval.tv_nsec);

    /* 2: periodic, caught, deleted. */
    ev.sigev_signo = SIGUSR2;
    ev.sigev_value.sival_int = 7;
    timer_t tick;
    timer_create(CLOCK_MONOTONIC, &ev, &tick);
    arm(tick, 2 * 1000000L, 2 * 1000000L, 0);
    while (ticks < 5) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    timer_gettime(tick, &now);
    printf("periodic: at least 5 ticks, value %d, interval %ld ns\n", (int)last_value,
           now.it_interval.tv_nsec);
    show_rc(28, "timer_delete", timer_delete(tick));
    show_rc(28, "timer_delete again", timer_delete(tick));
    show_rc(28, "timer_gettime deleted", timer_gettime(tick, &now));

    /* 3: an absolute date on CLOCK_REALTIME, with the default sigevent. */
    timer_t dflt;
    show_rc(28, "timer_create default", timer_create(CLOCK_REALTIME, NULL, &dflt));
    struct timespec date;
    clock_gettime(CLOCK_REALTIME, &date);
    date.tv_nsec += 10 * 1000000L;
    if (date.tv_nsec >= 1000000000L) {
        date.tv_sec++;
        date.tv_nsec -= 1000000000L;
    }
    struct itimerspec abs = {{0, 0}, date};
    ticks = 0;
    timer_settime(dflt, TIMER_ABSTIME, &abs, NULL);
    while (ticks == 0)
        pause();
    printf("absolute date: SIGALRM caught\n");

    /* 4: SIGEV_NONE, read back. */
    struct sigevent none = {0};
    none.sigev_notify = SIGEV_NONE;
    timer_t quiet;
    timer_create(CLOCK_MONOTONIC, &none, &quiet);
    arm(quiet, 5L * 1000000000L, 0, 0);
    timer_gettime(quiet, &now);
    printf("SIGEV_NONE: %ld s to go (of 5)\n", (long)now.it_value.tv_sec + 1);

    /* 5: CPU time. */
    ev.sigev_signo = SIGUSR2;
    ev.sigev_value.sival_int = 9;
    timer_t cpu;
    show_rc(28, "timer_create cputime", timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &cpu));
    ticks = 0;
    arm(cpu, 5 * 1000000L, 0, 0);
    volatile unsigned long spin = 0;
    while (ticks == 0)
        spin++;
    printf("CPU-time timer: caught while computing, value %d\n", (int)last_value);

    /* 6: SIGEV_THREAD. */
    sem_init(&called, 0, 0);
    struct sigevent th = {0};
    th.sigev_notify = SIGEV_THREAD;
    th.sigev_notify_function = callback;
    th.sigev_value.sival_int = 77;
    timer_t threaded;
    show_rc(28, "timer_create SIGEV_THREAD", timer_create(CLOCK_MONOTONIC, &th, &threaded));
    arm(threaded, 10 * 1000000L, 0, 0);
    sem_wait(&called);
    printf("SIGEV_THREAD: callback ran with %d\n", callback_value);

    /* 7: errors. */
    timer_t bad;
    show_rc(28, "unknown clock", timer_create(99, &ev, &bad));
    struct sigevent badsig = ev;
    badsig.sigev_signo = 99;
    show_rc(28, "unknown signal", timer_create(CLOCK_MONOTONIC, &badsig, &bad));
    struct itimerspec neg = {{0, 0}, {0, 2000000000L}};
    show_rc(28, "nanoseconds out of range", timer_settime(one, 0, &neg, NULL));
    show_rc(28, "timer_getoverrun", timer_getoverrun(one));
    return 0;
}

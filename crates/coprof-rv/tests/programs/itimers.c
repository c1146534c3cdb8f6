/* itimers.c: interval timers and the signals they send. setitimer and
 * getitimer (arguments checked, the old value written back), a one-shot
 * ITIMER_REAL caught while the program computes, a periodic one, alarm,
 * ITIMER_VIRTUAL and ITIMER_PROF, and waits that a timer's signal ends:
 * sigsuspend, pause (ppoll with no descriptors), nanosleep (EINTR with the
 * time left), poll on an empty pipe; and poll's answers for ready, closed
 * and ignored descriptors. What is printed does not depend on how long anything took,
 * only on what happened. */
#include "corpus.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got[32];
static void on_timer(int sig) { got[sig]++; }

/* Computes until `sig` has come `n` times, or gives up. */
static int spin_until(int sig, int n) {
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 4000000000UL && got[sig] < n; i++)
        x += i;
    return got[sig] >= n;
}

static struct itimerval it(long value_us, long interval_us) {
    struct itimerval v;
    v.it_value.tv_sec = value_us / 1000000;
    v.it_value.tv_usec = value_us % 1000000;
    v.it_interval.tv_sec = interval_us / 1000000;
    v.it_interval.tv_usec = interval_us % 1000000;
    return v;
}

int main(void) {
    signal(SIGALRM, on_timer);
    signal(SIGVTALRM, on_timer);
    signal(SIGPROF, on_timer);

    printf("== setitimer and getitimer ==\n");
    struct itimerval cur, old;
    show_rc(30, "getitimer REAL", getitimer(ITIMER_REAL, &cur));
    printf("disarmed: %ld %ld %ld %ld\n", (long)cur.it_value.tv_sec, (long)cur.it_value.tv_usec,
           (long)cur.it_interval.tv_sec, (long)cur.it_interval.tv_usec);
    show_rc(30, "getitimer 3 (EINVAL)", getitimer(3, &cur));
    struct itimerval bad = it(0, 0);
    bad.it_value.tv_usec = 1000000;
    show_rc(30, "setitimer usec 10^6 (EINVAL)", setitimer(ITIMER_REAL, &bad, NULL));
    struct itimerval long_one = it(50000000, 250000);
    show_rc(30, "setitimer REAL 50 s", setitimer(ITIMER_REAL, &long_one, NULL));
    getitimer(ITIMER_REAL, &cur);
    printf("armed: left between 49 and 50 s %d, interval %ld.%06ld\n",
           cur.it_value.tv_sec >= 49 && cur.it_value.tv_sec <= 50, (long)cur.it_interval.tv_sec,
           (long)cur.it_interval.tv_usec);
    struct itimerval off = it(0, 0);
    show_rc(30, "setitimer off", setitimer(ITIMER_REAL, &off, &old));
    printf("old: left above 49 s %d, interval %ld.%06ld\n", old.it_value.tv_sec >= 49,
           (long)old.it_interval.tv_sec, (long)old.it_interval.tv_usec);

    printf("== timers' signals while the program computes ==\n");
    struct itimerval once = it(20000, 0);
    setitimer(ITIMER_REAL, &once, NULL);
    printf("one-shot REAL: came %d", spin_until(SIGALRM, 1));
    getitimer(ITIMER_REAL, &cur);
    printf(", disarmed after %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);
    struct itimerval every = it(5000, 5000);
    setitimer(ITIMER_REAL, &every, NULL);
    int came = spin_until(SIGALRM, 4);
    setitimer(ITIMER_REAL, &off, &old);
    printf("periodic REAL: three more came %d, interval was %ld us\n", came,
           (long)old.it_interval.tv_usec);
    struct itimerval cpu = it(10000, 0);
    setitimer(ITIMER_VIRTUAL, &cpu, NULL);
    printf("VIRTUAL: came %d\n", spin_until(SIGVTALRM, 1));
    setitimer(ITIMER_PROF, &cpu, NULL);
    printf("PROF: came %d\n", spin_until(SIGPROF, 1));
    printf("alarm: before %u", alarm(100));
    printf(", left of 100 s %u\n", alarm(0));

    printf("== waits a timer ends ==\n");
    sigset_t none;
    sigemptyset(&none);
    int before = got[SIGALRM];
    setitimer(ITIMER_REAL, &once, NULL);
    errno = 0;
    int rc = sigsuspend(&none);
    printf("sigsuspend: rc %d errno %s, alarm came %d\n", rc, strerror(errno), got[SIGALRM] - before);
    before = got[SIGALRM];
    setitimer(ITIMER_REAL, &once, NULL);
    errno = 0;
    rc = pause();
    printf("pause: rc %d errno %s, alarm came %d\n", rc, strerror(errno), got[SIGALRM] - before);
    before = got[SIGALRM];
    setitimer(ITIMER_REAL, &once, NULL);
    struct timespec req = {2, 0}, rem = {0, 0};
    errno = 0;
    rc = nanosleep(&req, &rem);
    printf("nanosleep 2 s: rc %d errno %s, alarm came %d, more than 1.5 s left %d\n", rc,
           strerror(errno), got[SIGALRM] - before, rem.tv_sec >= 1 && (rem.tv_sec >= 2 || rem.tv_nsec >= 500000000));
    /* To an absolute time (TIMER_ABSTIME, as Python's time.sleep asks):
     * the signal ends it too; clock_nanosleep answers the error itself. */
    struct timespec now, until;
    for (int clock = 0; clock < 2; clock++) {
        clock_gettime(clock, &now);
        until = now;
        until.tv_sec += 2;
        before = got[SIGALRM];
        setitimer(ITIMER_REAL, &once, NULL);
        rc = clock_nanosleep(clock, TIMER_ABSTIME, &until, NULL);
        clock_gettime(clock, &now);
        printf("clock_nanosleep %s to 2 s from now: rc %s, alarm came %d, more than 1.5 s early %d\n",
               clock ? "MONOTONIC" : "REALTIME", rc ? strerror(rc) : "0", got[SIGALRM] - before,
               until.tv_sec - now.tv_sec >= 2 || (until.tv_sec - now.tv_sec == 1 && until.tv_nsec + 1000000000 - now.tv_nsec >= 1500000000));
    }
    int p[2];
    pipe(p);
    struct pollfd w = {.fd = p[0], .events = POLLIN};
    before = got[SIGALRM];
    setitimer(ITIMER_REAL, &once, NULL);
    errno = 0;
    rc = poll(&w, 1, 2000);
    printf("poll of an empty pipe: rc %d errno %s, alarm came %d\n", rc, strerror(errno),
           got[SIGALRM] - before);
    write(p[1], "x", 1);
    struct pollfd many[4] = {
        {.fd = p[0], .events = POLLIN},
        {.fd = p[1], .events = POLLOUT},
        {.fd = 999, .events = POLLIN},
        {.fd = -1, .events = POLLIN},
    };
    rc = poll(many, 4, 0);
    printf("poll: rc %d, revents %#x %#x %#x %#x\n", rc, many[0].revents, many[1].revents,
           many[2].revents, many[3].revents);
    close(p[1]);
    char c;
    read(p[0], &c, 1);
    rc = poll(many, 1, 0);
    printf("writer closed: rc %d revents %#x\n", rc, many[0].revents);
    struct pollfd *volatile bad_array = (struct pollfd *)8;
    errno = 0;
    printf("poll with a bad array: rc %d errno %s\n", poll(bad_array, 1, 0), strerror(errno));
    /* An ignored timer signal does not end the sleep. */
    signal(SIGALRM, SIG_IGN);
    setitimer(ITIMER_REAL, &once, NULL);
    struct timespec short_req = {0, 60000000};
    printf("nanosleep with SIGALRM ignored: rc %d\n", nanosleep(&short_req, NULL));
    printf("done\n");
    return 0;
}

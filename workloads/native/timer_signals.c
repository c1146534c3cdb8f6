/* A busy loop that takes a SIGALRM every argv[1] microseconds of wall
   time (setitimer): what a sampler that stops the program on signals
   costs a program with a timer of its own. Prints the signals taken and
   the loop's wall time. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static volatile long ticks;
static void on_alarm(int sig) { (void)sig; ticks++; }

int main(int argc, char **argv) {
    long us = argc > 1 ? atol(argv[1]) : 1000;
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, us}, {0, us}};
    setitimer(ITIMER_REAL, &every, 0);
    volatile long s = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < 600000000; i++)
        s += i;
    clock_gettime(CLOCK_MONOTONIC, &t);
    printf("%ld signals in %.3f s\n", ticks,
           t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}

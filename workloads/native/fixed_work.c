/* A fixed amount of work, argv[1] rounds of summing an array of 4,096
   longs, then its own CPU time, in seconds, on standard error as
   "cpu SECONDS": what a sampler adds to a program's CPU time, where the
   interrupt that takes a sample runs on the program's thread. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4096
static long table[N];
static volatile long sink;

__attribute__((noinline)) static long sum(long rounds) {
    long s = 0;
    for (long r = 0; r < rounds; r++)
        for (int i = 0; i < N; i++)
            s += table[i];
    return s;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    for (int i = 0; i < N; i++)
        table[i] = 7;
    sink = sum(rounds);
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    fprintf(stderr, "cpu %.6f\n", t.tv_sec + t.tv_nsec / 1e9);
    return 0;
}

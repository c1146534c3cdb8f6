/* kernel.h: the shared frame of coprof's benchmark kernels: the repetition
 * count from the command line (so a run can be made shorter or longer
 * than the default, which is sized for 50-500 million RISC-V instructions
 * at -O2), a deterministic pseudo-random input generator, and the final
 * checksum line. No kernel reads a clock, a file or the environment. */
#ifndef COPROF_KERNEL_H
#define COPROF_KERNEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses argv[1] as a positive repetition count, else returns `dflt`;
 * anything else is a usage error (exit status 2). */
static long kernel_reps(int argc, char **argv, long dflt, const char *name) {
    if (argc < 2)
        return dflt;
    char *end;
    long r = strtol(argv[1], &end, 10);
    if (*end != 0 || end == argv[1] || r <= 0) {
        fprintf(stderr, "%s: the argument must be a positive repetition count (default %ld), not '%s'\n", name, dflt,
                argv[1]);
        exit(2);
    }
    return r;
}

/* A 64-bit linear congruential generator (Knuth's MMIX constants): the
 * same input on every machine. */
static uint64_t kernel_rng = 0x2545f4914f6cdd1dULL;
static inline uint32_t kernel_rand(void) {
    kernel_rng = kernel_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(kernel_rng >> 32);
}

static void kernel_done(const char *name, long reps, uint64_t checksum) {
    printf("%s: reps %ld checksum %016llx\n", name, reps, (unsigned long long)checksum);
}

#endif

/* exit_status.c: how a program's end reaches its parent: output on both
 * stdout (buffered, flushed at exit) and stderr (unbuffered), perror and
 * strerror texts for system-call errors, atexit handlers run in reverse
 * order, and a non-zero exit status (exit_group). The status is taken
 * from the first argument when there is one that is a number, else 3. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void first_registered(void) { printf("atexit: first registered, runs last\n"); }
static void second_registered(void) {
    printf("atexit: second registered, runs first\n");
    fprintf(stderr, "stderr from an atexit handler\n");
}

int main(int argc, char **argv) {
    atexit(first_registered);
    atexit(second_registered);
    int status = 3;
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (*end == 0 && end != argv[1])
            status = (int)v;
    }
    printf("stdout line 1\n");
    fprintf(stderr, "stderr line 1\n");
    for (int i = 0; i < 200; i++)
        printf("stdout bulk %03d %s\n", i, "........................................................");
    fprintf(stderr, "stderr line 2 with a number %d and a float %.3f\n", 77, 2.0 / 3.0);
    errno = 0;
    if (open("/nonexistent-coprof-corpus/file", O_RDONLY) < 0)
        perror("open /nonexistent-coprof-corpus/file");
    if (close(-1) < 0)
        perror("close(-1)");
    char buf[4];
    if (read(12345, buf, 4) < 0)
        fprintf(stderr, "read(12345): %s (errno %d)\n", strerror(errno), errno);
    for (int e = 1; e < 40; e++)
        fprintf(stderr, "errno %2d: %s\n", e, strerror(e));
    write(2, "raw write to fd 2\n", 18);
    write(1, "raw write to fd 1 (before buffered stdout is flushed)\n", 54);
    printf("exiting with status %d\n", status);
    exit(status);
}

/* io_vectors.c: vectored I/O, file metadata and the single-threaded futex
 * forms. writev and readv on stdout, a pipe and a file: empty iovecs, a
 * zero count, a bad count, a bad descriptor, a bad first buffer (EFAULT)
 * and a bad buffer after good ones (a short transfer on a regular file).
 * statx by path, by descriptor with AT_EMPTY_PATH, on a directory, a pipe
 * and a missing file. futex: FUTEX_WAKE with no waiter, FUTEX_WAIT on a
 * value that no longer matches (EAGAIN) or with a timeout (ETIMEDOUT),
 * the bitset forms, and what Linux refuses (a misaligned word, an empty
 * bitset, FUTEX_CLOCK_REALTIME on a wake, an unknown operation). Every
 * result is printed as a return code and errno text with the data moved,
 * so that two correct implementations print the same bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include "corpus.h"


static void show(const char *what, long rc) { show_rc(44, what, rc); }

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout, uint32_t val3) {
    return syscall(SYS_futex, word, op, val, timeout, NULL, val3);
}

static void show_statx(const char *what, int rc, const struct statx *st) {
    show(what, rc);
    if (rc != 0)
        return;
    const char *type = S_ISREG(st->stx_mode)    ? "regular"
                       : S_ISDIR(st->stx_mode)  ? "directory"
                       : S_ISFIFO(st->stx_mode) ? "fifo"
                                                : "other";
    printf("  mask has type|mode|size %d, type %s", (st->stx_mask & (STATX_TYPE | STATX_MODE | STATX_SIZE)) == (STATX_TYPE | STATX_MODE | STATX_SIZE), type);
    if (S_ISREG(st->stx_mode))
        printf(", mode %o, size %llu", st->stx_mode & 07777, (unsigned long long)st->stx_size);
    printf("\n");
}

int main(void) {
    printf("== writev to stdout ==\n");
    fflush(stdout);
    char part1[] = "writev: three", part2[] = " parts", part3[] = " and an empty one\n";
    struct iovec out[4] = {{part1, strlen(part1)}, {part2, strlen(part2)}, {NULL, 0}, {part3, strlen(part3)}};
    long n = writev(1, out, 4);
    show("writev stdout", n);

    printf("== writev and readv on a pipe ==\n");
    int p[2];
    show("pipe", pipe(p));
    char w1[] = "alpha", w2[] = "beta-gamma", w3[] = "!";
    struct iovec wv[4] = {{w1, 5}, {NULL, 0}, {w2, 10}, {w3, 1}};
    show("writev 4 iovecs (one empty)", writev(p[1], wv, 4));
    char r1[4] = "", r2[8] = "", r3[64] = "";
    struct iovec rv[3] = {{r1, 3}, {r2, 0}, {r3, sizeof r3 - 1}};
    n = readv(p[0], rv, 3);
    show("readv 3 iovecs", n);
    printf("  [%s] [%s] [%s]\n", r1, r2, r3);
    show("writev count 0", writev(p[1], wv, 0));
    volatile int minus_one = -1;
    show("readv count -1 (EINVAL)", readv(p[0], rv, minus_one));
    struct iovec many[1025];
    for (int i = 0; i < 1025; i++)
        many[i] = (struct iovec){w3, 1};
    show("writev count 1025 > IOV_MAX (EINVAL)", writev(p[1], many, 1025));
    show("writev count 1024 = IOV_MAX", writev(p[1], many, 1024));
    char drain[1024];
    show("read them back", read(p[0], drain, sizeof drain));
    show("writev bad fd (EBADF)", writev(99, wv, 1));
    struct iovec badfirst[2] = {{NULL, 4}, {w1, 5}};
    show("writev bad first buffer (EFAULT)", writev(p[1], badfirst, 2));
    close(p[0]);
    close(p[1]);

    printf("== writev and readv on a file ==\n");
    char path[96];
    /* The PID keeps concurrent runs apart; as eight hex digits, so that
     * the work of writing the name is the same whatever its value (the
     * reports of two runs are compared instruction for instruction). */
    char tag[9];
    unsigned pid = (unsigned)getpid();
    for (int i = 7; i >= 0; i--, pid >>= 4)
        tag[i] = "0123456789abcdef"[pid & 15];
    tag[8] = 0;
    snprintf(path, sizeof path, "/tmp/coprof-corpus-io_vectors-%s-%s.bin", LEVEL, tag);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
    show("open", fd < 0 ? fd : 0);
    char head[] = "0123456789", body[200], tail[] = "END";
    for (int i = 0; i < 200; i++)
        body[i] = (char)('a' + i % 26);
    struct iovec fv[3] = {{head, 10}, {body, 200}, {tail, 3}};
    show("writev 213 bytes", writev(fd, fv, 3));
    show("lseek to 5", lseek(fd, 5, SEEK_SET));
    char a[6] = "", b[31] = "", c[300] = "";
    struct iovec frv[3] = {{a, 5}, {b, 30}, {c, sizeof c - 1}};
    n = readv(fd, frv, 3);
    show("readv from 5 to end of file", n);
    printf("  [%s] [%s] %zu bytes ending [%s]\n", a, b, strlen(c), c + strlen(c) - 5);
    show("readv at end of file", readv(fd, frv, 3));
    /* A bad buffer after good ones: Linux copies up to it and returns the
     * short count (for a regular file; pipes differ between kernels). */
    struct iovec badlater[3] = {{w1, 5}, {(void *)8, 4}, {w2, 10}};
    show("lseek to 0", lseek(fd, 0, SEEK_SET));
    show("writev bad second buffer (short)", writev(fd, badlater, 3));
    memset(r1, 0, sizeof r1);
    memset(r3, 0, sizeof r3);
    struct iovec rbad[3] = {{r1, 2}, {(void *)8, 4}, {r3, 8}};
    show("lseek to 0", lseek(fd, 0, SEEK_SET));
    show("readv bad second buffer (short)", readv(fd, rbad, 3));
    printf("  [%s] [%s]\n", r1, r3);
    show("readv bad first buffer (EFAULT)", readv(fd, badfirst, 2));
    show("pread 8 at 0", pread(fd, r3, 8, 0));
    printf("  [%s]\n", r3);
    show("fchmod 0640", fchmod(fd, 0640));

    printf("== statx ==\n");
    struct statx st;
    memset(&st, 0, sizeof st);
    show_statx("statx path", statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &st), &st);
    memset(&st, 0, sizeof st);
    show_statx("statx fd AT_EMPTY_PATH", statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_SIZE | STATX_MODE, &st), &st);
    memset(&st, 0, sizeof st);
    show_statx("statx directory /", statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &st), &st);
    int q[2];
    pipe(q);
    memset(&st, 0, sizeof st);
    show_statx("statx pipe", statx(q[0], "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st), &st);
    close(q[0]);
    close(q[1]);
    show_statx("statx missing (ENOENT)", statx(AT_FDCWD, "/nonexistent-coprof/x", 0, STATX_BASIC_STATS, &st), &st);
    show_statx("statx empty path without flag (ENOENT)", statx(fd, "", 0, STATX_BASIC_STATS, &st), &st);
    show_statx("statx reserved mask bit (EINVAL)", statx(AT_FDCWD, path, 0, 0x80000000u, &st), &st);
    show_statx("statx bad dirfd (EBADF)", statx(77, "relative", 0, STATX_BASIC_STATS, &st), &st);
    close(fd);
    unlink(path);

    printf("== futex ==\n");
    static uint32_t words[4] = {5, 0, 0, 0};
    uint32_t *word = &words[0];
    show("FUTEX_WAKE 1, no waiter", futex(word, FUTEX_WAKE, 1, NULL, 0));
    show("FUTEX_WAKE_PRIVATE 10, no waiter", futex(word, FUTEX_WAKE_PRIVATE, 10, NULL, 0));
    show("FUTEX_WAIT mismatched value (EAGAIN)", futex(word, FUTEX_WAIT, 6, NULL, 0));
    show("FUTEX_WAIT_PRIVATE mismatched (EAGAIN)", futex(word, FUTEX_WAIT_PRIVATE, 4, NULL, 0));
    struct timespec ms = {0, 1000000};
    show("FUTEX_WAIT matching, 1ms timeout", futex(word, FUTEX_WAIT, 5, &ms, 0));
    show("FUTEX_WAIT_BITSET mismatched (EAGAIN)", futex(word, FUTEX_WAIT_BITSET, 7, NULL, FUTEX_BITSET_MATCH_ANY));
    show("FUTEX_WAKE_BITSET, no waiter", futex(word, FUTEX_WAKE_BITSET, 1, NULL, 1));
    show("FUTEX_WAIT_BITSET empty bitset (EINVAL)", futex(word, FUTEX_WAIT_BITSET, 7, NULL, 0));
    show("FUTEX_WAKE_BITSET empty bitset (EINVAL)", futex(word, FUTEX_WAKE_BITSET, 1, NULL, 0));
    uint32_t *odd = (uint32_t *)((char *)&words[1] + 2);
    show("FUTEX_WAIT misaligned (EINVAL)", futex(odd, FUTEX_WAIT, 0, NULL, 0));
    show("FUTEX_WAKE misaligned (EINVAL)", futex(odd, FUTEX_WAKE, 1, NULL, 0));
    show("FUTEX_WAKE with CLOCK_REALTIME (ENOSYS)", futex(word, FUTEX_WAKE | FUTEX_CLOCK_REALTIME, 1, NULL, 0));
    show("futex unknown operation 99 (ENOSYS)", futex(word, 99, 0, NULL, 0));
    printf("word unchanged %u\n", *word);
    return 0;
}

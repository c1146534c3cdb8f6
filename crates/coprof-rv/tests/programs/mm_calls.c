/* mm_calls: the memory system calls at their edges, each result beside
 * the errno Linux gives (mm/mmap.c, mm/mremap.c, mm/msync.c, mm/mlock.c,
 * mm/mincore.c): the program break, holes punched with munmap, mprotect
 * across a hole, mremap in place, moved and to a fixed address, MAP_FIXED
 * over a mapping, file mappings and the files that cannot be mapped,
 * msync, mlock and mincore; and /proc/self/maps as a program reads it
 * (the main thread's stack that glibc's pthread_getattr_np finds there,
 * a file mapped at an offset). Prints results, never addresses. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "corpus.h"

#define FILE_ "/tmp/coprof-corpus-mm-calls-" LEVEL ".bin"
#define MAPPED_FILE "/tmp/coprof-corpus-mm-maps-" LEVEL ".bin"

static void show(const char *what, long rc) { show_rc(44, what, rc); }

static long failed(void *p) { return p == MAP_FAILED ? -1 : 0; }

int main(void) {
    const long pg = 4096;

    printf("== brk ==\n");
    long b0 = syscall(SYS_brk, 0);
    show("brk below its start returns the break", syscall(SYS_brk, 0x1000) == b0);
    show("brk grows", syscall(SYS_brk, b0 + 3 * pg) == b0 + 3 * pg);
    show("brk shrinks", syscall(SYS_brk, b0 + pg) == b0 + pg);
    show("brk too far keeps the break", syscall(SYS_brk, b0 + (1L << 45)) == b0 + pg);

    printf("== holes and moves ==\n");
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(m, 7, 4 * pg);
    show("munmap the second page", munmap(m + pg, pg));
    show("mprotect across the hole (ENOMEM)", mprotect(m, 3 * pg, PROT_READ));
    show("mremap shrinks in place", (long)mremap(m + 2 * pg, 2 * pg, pg, 0) == (long)(m + 2 * pg));
    show("mremap grows into the hole in place", (long)mremap(m, pg, 2 * pg, 0) == (long)m);
    show("the grown page reads zero", m[pg] == 0 && m[0] == 7);
    show("munmap it", munmap(m, 2 * pg));
    /* A fresh mapping moved onto part of another (qemu 7.2 hangs when the
     * moved mapping was itself grown by mremap first). */
    char *mv = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(mv, 7, 2 * pg);
    char *t = mmap(NULL, 8 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *r = mremap(mv, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, t + 2 * pg);
    show("mremap MREMAP_FIXED lands there", r == t + 2 * pg);
    show("and keeps the data and permissions", r[0] == 7 && r[pg] == 7 && (r[0] = 1) == 1);
    show("the old range is gone (msync: ENOMEM)", msync(mv, pg, MS_SYNC));
    show("MREMAP_FIXED without MAYMOVE (EINVAL)", failed(mremap(r, pg, pg, MREMAP_FIXED, t)));
    show("MREMAP_FIXED onto itself (EINVAL)",
         failed(mremap(r, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, r + pg)));
    char *f = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *fx = mmap(f, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    show("MAP_FIXED over a mapping replaces it", fx == f && (fx[0] = 3) == 3);
    show("an unaligned hint is only a hint",
         failed(mmap((void *)0x12345, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)));
    show("MAP_FIXED unaligned (EINVAL)",
         failed(mmap((void *)0x12345, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)));

    printf("== files ==\n");
    int fd = open(FILE_, O_CREAT | O_RDWR | O_TRUNC, 0600);
    show("write the file", write(fd, "hello", 5));
    char *fm = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE, fd, 0);
    show("a file mapping reads the file, then zeros", fm != MAP_FAILED && memcmp(fm, "hello", 5) == 0 && fm[5] == 0);
    int wo = open(FILE_, O_WRONLY);
    show("mapping a write-only descriptor (EACCES)", failed(mmap(NULL, pg, PROT_READ, MAP_PRIVATE, wo, 0)));
    show("read-only MAP_SHARED of a read-only descriptor",
         failed(mmap(NULL, pg, PROT_READ, MAP_SHARED, open(FILE_, O_RDONLY), 0)));
    show("mapping a directory (ENODEV)", failed(mmap(NULL, pg, PROT_READ, MAP_PRIVATE, open("/tmp", O_RDONLY), 0)));
    int p[2];
    show("pipe2", pipe2(p, 0));
    show("mapping a pipe (ENODEV)", failed(mmap(NULL, pg, PROT_READ, MAP_PRIVATE, p[0], 0)));
    unlink(FILE_);

    printf("== msync, mlock, mincore ==\n");
    show("msync", msync(fm, pg, MS_SYNC));
    show("msync SYNC and ASYNC (EINVAL)", msync(fm, pg, MS_SYNC | MS_ASYNC));
    show("msync unaligned (EINVAL)", msync(fm + 1, pg, MS_SYNC));
    show("msync unknown flag (EINVAL)", syscall(SYS_msync, fm, pg, 64));
    show("mlock part of a page", mlock(r + 5, 100));
    show("munlock", munlock(r, pg));
    /* A range unmapped just now: nothing else can have been placed there. */
    char *hole = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(hole, pg);
    show("mlock unmapped (ENOMEM)", mlock(hole, pg));
    show("mlockall", mlockall(MCL_CURRENT));
    show("mlockall no flag (EINVAL)", syscall(SYS_mlockall, 0));
    show("munlockall", munlockall());
    unsigned char vec[3] = {9, 9, 9};
    show("mincore", mincore(r, 2 * pg, vec));
    printf("resident %d %d untouched %d\n", vec[0] & 1, vec[1] & 1, vec[2]);
    show("mincore unaligned (EINVAL)", mincore(r + 1, pg, vec));
    show("mincore unmapped (ENOMEM)", mincore(hole, pg, vec));

    printf("== /proc/self/maps ==\n");
    pthread_attr_t attr;
    void *stack;
    size_t stack_size;
    int local = 0;
    int err = pthread_getattr_np(pthread_self(), &attr);
    show("pthread_getattr_np of the main thread", err ? -1 : 0);
    if (!err) {
        pthread_attr_getstack(&attr, &stack, &stack_size);
        char *lo = stack, *me = (char *)&local;
        printf("the stack it gives holds a local %d\n", lo <= me && me < lo + stack_size);
    }
    int mf = open(MAPPED_FILE, O_CREAT | O_RDWR | O_TRUNC, 0600);
    show("ftruncate", ftruncate(mf, 3 * pg));
    char *at2 = mmap(NULL, pg, PROT_READ, MAP_PRIVATE, mf, 2 * pg);
    show("mmap of its third page", failed(at2));
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    int lines = 0, formed = 1, stack_line = 0, file_line = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long from, to;
        char perms[8];
        lines++;
        if (sscanf(line, "%lx-%lx %7s", &from, &to, perms) != 3 || from >= to || strlen(perms) != 4)
            formed = 0;
        if (strstr(line, "[stack]") && from <= (unsigned long)&local && (unsigned long)&local < to)
            stack_line = 1;
        if (from == (unsigned long)at2 && strstr(line, " r--p 00002000 ") && strstr(line, MAPPED_FILE))
            file_line = 1;
    }
    printf("lines %d well formed %d, the [stack] line holds a local %d, the file's line %d\n",
           lines > 4, formed, stack_line, file_line);
    unlink(MAPPED_FILE);
    return 0;
}

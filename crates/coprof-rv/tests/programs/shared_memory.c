/* shared_memory.c: MAP_SHARED mappings, anonymous and of files: a forked
 * child's writes reach its parent through them (and not through private
 * ones), a file's mapped pages are the file (what the program writes
 * there, read and pread see, and what the file holds, the mapping shows),
 * msync, MADV_DONTNEED keeps shared contents, mremap moves a shared
 * mapping as the same memory, and /proc/self/maps marks it shared; two
 * processes take turns through process-shared semaphores and contend for
 * a process-shared mutex (futexes in shared memory). Linux
 * refuses a writable shared mapping of a file open only for reading
 * (EACCES), not of one open for appending. */
#define _GNU_SOURCE
#include "corpus.h"
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_ "/tmp/coprof-corpus-shared-" LEVEL ".bin"

static void show(const char *what, long v) { printf("%-44s %ld\n", what, v); }

/* Forks a child that runs `body(arg)` and exits 0; returns its status. */
static int in_child(void (*body)(void *), void *arg) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        body(arg);
        _exit(0);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    return st;
}

struct counters {
    atomic_long shared_count;
    long plain;
};

static void count_up(void *arg) {
    struct counters *c = arg;
    for (int i = 0; i < 1000; i++) atomic_fetch_add(&c->shared_count, 1);
    c->plain = 42;
}

static void write_private(void *arg) { *(long *)arg = 7; }

static void write_file_page(void *arg) { memcpy((char *)arg + 200, "from the child", 15); }

/* Two processes in turns: each waits on its own semaphore, then posts
 * the other's; and both add to a counter under one mutex. */
struct turns {
    sem_t ping, pong;
    pthread_mutex_t lock;
    long rounds, total;
};

#define ROUNDS 200
#define ADDS 20000

static void pong_side(void *arg) {
    struct turns *t = arg;
    for (int i = 0; i < ROUNDS; i++) {
        sem_wait(&t->ping);
        t->rounds++;
        sem_post(&t->pong);
    }
    for (int i = 0; i < ADDS; i++) {
        pthread_mutex_lock(&t->lock);
        t->total++;
        pthread_mutex_unlock(&t->lock);
    }
}

static void take_turns(long pg) {
    struct turns *t = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    sem_init(&t->ping, 1, 0);
    sem_init(&t->pong, 1, 0);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&t->lock, &a);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        pong_side(t);
        _exit(0);
    }
    long seen = 0;
    for (int i = 0; i < ROUNDS; i++) {
        sem_post(&t->ping);
        sem_wait(&t->pong);
        seen += t->rounds == i + 1;
    }
    for (int i = 0; i < ADDS; i++) {
        pthread_mutex_lock(&t->lock);
        t->total++;
        pthread_mutex_unlock(&t->lock);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    show("turns taken in order through semaphores", seen);
    show("adds under the process-shared mutex", t->total);
    show("child status", st);
}

/* Whether /proc/self/maps has a line for `addr` with permissions `perms`. */
static int maps_has(void *addr, const char *perms) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char p[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 && lo <= (unsigned long)addr &&
            (unsigned long)addr < hi)
            found = strcmp(p, perms) == 0;
    }
    fclose(f);
    return found;
}

int main(void) {
    long pg = sysconf(_SC_PAGESIZE);

    /* Anonymous shared memory, and a private page beside it. */
    struct counters *c = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    long *private_ = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    show("child status", in_child(count_up, c));
    for (int i = 0; i < 500; i++) atomic_fetch_add(&c->shared_count, 1);
    show("shared counter after child and parent", atomic_load(&c->shared_count));
    show("shared word the child wrote", c->plain);
    *private_ = 3;
    in_child(write_private, private_);
    show("private word after the child wrote 7", *private_);
    show("/proc/self/maps: shared page rw-s", maps_has(c, "rw-s"));
    show("/proc/self/maps: private page rw-p", maps_has(private_, "rw-p"));
    /* Advice that frees private memory keeps shared contents. */
    show("madvise DONTNEED", madvise(c, pg, MADV_DONTNEED));
    show("shared word after DONTNEED", c->plain);
    *private_ = 9;
    madvise(private_, pg, MADV_DONTNEED);
    show("private word after DONTNEED", *private_);

    take_turns(pg);

    /* A file, three pages long, mapped shared from its second page. */
    int fd = open(FILE_, O_RDWR | O_CREAT | O_TRUNC, 0600);
    show("ftruncate", ftruncate(fd, 3 * pg));
    pwrite(fd, "written by pwrite", 18, pg + 100);
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
    show("mmap of the file", m == MAP_FAILED ? -1 : 0);
    printf("%-44s %s\n", "the mapping shows pwrite's bytes", m + 100);
    memcpy(m + pg + 7, "stored in the map", 18);
    char buf[32] = {0};
    pread(fd, buf, 18, 2 * pg + 7);
    printf("%-44s %s\n", "pread sees the store", buf);
    pwrite(fd, "later by pwrite", 16, pg + 300);
    printf("%-44s %s\n", "the map sees a later pwrite", m + 300);
    show("msync", msync(m, 2 * pg, MS_SYNC));
    show("child status (writes the file's page)", in_child(write_file_page, m));
    printf("%-44s %s\n", "the parent sees the child's store", m + 200);
    memset(buf, 0, sizeof buf);
    pread(fd, buf, 15, pg + 200);
    printf("%-44s %s\n", "and so does the file", buf);
    show("/proc/self/maps: file page rw-s", maps_has(m, "rw-s"));

    /* mremap moves the shared pages as themselves. */
    char *moved = mremap(m, 2 * pg, 2 * pg, MREMAP_MAYMOVE | MREMAP_FIXED,
                         (char *)c + 64 * pg);
    show("mremap to a fixed place", moved == MAP_FAILED ? -1 : moved == (char *)c + 64 * pg);
    printf("%-44s %s\n", "the moved map holds the file", moved + pg + 7);
    memcpy(moved + 400, "after the move", 15);
    memset(buf, 0, sizeof buf);
    pread(fd, buf, 15, pg + 400);
    printf("%-44s %s\n", "a store after the move reaches the file", buf);
    char *shrunk = mremap(moved, 2 * pg, pg, 0);
    show("mremap shrinking in place", shrunk == moved);
    show("munmap", munmap(moved, pg));

    /* Refused as Linux refuses them. */
    pwrite(fd, "the file's head", 16, 0);
    int ro = open(FILE_, O_RDONLY);
    void *r = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
    show("writable shared map of a read-only fd", r == MAP_FAILED ? -errno : 0);
    r = mmap(NULL, pg, PROT_READ, MAP_SHARED, ro, 0);
    show("read-only shared map of a read-only fd", r == MAP_FAILED ? -errno : 0);
    printf("%-44s %s\n", "it reads the file", r == MAP_FAILED ? "-" : (char *)r);
    int ap = open(FILE_, O_RDWR | O_APPEND);
    r = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, ap, 0);
    show("writable shared map of an O_APPEND fd", r == MAP_FAILED ? -errno : 0);
    if (r != MAP_FAILED) {
        memcpy(r, "THE", 3);
        memset(buf, 0, sizeof buf);
        pread(fd, buf, 15, 0);
        printf("%-44s %s\n", "a store through it reaches the file", buf);
    }
    close(ro);
    close(ap);
    close(fd);
    unlink(FILE_);
    return 0;
}

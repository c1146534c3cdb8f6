/* syscalls.c: the Linux system calls a static glibc program makes beyond
 * plain I/O, each printed in a form that is the same on every correct
 * implementation: uname's fixed fields, ids compared rather than shown,
 * clocks checked for monotonicity, nanosleep, getrandom lengths, mmap
 * (anonymous and file-backed private), mprotect, mremap, madvise, munmap,
 * prlimit64, sysinfo, sched_getaffinity, getcwd, readlinkat, sigaction,
 * rt_sigprocmask with a blocked self-sent signal, sigaltstack, and the
 * user counter CSRs cycle, time and instret (Zicntr). It keeps to the
 * system calls the simulator is specified to support (nanosleep reaches
 * the kernel as clock_nanosleep, raise as tgkill). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "corpus.h"

#define FILE_ "/tmp/coprof-corpus-syscalls-" LEVEL ".bin"

static void show(const char *what, long rc) { show_rc(36, what, rc); }

static volatile int handled;
static void on_usr1(int sig) { handled = sig; }

int main(void) {
    printf("== identity ==\n");
    struct utsname u;
    show("uname", uname(&u));
    printf("sysname %s machine %s\n", u.sysname, u.machine);
    printf("getpid == gettid %d\n", getpid() == gettid());
    printf("getuid == geteuid %d getgid == getegid %d\n", getuid() == geteuid(), getgid() == getegid());
    printf("== clocks ==\n");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    volatile uint64_t spin = 0;
    for (int i = 0; i < 100000; i++)
        spin += i;
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("monotonic nondecreasing %d\n", b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    printf("realtime after 2020 %d, nsec in range %d\n", rt.tv_sec > 1577836800, rt.tv_nsec >= 0 && rt.tv_nsec < 1000000000);
    struct timeval tv;
    show("gettimeofday", gettimeofday(&tv, NULL));
    printf("gettimeofday usec in range %d\n", tv.tv_usec >= 0 && tv.tv_usec < 1000000);
    printf("time() after 2020 %d\n", time(NULL) > 1577836800);
    struct timespec nap = {0, 2000000};
    clock_gettime(CLOCK_MONOTONIC, &a);
    show("nanosleep 2ms", nanosleep(&nap, NULL));
    clock_gettime(CLOCK_MONOTONIC, &b);
    long slept = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
    printf("slept at least 2ms %d\n", slept >= 2000000);
    struct timespec badnap = {0, 2000000000L};
    show("nanosleep bad nsec (EINVAL)", nanosleep(&badnap, NULL));
    unsigned long c0, c1, t0, t1, i0, i1;
    __asm__ volatile("rdcycle %0\n\trdtime %1\n\trdinstret %2" : "=r"(c0), "=r"(t0), "=r"(i0));
    for (int i = 0; i < 1000; i++)
        spin += i;
    __asm__ volatile("rdcycle %0\n\trdtime %1\n\trdinstret %2" : "=r"(c1), "=r"(t1), "=r"(i1));
    printf("rdcycle increases %d rdtime nondecreasing %d rdinstret increases %d\n", c1 > c0, t1 >= t0, i1 > i0);
    printf("== randomness ==\n");
    unsigned char rnd[64];
    printf("getrandom 64 -> %zd\n", getrandom(rnd, sizeof rnd, 0));
    printf("getrandom 0 -> %zd\n", getrandom(rnd, 0, 0));
    printf("== memory mapping ==\n");
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("anonymous mmap %s, zero filled %d\n", m == MAP_FAILED ? "failed" : "ok", m[0] == 0 && m[8 * pg - 1] == 0);
    for (size_t i = 0; i < 8 * pg; i++)
        m[i] = (unsigned char)(i * 13);
    show("mprotect read-only", mprotect(m, pg, PROT_READ));
    printf("still readable %d\n", m[5] == 65);
    show("madvise DONTNEED", madvise(m + 4 * pg, pg, MADV_DONTNEED));
    printf("after DONTNEED private anonymous page reads zero %d\n", m[4 * pg + 1] == 0);
    unsigned char *g = mremap(m + pg, 2 * pg, 6 * pg, MREMAP_MAYMOVE);
    printf("mremap grow %s keeps %d zero tail %d\n", g == MAP_FAILED ? "failed" : "ok",
           g != MAP_FAILED && g[1] == (unsigned char)((pg + 1) * 13), g != MAP_FAILED && g[5 * pg] == 0);
    if (g != MAP_FAILED && g != m + pg)
        munmap(g, 6 * pg);
    show("munmap", munmap(m, 8 * pg));
    show("munmap unaligned (EINVAL)", munmap((char *)m + 1, pg));
    show("mmap zero length (EINVAL)", (long)mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    errno = 0;
    void *huge = mmap(NULL, (size_t)1 << 50, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    printf("mmap of 2^50 bytes: %s\n", huge == MAP_FAILED ? "failed" : "ok");
    if (huge != MAP_FAILED)
        munmap(huge, (size_t)1 << 50);
    int fd = open(FILE_, O_CREAT | O_RDWR | O_TRUNC, 0600);
    for (int i = 0; i < 3 * 4096; i += 8) {
        char rec[9];
        snprintf(rec, sizeof rec, "%07d|", i / 8);
        write(fd, rec, 8);
    }
    char *fm = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    printf("file mmap %s: [%.16s] [%.16s]\n", fm == MAP_FAILED ? "failed" : "ok", fm, fm + 4096 + 8);
    fm[0] = 'X';
    char first;
    pread(fd, &first, 1, 0);
    printf("private write not in file %d\n", first == '0');
    char *off = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 8192);
    printf("file mmap at offset 8192: [%.8s]\n", off);
    munmap(off, 4096);
    munmap(fm, 3 * 4096);
    close(fd);
    unlink(FILE_);
    printf("== limits, system, scheduling ==\n");
    struct rlimit rl;
    show("getrlimit STACK", getrlimit(RLIMIT_STACK, &rl));
    printf("stack limit cur > 0 %d\n", rl.rlim_cur > 0);
    show("prlimit NOFILE", prlimit(0, RLIMIT_NOFILE, NULL, &rl));
    struct sysinfo si;
    show("sysinfo", sysinfo(&si));
    printf("sysinfo mem_unit > 0 %d\n", si.mem_unit > 0);
    cpu_set_t cs;
    CPU_ZERO(&cs);
    int arc = sched_getaffinity(0, sizeof cs, &cs);
    printf("sched_getaffinity ok %d cpus >= 1 %d\n", arc == 0, CPU_COUNT(&cs) >= 1);
    char cwd[4096];
    printf("getcwd absolute %d\n", getcwd(cwd, sizeof cwd) != NULL && cwd[0] == '/');
    errno = 0;
    printf("getcwd tiny buffer %s errno %s\n", getcwd(cwd, 1) ? "ok" : "NULL", strerror(errno));
    char link[64];
    ssize_t ln = readlink("/nonexistent-coprof-link", link, sizeof link);
    show("readlink missing", (long)ln);
    printf("== signals without delivery ==\n");
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    show("sigaction USR1", sigaction(SIGUSR1, &sa, &old));
    printf("previous handler was default %d\n", old.sa_handler == SIG_DFL);
    sigaction(SIGUSR1, NULL, &old);
    printf("query shows our handler %d\n", old.sa_handler == on_usr1);
    show("sigaction SIGKILL (EINVAL)", sigaction(SIGKILL, &sa, NULL));
    sigset_t set, cur;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    show("block USR2", sigprocmask(SIG_BLOCK, &set, NULL));
    signal(SIGUSR2, SIG_IGN);
    show("raise blocked ignored USR2", raise(SIGUSR2));
    sigprocmask(SIG_SETMASK, NULL, &cur);
    printf("USR2 still blocked %d\n", sigismember(&cur, SIGUSR2));
    stack_t ss = {.ss_sp = malloc(SIGSTKSZ * 2), .ss_size = SIGSTKSZ * 2, .ss_flags = 0}, oss;
    show("sigaltstack", sigaltstack(&ss, &oss));
    printf("old altstack disabled %d\n", (oss.ss_flags & SS_DISABLE) != 0);
    printf("handled %d\n", handled);
    printf("== errors ==\n");
    show("kill self with signal 0", kill(getpid(), 0));
    show("open with bad flags on missing file", open("/nonexistent-coprof-dir/x", O_RDONLY));
    show("write to bad fd", write(99, "x", 1));
    /* Linux reads the name before it looks at the directory descriptor. */
    show("openat bad fd, bad name (EFAULT)", syscall(SYS_openat, 99, (char *)8, O_RDONLY));
    show("openat bad fd (EBADF)", syscall(SYS_openat, 99, "x", O_RDONLY));
    show("renameat bad fds, bad name (EFAULT)", syscall(SYS_renameat2, 98, "a", 99, (char *)8, 0));
    show("unlinkat bad fd, bad name (EFAULT)", syscall(SYS_unlinkat, 99, (char *)8, 0));
    /* Sizes and orders Linux checks (fs/stat.c, kernel/signal.c). */
    char lbuf[16];
    show("readlinkat size 0 (EINVAL)", syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", lbuf, 0));
    show("rt_sigaction set size 4 (EINVAL)", syscall(SYS_rt_sigaction, SIGUSR1, 0, 0, 4));
    show("rt_sigaction bad act, bad signal (EFAULT)", syscall(SYS_rt_sigaction, 0, (char *)8, 0, 8));
    unsigned long nset = 0, oset = 0xdead;
    show("rt_sigprocmask set size 4 (EINVAL)", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &nset, 0, 4));
    show("rt_sigprocmask bad how (EINVAL)", syscall(SYS_rt_sigprocmask, 99, &nset, &oset, 8));
    printf("old mask untouched by a bad how %d\n", oset == 0xdead);
    show("rt_sigpending size 16 (EINVAL)", syscall(SYS_rt_sigpending, lbuf, 16));
    show("rt_sigpending size 4", syscall(SYS_rt_sigpending, lbuf, 4));
    /* mm/mmap.c, mm/mprotect.c, fs/fcntl.c, kernel/sched/core.c, kernel/sys.c. */
    show("mmap neither private nor shared (EINVAL)",
         (long)syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0) < 0 ? -1 : 0);
    show("mmap 2^60 bytes (ENOMEM)",
         (long)syscall(SYS_mmap, 0, 1UL << 60, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) < 0 ? -1 : 0);
    char *pgm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    show("mprotect unknown prot bit (EINVAL)", syscall(SYS_mprotect, pgm, 4096, 0x100));
    pgm[0] = 1; /* still writable */
    show("fcntl F_DUPFD min beyond the limit (EINVAL)", syscall(SYS_fcntl, 1, F_DUPFD, 1 << 30));
    long nobody = 2147483000; /* above any pid_max */
    show("sched_getaffinity of no process (ESRCH)", syscall(SYS_sched_getaffinity, nobody, 128, lbuf));
    struct rlimit rlim;
    show("prlimit64 of no process (ESRCH)", syscall(SYS_prlimit64, nobody, RLIMIT_NOFILE, NULL, &rlim));
    /* kernel/signal.c, do_sigaltstack. */
    static char alt[8192];
    stack_t small = {.ss_sp = alt, .ss_size = 100, .ss_flags = 0};
    show("sigaltstack too small (ENOMEM)", syscall(SYS_sigaltstack, &small, NULL));
    stack_t odd = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 12345};
    show("sigaltstack unknown flags (EINVAL)", syscall(SYS_sigaltstack, &odd, NULL));
    stack_t on = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = SS_ONSTACK}, back;
    show("sigaltstack set with SS_ONSTACK", syscall(SYS_sigaltstack, &on, NULL));
    syscall(SYS_sigaltstack, NULL, &back);
    printf("sigaltstack reads back flags %d size %zu same sp %d\n", back.ss_flags, back.ss_size, back.ss_sp == alt);
    stack_t disable = {.ss_flags = SS_DISABLE};
    show("sigaltstack disabled", syscall(SYS_sigaltstack, &disable, NULL));
    /* A kernel without io_uring (which its callers fall back from). */
    char params[120] = {0};
    show("io_uring_setup (ENOSYS)", syscall(SYS_io_uring_setup, 4, params));
    show("io_uring_enter (ENOSYS)", syscall(SYS_io_uring_enter, 3, 1, 1, 0, NULL, 0));
    show("io_uring_register (ENOSYS)", syscall(SYS_io_uring_register, 3, 0, NULL, 0));
    show("lseek on pipe (ESPIPE)", ({ int p[2]; pipe(p); long r = lseek(p[0], 0, SEEK_SET); close(p[0]); close(p[1]); r; }));
    return 0;
}

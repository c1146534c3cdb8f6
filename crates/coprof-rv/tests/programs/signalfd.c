/* signalfd.c: signals read from a signalfd. Blocked signals sent with
 * raise, kill and sigqueue are read as signalfd_siginfo records (signal,
 * code, sender, the queued value), lowest first, several in one read; a
 * non-blocking signalfd with none pending says EAGAIN; poll and epoll see
 * it readable only while a signal of its set is pending, and an epoll
 * wait without a timeout is ended by an interval timer's signal; a
 * blocking read is ended by a signal another thread sends; a forked
 * child reads its own signals, not its parent's; signalfd4 on
 * an existing signalfd changes its set; bad flags and descriptors are
 * refused as Linux refuses them (a set size other than 8 too, which
 * qemu-user 7.2 takes: not printed here). What is printed does not depend
 * on timing or ids. */
#define _GNU_SOURCE
#include "corpus.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long v) { printf("%-40s %ld\n", what, v); }

static int readable(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void show_record(const char *what, const struct signalfd_siginfo *s) {
    printf("%-40s signo %u code %d from-me %d int %d\n", what, s->ssi_signo, s->ssi_code,
           s->ssi_pid == (uint32_t)getpid() && s->ssi_uid == (uint32_t)getuid(), s->ssi_int);
}

static void *send_later(void *arg) {
    (void)arg;
    usleep(20000);
    kill(getpid(), SIGUSR2);
    return NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_BLOCK, &set, NULL);

    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    show("signalfd", fd >= 0);
    struct signalfd_siginfo si[4];
    show("nothing pending: EAGAIN", read(fd, si, sizeof si) == -1 && errno == EAGAIN);
    show("not readable", readable(fd));
    show("short buffer: EINVAL", read(fd, si, 100) == -1 && errno == EINVAL);

    raise(SIGUSR2);
    kill(getpid(), SIGUSR1);
    show("readable", readable(fd));
    long n = read(fd, si, sizeof si);
    show("two records", n / (long)sizeof si[0]);
    show_record("first (lowest)", &si[0]);
    show_record("second", &si[1]);
    show("not readable after", readable(fd));
    show("still nothing: EAGAIN", read(fd, si, sizeof si) == -1 && errno == EAGAIN);

    union sigval v = {.sival_int = 42};
    sigqueue(getpid(), SIGUSR1, v);
    n = read(fd, si, sizeof si[0]);
    show("one record", n / (long)sizeof si[0]);
    show_record("queued", &si[0]);

    /* epoll, woken by an interval timer's signal. */
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 77};
    show("epoll_ctl", epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, NULL);
    struct epoll_event out;
    n = epoll_wait(ep, &out, 1, -1);
    show("epoll_wait", n);
    show("its data", (long)out.data.u64);
    n = read(fd, si, sizeof si);
    show("one record", n / (long)sizeof si[0]);
    printf("%-40s signo %u\n", "the timer's", si[0].ssi_signo);

    /* A new set: SIGUSR1 alone. SIGUSR2 stays pending, unread. */
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    show("signalfd4 on it", signalfd(fd, &one, 0) == fd);
    raise(SIGUSR2);
    show("SIGUSR2 not in the set", readable(fd));
    raise(SIGUSR1);
    show("SIGUSR1 is", readable(fd));
    n = read(fd, si, sizeof si);
    show_record("read", &si[0]);

    /* A blocking signalfd for SIGUSR2 (pending already), then one a
     * thread sends while the read waits. */
    sigset_t two;
    sigemptyset(&two);
    sigaddset(&two, SIGUSR2);
    int b = signalfd(-1, &two, 0);
    n = read(b, si, sizeof si);
    show_record("pending before", &si[0]);
    pthread_t t;
    pthread_create(&t, NULL, send_later, NULL);
    n = read(b, si, sizeof si);
    show_record("sent while waiting", &si[0]);
    pthread_join(t, NULL);

    /* A forked child reads its own signals through it, and its parent's
     * stay the parent's. */
    raise(SIGUSR1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        show("child: parent's pending not seen", readable(fd));
        raise(SIGUSR1);
        show("child: its own seen", readable(fd));
        n = read(fd, si, sizeof si);
        show("child: records", n / (long)sizeof si[0]);
        show("child: the sender is the child", si[0].ssi_pid == (uint32_t)getpid());
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    show("parent: still readable", readable(fd));
    n = read(fd, si, sizeof si);
    show("parent: records", n / (long)sizeof si[0]);
    show("parent: the sender is the parent", si[0].ssi_pid == (uint32_t)getpid());

    show("bad flags: EINVAL", signalfd(-1, &set, 1) == -1 && errno == EINVAL);
    show("not a signalfd: EINVAL", signalfd(ep, &set, 0) == -1 && errno == EINVAL);
    show("not open: EBADF", signalfd(999, &set, 0) == -1 && errno == EBADF);
    close(b);
    close(ep);
    close(fd);
    return 0;
}

/* sockets_events.c: sockets, event descriptors and the host calls beside
 * them. A socketpair; a Unix stream socket bound, listened on, connected
 * to and accepted, with getsockname, getpeername, socket options,
 * sendto/recvfrom, shutdown, and a pipe's descriptor passed in an
 * SCM_RIGHTS message; a datagram socketpair read with recvmsg into two
 * buffers; an accept that waits in a thread until another connects; epoll
 * over a pipe, an eventfd and a timerfd, with a timeout that runs out and
 * a wait without one ended by a thread's write; memfd_create; fstatfs,
 * fadvise, fallocate, flock, fchown, utimensat, sendfile and
 * copy_file_range; process groups and sessions, priorities, ids, groups;
 * prctl's thread name; the scheduling queries and membarrier; close_range,
 * a FIFO made by mknod, getcpu, personality's query and inotify; extended
 * attributes; the FIONREAD, FIONBIO and FS_IOC_GETFLAGS ioctls. What is
 * printed does not depend on timing, ids or the host's files. */
#define _GNU_SOURCE
#include "corpus.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <unistd.h>

static char sock_path[108];

static void *connect_later(void *arg) {
    (void)arg;
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, sock_path);
    long rc = connect(c, (struct sockaddr *)&a, sizeof a);
    if (rc == 0)
        rc = write(c, "late", 4);
    close(c);
    return (void *)rc;
}

static int wake_fd;
static void *write_later(void *arg) {
    (void)arg;
    for (volatile int i = 0; i < 200000; i++)
        ;
    uint64_t one = 1;
    return (void *)(long)write(wake_fd, &one, sizeof one);
}

int main(void) {
    char buf[64];

    /* socketpair */
    int sp[2];
    show_rc(30, "socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sp));
    show_rc(30, "write to one end", write(sp[0], "ping", 4));
    long n = read(sp[1], buf, sizeof buf);
    printf("read from the other: %.*s\n", (int)n, buf);

    /* A bound, listening Unix socket. */
    snprintf(sock_path, sizeof sock_path, "sockets_events-%s.sock", LEVEL);
    unlink(sock_path);
    int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, sock_path);
    show_rc(30, "bind", bind(srv, (struct sockaddr *)&addr, sizeof addr));
    show_rc(30, "bind again (in use)", bind(socket(AF_UNIX, SOCK_STREAM, 0),
                                            (struct sockaddr *)&addr, sizeof addr));
    show_rc(30, "listen", listen(srv, 4));
    struct sockaddr_un got;
    socklen_t len = sizeof got;
    show_rc(30, "getsockname", getsockname(srv, (struct sockaddr *)&got, &len));
    printf("  name %s, length %s\n", got.sun_path,
           len == offsetof(struct sockaddr_un, sun_path) + strlen(sock_path) + 1 ? "exact" : "other");
    int cli = socket(AF_UNIX, SOCK_STREAM, 0);
    show_rc(30, "connect", connect(cli, (struct sockaddr *)&addr, sizeof addr));
    len = sizeof got;
    int acc = accept4(srv, (struct sockaddr *)&got, &len, SOCK_CLOEXEC);
    printf("accept4 %s, cloexec %d\n", acc >= 0 ? "ok" : strerror(errno),
           (fcntl(acc, F_GETFD) & FD_CLOEXEC) != 0);
    len = sizeof got;
    show_rc(30, "getpeername", getpeername(cli, (struct sockaddr *)&got, &len));
    printf("  peer %s\n", got.sun_path);
    int type = 0, sz = 65536;
    len = sizeof type;
    show_rc(30, "getsockopt SO_TYPE", getsockopt(acc, SOL_SOCKET, SO_TYPE, &type, &len));
    printf("  type %s, length %u\n", type == SOCK_STREAM ? "stream" : "other", len);
    show_rc(30, "setsockopt SO_SNDBUF", setsockopt(cli, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz));
    show_rc(30, "sendto", sendto(cli, "hello", 5, 0, NULL, 0));
    n = recvfrom(acc, buf, sizeof buf, 0, NULL, NULL);
    printf("recvfrom: %.*s\n", (int)n, buf);
    errno = 0;
    show_rc(30, "recv MSG_DONTWAIT, nothing", recv(acc, buf, sizeof buf, MSG_DONTWAIT));

    /* A pipe's read end passed over the socket. */
    int p[2];
    if (pipe(p))
        return 1;
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec io = {.iov_base = "F", .iov_len = 1};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf,
                       .msg_controllen = sizeof cbuf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &p[0], sizeof(int));
    show_rc(30, "sendmsg SCM_RIGHTS", sendmsg(cli, &m, 0));
    close(p[0]);
    char one;
    char rbuf[CMSG_SPACE(sizeof(int))];
    struct iovec rio = {.iov_base = &one, .iov_len = 1};
    struct msghdr r = {.msg_iov = &rio, .msg_iovlen = 1, .msg_control = rbuf,
                       .msg_controllen = sizeof rbuf};
    show_rc(30, "recvmsg", recvmsg(acc, &r, 0));
    c = CMSG_FIRSTHDR(&r);
    int passed = -1;
    if (c && c->cmsg_type == SCM_RIGHTS)
        memcpy(&passed, CMSG_DATA(c), sizeof passed);
    write(p[1], "via passed fd", 13);
    n = read(passed, buf, sizeof buf);
    printf("byte %c, read through the passed descriptor: %.*s\n", one, (int)n, buf);
    close(passed);
    close(p[1]);
    show_rc(30, "shutdown", shutdown(cli, SHUT_WR));
    show_rc(30, "read after the peer's shutdown", read(acc, buf, sizeof buf));
    close(cli);
    close(acc);

    /* accept waiting in the main thread while a thread connects. */
    pthread_t t;
    pthread_create(&t, NULL, connect_later, NULL);
    acc = accept(srv, NULL, NULL);
    n = read(acc, buf, sizeof buf);
    void *trc;
    pthread_join(t, &trc);
    printf("accepted a thread's connection: %.*s (thread rc %ld)\n", (int)n, buf, (long)trc);
    close(acc);
    close(srv);
    unlink(sock_path);

    /* Datagrams gathered into two buffers. */
    int dg[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, dg);
    send(dg[0], "abcdefgh", 8, 0);
    char b1[3], b2[8];
    struct iovec two[2] = {{b1, sizeof b1}, {b2, sizeof b2}};
    struct msghdr dm = {.msg_iov = two, .msg_iovlen = 2};
    n = recvmsg(dg[1], &dm, 0);
    printf("recvmsg into two buffers: %ld: %.3s|%.*s\n", n, b1, (int)n - 3, b2);
    close(dg[0]);
    close(dg[1]);

    /* epoll over a pipe, an eventfd and a timerfd. */
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int ev = eventfd(0, EFD_NONBLOCK);
    int tf = timerfd_create(CLOCK_MONOTONIC, 0);
    if (pipe(p))
        return 1;
    struct epoll_event e = {.events = EPOLLIN, .data.u64 = 0x1111222233334444ull};
    show_rc(30, "epoll_ctl ADD pipe", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e));
    e.data.u64 = 2;
    show_rc(30, "epoll_ctl ADD eventfd", epoll_ctl(ep, EPOLL_CTL_ADD, ev, &e));
    e.data.u64 = 3;
    show_rc(30, "epoll_ctl ADD timerfd", epoll_ctl(ep, EPOLL_CTL_ADD, tf, &e));
    show_rc(30, "epoll_ctl ADD again", epoll_ctl(ep, EPOLL_CTL_ADD, tf, &e));
    struct epoll_event out[4];
    show_rc(30, "epoll_wait, nothing, 20 ms", epoll_wait(ep, out, 4, 20));
    write(p[1], "x", 1);
    n = epoll_wait(ep, out, 4, -1);
    printf("epoll_wait: %ld, data %llx, events %x\n", n, (unsigned long long)out[0].data.u64,
           out[0].events);
    show_rc(30, "epoll_ctl DEL pipe", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL));
    struct itimerspec its = {.it_value = {0, 5000000}};
    show_rc(30, "timerfd_settime 5 ms", timerfd_settime(tf, 0, &its, NULL));
    n = epoll_wait(ep, out, 4, -1);
    uint64_t ticks = 0;
    read(tf, &ticks, sizeof ticks);
    printf("epoll_wait: %ld, data %llu, timer ticks %llu\n", n, (unsigned long long)out[0].data.u64,
           (unsigned long long)ticks);
    struct itimerspec cur;
    show_rc(30, "timerfd_gettime", timerfd_gettime(tf, &cur));
    printf("  disarmed %s\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0 ? "yes" : "no");
    wake_fd = ev;
    pthread_create(&t, NULL, write_later, NULL);
    n = epoll_wait(ep, out, 4, -1);
    pthread_join(t, &trc);
    uint64_t count = 0;
    read(ev, &count, sizeof count);
    printf("epoll_wait for a thread's eventfd write: %ld, data %llu, count %llu\n", n,
           (unsigned long long)out[0].data.u64, (unsigned long long)count);
    show_rc(30, "epoll_wait, maxevents 0", epoll_wait(ep, out, 0, 0));
    show_rc(30, "epoll_wait on a pipe", epoll_wait(p[0], out, 1, 0));
    close(ep);
    close(ev);
    close(tf);
    close(p[0]);
    close(p[1]);

    /* memfd, and the file calls. */
    int mf = memfd_create("coprof-test", MFD_CLOEXEC);
    show_rc(30, "memfd write", write(mf, "memory file", 11));
    struct stat st;
    fstat(mf, &st);
    printf("memfd size %lld\n", (long long)st.st_size);
    char fname[64];
    snprintf(fname, sizeof fname, "sockets_events-%s.tmp", LEVEL);
    int f = open(fname, O_RDWR | O_CREAT | O_TRUNC, 0644);
    struct statfs sfs;
    show_rc(30, "fstatfs", fstatfs(f, &sfs));
    printf("  block size positive %s\n", sfs.f_bsize > 0 ? "yes" : "no");
    show_rc(30, "statfs of the file", statfs(fname, &sfs));
    show_rc(30, "posix_fadvise", posix_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL));
    show_rc(30, "fallocate 8192", fallocate(f, 0, 0, 8192));
    fstat(f, &st);
    printf("size after fallocate %lld\n", (long long)st.st_size);
    show_rc(30, "ftruncate 0", ftruncate(f, 0));
    show_rc(30, "flock LOCK_EX", flock(f, LOCK_EX));
    show_rc(30, "flock LOCK_UN", flock(f, LOCK_UN));
    show_rc(30, "fchown to own ids", fchown(f, getuid(), getgid()));
    struct timespec times[2] = {{1000000000, 0}, {1200000000, 500}};
    show_rc(30, "futimens", futimens(f, times));
    fstat(f, &st);
    printf("mtime %lld.%09ld\n", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    show_rc(30, "utimensat by name", utimensat(AT_FDCWD, fname, times, 0));
    lseek(mf, 0, SEEK_SET);
    off_t off = 0;
    show_rc(30, "sendfile memfd to file", sendfile(f, mf, &off, 11));
    printf("  offset now %lld\n", (long long)off);
    off_t in_off = 0, out_off = 11;
    show_rc(30, "copy_file_range", copy_file_range(f, &in_off, f, &out_off, 6, 0));
    n = pread(f, buf, sizeof buf, 0);
    printf("file: %.*s\n", (int)n, buf);
    show_rc(30, "fsync", fsync(f));
    sync();
    show_rc(30, "syncfs", syncfs(f));
    close(f);
    close(mf);
    unlink(fname);

    /* Process groups, sessions, priorities, ids. */
    printf("getpgid(0) is getpgrp: %s\n", getpgid(0) == getpgrp() ? "yes" : "no");
    printf("getsid(0) positive: %s\n", getsid(0) > 0 ? "yes" : "no");
    show_rc(30, "setpgid(0, 0)", setpgid(0, 0));
    printf("now own group: %s\n", getpgid(0) == getpid() ? "yes" : "no");
    errno = 0;
    int prio = getpriority(PRIO_PROCESS, 0);
    printf("getpriority %d errno %s\n", prio, errno ? strerror(errno) : "-");
    show_rc(30, "setpriority same", setpriority(PRIO_PROCESS, 0, prio));
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    getresuid(&ru, &eu, &su);
    getresgid(&rg, &eg, &sg);
    printf("getresuid matches getuid: %s, getresgid matches getgid: %s\n",
           ru == getuid() && eu == geteuid() ? "yes" : "no",
           rg == getgid() && eg == getegid() ? "yes" : "no");
    int ng = getgroups(0, NULL);
    gid_t groups[256];
    printf("getgroups count agrees: %s\n", ng >= 0 && getgroups(256, groups) == ng ? "yes" : "no");

    /* prctl's thread name. */
    show_rc(30, "prctl PR_SET_NAME", prctl(PR_SET_NAME, "a-very-long-thread-name", 0, 0, 0));
    char name[16] = {0};
    show_rc(30, "prctl PR_GET_NAME", prctl(PR_GET_NAME, name, 0, 0, 0));
    printf("  name %s\n", name);
    show_rc(30, "prctl unknown option", prctl(0x7fff, 0, 0, 0, 0));

    /* Scheduling queries and membarrier. */
    printf("sched_getscheduler %d\n", sched_getscheduler(0));
    struct sched_param sp2;
    show_rc(30, "sched_getparam", sched_getparam(0, &sp2));
    printf("  priority %d\n", sp2.sched_priority);
    printf("SCHED_OTHER priorities %d..%d\n", sched_get_priority_min(SCHED_OTHER),
           sched_get_priority_max(SCHED_OTHER));
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    show_rc(30, "sched_setaffinity same set", sched_setaffinity(0, sizeof set, &set));
    CPU_ZERO(&set);
    show_rc(30, "sched_setaffinity empty", sched_setaffinity(0, sizeof set, &set));
    long q = syscall(SYS_membarrier, 0, 0, 0);
    printf("membarrier query has GLOBAL: %s\n", q > 0 && (q & 1) ? "yes" : "no");

    /* close_range over a few descriptors. */
    int lo = dup2(0, 20), hi = dup2(0, 23);
    show_rc(30, "close_range 20..22", syscall(SYS_close_range, 20, 22, 0));
    printf("fd 20 %s, fd 23 %s\n", fcntl(lo, F_GETFD) < 0 ? "closed" : "open",
           fcntl(hi, F_GETFD) < 0 ? "closed" : "open");
    show_rc(30, "close_range CLOEXEC 23..", syscall(SYS_close_range, 23, ~0u, 4));
    printf("fd 23 cloexec %d\n", fcntl(hi, F_GETFD) & FD_CLOEXEC);
    close(hi);
    errno = 0;
    show_rc(30, "close_range first > last", syscall(SYS_close_range, 5, 4, 0));

    /* A FIFO made with mknod, written and read. */
    char fifo[64];
    snprintf(fifo, sizeof fifo, "sockets_events-%s.fifo", LEVEL);
    unlink(fifo);
    show_rc(30, "mkfifo", mkfifo(fifo, 0600));
    stat(fifo, &st);
    printf("is a FIFO: %s\n", S_ISFIFO(st.st_mode) ? "yes" : "no");
    int fr = open(fifo, O_RDONLY | O_NONBLOCK), fw = open(fifo, O_WRONLY);
    write(fw, "fifo", 4);
    n = read(fr, buf, sizeof buf);
    printf("through the FIFO: %.*s\n", (int)n, buf);
    close(fr);
    close(fw);
    unlink(fifo);

    unsigned cpu = 99, node = 99;
    show_rc(30, "getcpu", syscall(SYS_getcpu, &cpu, &node, NULL));
    printf("  on a CPU below 4096: %s\n", cpu < 4096 && node < 4096 ? "yes" : "no");
    printf("personality query: %#x\n", personality(0xffffffff) & 0xff);

    /* inotify: a file created in a watched directory. */
    char dirname[64];
    snprintf(dirname, sizeof dirname, "sockets_events-%s.dir", LEVEL);
    mkdir(dirname, 0700);
    int in = inotify_init1(IN_CLOEXEC);
    int wd = inotify_add_watch(in, dirname, IN_CREATE);
    printf("inotify watch %s\n", wd >= 0 ? "added" : strerror(errno));
    char inner[128];
    snprintf(inner, sizeof inner, "%s/new-file", dirname);
    close(open(inner, O_WRONLY | O_CREAT, 0600));
    char ev_buf[256] __attribute__((aligned(8)));
    n = read(in, ev_buf, sizeof ev_buf);
    struct inotify_event *iev = (struct inotify_event *)ev_buf;
    printf("inotify event: %s, name %s\n", n > 0 && (iev->mask & IN_CREATE) ? "IN_CREATE" : "none",
           n > 0 && iev->len ? iev->name : "-");
    show_rc(30, "inotify_rm_watch", inotify_rm_watch(in, wd));
    close(in);
    unlink(inner);
    rmdir(dirname);

    /* Extended attributes, by path, link and descriptor. */
    char xfile[64];
    snprintf(xfile, sizeof xfile, "sockets_events-%s.xattr", LEVEL);
    int xf = open(xfile, O_RDWR | O_CREAT | O_TRUNC, 0600);
    long xr = fsetxattr(xf, "user.coprof", "value-1", 7, 0);
    if (xr < 0 && (errno == ENOTSUP || errno == EPERM)) {
        printf("user extended attributes: not on this file system\n");
    } else {
        show_rc(30, "fsetxattr", xr);
        show_rc(30, "setxattr XATTR_CREATE again",
                setxattr(xfile, "user.coprof", "x", 1, XATTR_CREATE));
        char v[32];
        long len = getxattr(xfile, "user.coprof", v, sizeof v);
        printf("getxattr: %ld '%.*s'\n", len, (int)(len > 0 ? len : 0), v);
        show_rc(30, "lgetxattr, size 0", lgetxattr(xfile, "user.coprof", NULL, 0));
        show_rc(30, "fgetxattr, too small", fgetxattr(xf, "user.coprof", v, 2));
        char list[512];
        long ll = llistxattr(xfile, list, sizeof list);
        int listed = 0;
        for (long i = 0; i < ll; i += (long)strlen(list + i) + 1)
            listed |= strcmp(list + i, "user.coprof") == 0;
        printf("llistxattr names user.coprof: %s\n", listed ? "yes" : "no");
        printf("flistxattr, size 0, as long: %s\n",
               flistxattr(xf, NULL, 0) == listxattr(xfile, NULL, 0) ? "yes" : "no");
        show_rc(30, "removexattr", removexattr(xfile, "user.coprof"));
        show_rc(30, "fremovexattr, gone", fremovexattr(xf, "user.coprof"));
        show_rc(30, "lremovexattr, gone", lremovexattr(xfile, "user.coprof"));
    }
    show_rc(30, "getxattr, no such file", getxattr("/nonexistent/x", "user.a", NULL, 0));

    /* ioctls whose argument is an int. */
    int fl = -1;
    long fr3 = ioctl(xf, FS_IOC_GETFLAGS, &fl);
    printf("FS_IOC_GETFLAGS: %s\n", fr3 == 0 ? "read" : strerror(errno));
    close(xf);
    unlink(xfile);
    int fp[2];
    pipe(fp);
    write(fp[1], "12345", 5);
    int avail = -1;
    show_rc(30, "FIONREAD", ioctl(fp[0], FIONREAD, &avail));
    printf("  bytes to read: %d\n", avail);
    int on = 1;
    show_rc(30, "FIONBIO", ioctl(fp[0], FIONBIO, &on));
    printf("  O_NONBLOCK now: %s\n", fcntl(fp[0], F_GETFL) & O_NONBLOCK ? "yes" : "no");
    close(fp[0]);
    close(fp[1]);
    return 0;
}

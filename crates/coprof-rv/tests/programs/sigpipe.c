/* Writes to a pipe and a socket whose reader is gone: EPIPE, with the
 * SIGPIPE that comes with it taken as the program's action says (ignored,
 * caught with its siginfo, or the default, which kills a forked child),
 * and no signal with MSG_NOSIGNAL. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int caught, caught_code;

static void on_pipe(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    caught = sig;
    caught_code = info->si_code;
}

/* A pipe whose read end is closed. */
static int broken_pipe(void) {
    int p[2];
    if (pipe(p) != 0) return -1;
    close(p[0]);
    return p[1];
}

int main(void) {
    /* Ignored: EPIPE alone. */
    signal(SIGPIPE, SIG_IGN);
    int w = broken_pipe();
    errno = 0;
    long r = write(w, "x", 1);
    printf("ignored: write %ld %s\n", r, strerror(errno));
    struct iovec v = {"yz", 2};
    errno = 0;
    r = writev(w, &v, 1);
    printf("ignored: writev %ld %s\n", r, strerror(errno));
    close(w);

    /* Caught: the handler runs once per failed write, with SI_USER. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_pipe;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGPIPE, &sa, 0);
    w = broken_pipe();
    errno = 0;
    r = write(w, "x", 1);
    printf("caught: write %ld %s, signal %d code %d\n", r, strerror(errno), caught, caught_code);
    close(w);

    /* A socket: a send signals unless MSG_NOSIGNAL. */
    int s[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, s);
    close(s[1]);
    caught = 0;
    errno = 0;
    r = send(s[0], "x", 1, MSG_NOSIGNAL);
    printf("send MSG_NOSIGNAL: %ld %s, signal %d\n", r, strerror(errno), caught);
    errno = 0;
    r = send(s[0], "x", 1, 0);
    printf("send: %ld %s, signal %d\n", r, strerror(errno), caught);
    close(s[0]);

    /* Blocked: pending after the write, taken once unblocked. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, &old);
    caught = 0;
    w = broken_pipe();
    r = write(w, "x", 1);
    sigset_t pending;
    sigpending(&pending);
    printf("blocked: write %ld, pending %d, caught %d\n", r, sigismember(&pending, SIGPIPE), caught);
    sigprocmask(SIG_SETMASK, &old, 0);
    printf("unblocked: caught %d\n", caught);
    close(w);

    /* The default action kills the writer. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        int cw = broken_pipe();
        write(cw, "x", 1);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("default: child signaled %d, signal %d\n", WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}

/* processes.c: child processes. fork with the child's exit status, its
 * copy of memory, its pid and parent pid, a pipe from child to parent; a
 * child killed by a signal it raises and one killed by its parent; vfork;
 * waitpid with WNOHANG, wait4 with a struct rusage, waitid's siginfo;
 * execve of a host program (as qemu-user without binfmt_misc runs one)
 * with the descriptors it inherits and without the close-on-exec ones;
 * a failed execve; posix_spawn with file actions, system and popen; a
 * grandchild; fork beside a thread blocked in read, whose child has only
 * the thread that forked; SIGCHLD: its handler's siginfo, ending pause,
 * nanosleep and poll with EINTR, and SIG_IGN letting children reap
 * themselves.
 * Programs are named by absolute path: the environment has no PATH.
 * Nothing printed depends on a pid or on timing. */
#define _GNU_SOURCE
#include "corpus.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int counter = 10;

static void show_status(const char *what, int status) {
    if (WIFEXITED(status))
        printf("%-28s exited %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%-28s killed by signal %d\n", what, WTERMSIG(status));
    else
        printf("%-28s status %#x\n", what, status);
}

/* Everything the child reads from `fd` until end of file. */
static size_t drain(int fd, char *buf, size_t cap) {
    size_t got = 0;
    ssize_t n;
    while (got < cap && (n = read(fd, buf + got, cap - got)) > 0)
        got += (size_t)n;
    return got;
}

static volatile sig_atomic_t chld_seen, chld_code, chld_status;
static volatile pid_t chld_pid;
static void on_chld(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
    chld_seen += sig == SIGCHLD;
    chld_code = info->si_code;
    chld_pid = info->si_pid;
    chld_status = info->si_status;
}

/* Forks a child that exits with `code` at once. */
static pid_t quick_child(int code) {
    fflush(stdout);
    pid_t c = fork();
    if (c == 0)
        _exit(code);
    return c;
}

/* Forks a child that exits after 200 ms: time for the parent to be
 * waiting when its SIGCHLD comes. */
static pid_t slow_child(void) {
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        usleep(200000);
        _exit(0);
    }
    return c;
}

static int blocked_pipe[2];
static void *blocked_reader(void *arg) {
    char c = 0;
    read(blocked_pipe[0], &c, 1);
    return (void *)(long)c;
}

/* The si_code of each SIGCHLD, in order. */
static volatile sig_atomic_t stop_codes[8], stop_codes_seen;
static void stop_handler(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    if (stop_codes_seen < 8)
        stop_codes[stop_codes_seen++] = info->si_code;
}

/* Waits (up to 10 s) until `n` SIGCHLDs have been handled, and a little
 * more, so that a SIGCHLD that should not come would be seen. */
static void wait_codes(int n) {
    for (int i = 0; i < 1000 && stop_codes_seen < n; i++) {
        struct timespec ms = {0, 10 * 1000 * 1000};
        nanosleep(&ms, NULL);
    }
    struct timespec settle = {0, 50 * 1000 * 1000};
    nanosleep(&settle, NULL);
}

int main(void) {
    int status;
    pid_t me = getpid();

    /* fork: the child's status, its own pid, its parent, its copy. */
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        counter += 5;
        printf("child: own pid %s, parent is the forker %s, counter %d\n",
               getpid() != me ? "yes" : "no", getppid() == me ? "yes" : "no", counter);
        fflush(stdout);
        _exit(7);
    }
    pid_t waited = waitpid(child, &status, 0);
    printf("waitpid returned the child %s\n", waited == child ? "yes" : "no");
    show_status("fork, _exit(7):", status);
    printf("parent counter still %d\n", counter);

    /* A pipe from child to parent, more than a pipe holds. */
    int p[2];
    if (pipe(p))
        return 1;
    fflush(stdout);
    child = fork();
    if (child == 0) {
        close(p[0]);
        static char chunk[4096];
        for (int i = 0; i < 64; i++) {
            memset(chunk, 'a' + i % 26, sizeof chunk);
            if (write(p[1], chunk, sizeof chunk) != (ssize_t)sizeof chunk)
                _exit(1);
        }
        _exit(0);
    }
    close(p[1]);
    static char big[1 << 19];
    size_t got = drain(p[0], big, sizeof big);
    unsigned long sum = 0;
    for (size_t i = 0; i < got; i++)
        sum = sum * 31 + (unsigned char)big[i];
    close(p[0]);
    waitpid(child, &status, 0);
    printf("pipe from child: %zu bytes, hash %lx\n", got, sum);
    show_status("writer child:", status);

    /* A child that raises SIGABRT (its stderr closed: what a dying
     * process's runner says about it is not the program's output). */
    fflush(stdout);
    child = fork();
    if (child == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        abort();
    }
    waitpid(child, &status, 0);
    show_status("abort():", status);

    /* A child its parent kills, while it waits in read. */
    if (pipe(p))
        return 1;
    fflush(stdout);
    child = fork();
    if (child == 0) {
        char c;
        close(p[1]);
        read(p[0], &c, 1);
        _exit(0);
    }
    close(p[0]);
    pid_t none = waitpid(child, &status, WNOHANG);
    printf("WNOHANG on a running child: %d\n", (int)none);
    kill(child, SIGTERM);
    waitpid(child, &status, 0);
    show_status("kill(SIGTERM):", status);
    close(p[1]);

    /* wait4 with its rusage; waitid with its siginfo. */
    fflush(stdout);
    child = fork();
    if (child == 0)
        _exit(3);
    struct rusage usage;
    memset(&usage, 0xff, sizeof usage);
    waited = wait4(child, &status, 0, &usage);
    printf("wait4: the child %s, rusage written %s\n", waited == child ? "yes" : "no",
           usage.ru_maxrss >= 0 && usage.ru_utime.tv_usec < 1000000 ? "yes" : "no");
    show_status("wait4:", status);
    fflush(stdout);
    child = fork();
    if (child == 0)
        _exit(4);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    int rc = waitid(P_PID, (id_t)child, &info, WEXITED);
    printf("waitid rc %d signo %d code %s status %d pid matches %s\n", rc, info.si_signo,
           info.si_code == CLD_EXITED ? "CLD_EXITED" : "other", info.si_status,
           info.si_pid == child ? "yes" : "no");
    errno = 0;
    rc = waitpid(-1, &status, 0);
    show_rc(28, "waitpid with no child:", rc);

    /* vfork, then exec of a host program. */
    fflush(stdout);
    child = vfork();
    if (child == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    waitpid(child, &status, 0);
    show_status("vfork + exec /bin/true:", status);

    /* An exec'd program gets the descriptors without FD_CLOEXEC under
     * their numbers, and not the others. */
    int keep[2], lose[2];
    if (pipe(keep) || pipe2(lose, O_CLOEXEC))
        return 1;
    int high = fcntl(keep[1], F_DUPFD, 7); /* the shell takes one digit */
    char script[160];
    snprintf(script, sizeof script,
             "echo through fd %d >&%d; (echo x >&%d) 2>/dev/null && echo lose open || echo "
             "close-on-exec fd closed",
             high, high, lose[1]);
    fflush(stdout);
    child = fork();
    if (child == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(keep[1]);
    close(high);
    char line[128] = {0};
    got = drain(keep[0], line, sizeof line - 1);
    line[got] = 0;
    waitpid(child, &status, 0);
    printf("from the exec'd shell's fd: %s", line);
    show_status("exec /bin/sh -c:", status);
    close(keep[0]);
    close(lose[0]);
    close(lose[1]);

    /* A failed exec returns with errno in the child. */
    fflush(stdout);
    child = fork();
    if (child == 0) {
        execl("/nonexistent/program", "program", (char *)NULL);
        printf("execl of a missing file: %s\n", strerror(errno));
        fflush(stdout);
        execl("/dev/null", "null", (char *)NULL);
        printf("execl of /dev/null: %s\n", strerror(errno));
        fflush(stdout);
        _exit(5);
    }
    waitpid(child, &status, 0);
    show_status("failed execs:", status);

    /* posix_spawn with its standard output on a pipe. */
    if (pipe(p))
        return 1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, p[1], 1);
    posix_spawn_file_actions_addclose(&actions, p[0]);
    char *argv[] = {"echo", "spawned", "and", "piped", NULL};
    fflush(stdout);
    rc = posix_spawn(&child, "/bin/echo", &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(p[1]);
    memset(line, 0, sizeof line);
    got = drain(p[0], line, sizeof line - 1);
    close(p[0]);
    waitpid(child, &status, 0);
    printf("posix_spawn rc %d, read: %s", rc, line);
    show_status("posix_spawn /bin/echo:", status);

    /* system and popen. */
    fflush(stdout);
    status = system("/bin/echo from system");
    show_status("system(echo):", status);
    status = system("exit 3");
    show_status("system(exit 3):", status);
    FILE *f = popen("/bin/echo popen line; /bin/echo second", "r");
    if (!f)
        return 1;
    while (fgets(line, sizeof line, f))
        printf("popen read: %s", line);
    status = pclose(f);
    show_status("pclose:", status);

    /* A grandchild: the child waits for its own child. */
    fflush(stdout);
    child = fork();
    if (child == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0)
            _exit(21);
        waitpid(grandchild, &status, 0);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) + 1 : 1);
    }
    waitpid(child, &status, 0);
    show_status("child of a grandchild's 21:", status);

    /* Fork beside a thread blocked in read: the child has one thread. */
    pthread_t t;
    if (pipe(blocked_pipe) || pthread_create(&t, NULL, blocked_reader, NULL))
        return 1;
    fflush(stdout);
    child = fork();
    if (child == 0) {
        printf("child of a threaded process runs\n");
        fflush(stdout);
        _exit(0);
    }
    waitpid(child, &status, 0);
    show_status("fork beside a thread:", status);
    write(blocked_pipe[1], "z", 1);
    void *got_c;
    pthread_join(t, &got_c);
    printf("the thread read %c\n", (char)(long)got_c);

    /* SIGCHLD with a handler: pause until it comes, its siginfo. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &old);
    child = quick_child(6);
    while (!chld_seen)
        sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("SIGCHLD: code %s, pid matches %s, status %d\n",
           chld_code == CLD_EXITED ? "CLD_EXITED" : "other", chld_pid == child ? "yes" : "no",
           (int)chld_status);
    waitpid(child, &status, 0);
    show_status("its status:", status);

    /* SIGCHLD ends a long sleep and a poll with EINTR. */
    chld_seen = 0;
    child = slow_child();
    struct timespec ten = {10, 0};
    errno = 0;
    rc = nanosleep(&ten, NULL);
    show_rc(28, "nanosleep(10 s):", rc);
    waitpid(child, &status, 0);
    chld_seen = 0;
    child = slow_child();
    errno = 0;
    rc = poll(NULL, 0, 10000);
    show_rc(28, "poll(10 s):", rc);
    waitpid(child, &status, 0);

    /* SIGCHLD ignored: children reap themselves, wait finds none. */
    signal(SIGCHLD, SIG_IGN);
    quick_child(1);
    quick_child(2);
    errno = 0;
    rc = wait(&status);
    show_rc(28, "wait, SIGCHLD ignored:", rc);
    signal(SIGCHLD, SIG_DFL);

    /* A child that stops and goes on: without SA_NOCLDSTOP, SIGCHLD tells
     * each change (CLD_STOPPED, CLD_CONTINUED), then the end. One change
     * at a time: the child ends only when told. (With SA_NOCLDSTOP, only
     * the end: qemu-user 7.2 sends the changes then too, so that case is
     * checked against Linux's behaviour in crates/coprof/tests/run.rs.) */
    for (int nocldstop = 0; nocldstop < 1; nocldstop++) {
        struct sigaction sc;
        memset(&sc, 0, sizeof sc);
        sc.sa_sigaction = stop_handler;
        sc.sa_flags = SA_SIGINFO | (nocldstop ? SA_NOCLDSTOP : 0);
        sigaction(SIGCHLD, &sc, NULL);
        stop_codes_seen = 0;
        int go[2];
        pipe(go);
        pid_t kid = fork();
        if (kid == 0) {
            raise(SIGSTOP);
            char c;
            read(go[0], &c, 1);
            _exit(4);
        }
        waitpid(kid, &status, WUNTRACED);
        printf("SA_NOCLDSTOP %d: waitpid WUNTRACED stopped %d by %d\n", nocldstop,
               WIFSTOPPED(status), WIFSTOPPED(status) ? WSTOPSIG(status) : 0);
        wait_codes(nocldstop ? 0 : 1);
        kill(kid, SIGCONT);
        waitpid(kid, &status, WCONTINUED);
        printf("SA_NOCLDSTOP %d: waitpid WCONTINUED continued %d\n", nocldstop, WIFCONTINUED(status));
        wait_codes(nocldstop ? 0 : 2);
        write(go[1], "x", 1);
        waitpid(kid, &status, 0);
        wait_codes(nocldstop ? 1 : 3);
        printf("SA_NOCLDSTOP %d: SIGCHLD codes", nocldstop);
        for (int i = 0; i < stop_codes_seen; i++)
            printf(" %s", stop_codes[i] == CLD_STOPPED ? "stopped" : stop_codes[i] == CLD_CONTINUED ? "continued"
                          : stop_codes[i] == CLD_EXITED ? "exited" : "other");
        printf(", exit status %d\n", WEXITSTATUS(status));
        close(go[0]);
        close(go[1]);
    }
    signal(SIGCHLD, SIG_DFL);
    return 0;
}

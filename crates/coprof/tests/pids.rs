//! `--pid N`: the program sees N as its own process id, its threads are
//! numbered after it, and every id that goes to the host or comes back
//! from it is translated, so that a forked child, a signal's sender, a
//! wait and a `/proc/PID` path all agree with what the program was told.

mod common;

use common::{compile, coprof, json_of, stdout_of};
use std::path::Path;

/// Prints every id it is told and checks that they agree: its pid and
/// first thread's id, a second thread's id (after locking a mutex, which
/// stores the thread id), the sender of a signal sent to itself, `kill(pid,
/// 0)`, its own `/proc/PID/cmdline`, its group by pid, the credentials of
/// a socket's peer and of a message it sends itself, and a forked child
/// that reports its pid and parent through a pipe, signals the parent, and
/// is killed and waited for by the pid `fork` returned (not with an
/// argument).
const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t sender;
static void on_usr1(int sig, siginfo_t *info, void *ctx) { sender = info->si_pid; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared;

static void *work(void *arg) {
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        shared++;
        pthread_mutex_unlock(&lock);
    }
    *(pid_t *)arg = (pid_t)syscall(SYS_gettid);
    return NULL;
}

int main(int argc, char **argv) {
    pid_t me = getpid();
    printf("pid %d tid %ld\n", me, syscall(SYS_gettid));
    pid_t worker = 0;
    pthread_t t;
    pthread_create(&t, NULL, work, &worker);
    pthread_join(t, NULL);
    printf("thread tid %d\n", worker);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    kill(me, SIGUSR1);
    printf("self signal from %d\n", sender);
    printf("kill self 0: %d\n", kill(me, 0));

    char path[64], buf[256] = {0};
    snprintf(path, sizeof path, "/proc/%d/cmdline", me);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        read(fd, buf, sizeof buf - 1);
        close(fd);
    }
    char *name = strrchr(buf, '/');
    printf("cmdline %s\n", name ? name + 1 : buf);
    printf("own group by pid: %d\n", getpgid(me) == getpgid(0) && getpgid(me) > 0);

    /* Credentials over a socket: the peer's (SO_PEERCRED), and ones
       sent and received (SCM_CREDENTIALS), which the kernel takes only
       with the sender's own pid. */
    int sv[2], on = 1;
    socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
    struct ucred peer = {0};
    socklen_t peer_len = sizeof peer;
    getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &peer, &peer_len);
    printf("peer's pid is own: %d\n", peer.pid == me);
    setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
    struct ucred mine = {me, getuid(), getgid()};
    char byte = 'x', cbuf[CMSG_SPACE(sizeof mine)];
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof mine);
    memcpy(CMSG_DATA(c), &mine, sizeof mine);
    printf("credentials sent: %d\n", sendmsg(sv[0], &msg, 0) == 1);
    memset(cbuf, 0, sizeof cbuf);
    msg.msg_controllen = sizeof cbuf;
    struct ucred got = {0};
    if (recvmsg(sv[1], &msg, MSG_DONTWAIT) == 1 && (c = CMSG_FIRSTHDR(&msg)) && c->cmsg_type == SCM_CREDENTIALS)
        memcpy(&got, CMSG_DATA(c), sizeof got);
    printf("credentials received are own: %d\n", got.pid == me);
    fflush(stdout);
    if (argc > 1)
        return 0; /* no child, whose pid is the host's */

    int p[2];
    pipe(p);
    pid_t child = fork();
    if (child == 0) {
        pid_t ids[2] = {getpid(), getppid()};
        write(p[1], ids, sizeof ids);
        kill(ids[1], SIGUSR1);
        for (;;)
            pause();
    }
    pid_t ids[2];
    read(p[0], ids, sizeof ids);
    printf("child's pid is fork's: %d\n", ids[0] == child);
    printf("child's parent %d\n", ids[1]);
    for (int i = 0; i < 5000 && sender != child; i++)
        usleep(1000); /* at most 5 s: the child is killed below either way */
    printf("signal from the child: %d\n", sender == child);
    kill(child, SIGTERM);
    int status = 0;
    pid_t waited = waitpid(child, &status, 0);
    printf("waited: %d, killed by %d\n", waited == child,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
"#;

fn run(prog: &Path, options: &[&str]) -> String {
    stdout_of(
        coprof()
            .arg("run")
            .args(options)
            .arg("--")
            .arg(prog)
            .timeout(std::time::Duration::from_secs(60)),
    )
}

/// The lines every run prints, whatever its pid.
const AGREED: &str = "kill self 0: 0
cmdline ids
own group by pid: 1
peer's pid is own: 1
credentials sent: 1
credentials received are own: 1
child's pid is fork's: 1
";

const AFTER_CHILD: &str = "signal from the child: 1
waited: 1, killed by 15
";

#[test]
fn the_program_sees_the_pid_given_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "ids", PROGRAM);
    let out = run(&prog, &["--pid", "4242"]);
    assert_eq!(
        out,
        format!(
            "pid 4242 tid 4242\nthread tid 4243\nself signal from 4242\n{AGREED}\
             child's parent 4242\n{AFTER_CHILD}"
        )
    );
}

#[test]
fn without_a_pid_the_program_sees_the_hosts_and_they_agree() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "ids", PROGRAM);
    let out = run(&prog, &[]);
    let pid: i64 = out
        .strip_prefix("pid ")
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {out}"));
    assert_ne!(pid, 4242);
    assert_eq!(
        out,
        format!(
            "pid {pid} tid {pid}\nthread tid {}\nself signal from {pid}\n{AGREED}\
             child's parent {pid}\n{AFTER_CHILD}",
            pid + 1
        )
    );
}

/// The run's pid is no longer in the load values: with it given, two runs
/// of a program that loads its pid and thread ids give the same value
/// profile, and the pid loaded is the one given.
#[test]
fn with_a_pid_value_profiles_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let prog = compile(dir.path(), "ids", PROGRAM);
    let profile = || {
        json_of(
            coprof()
                .args(["values", "--exact", "--json"])
                .args(["--pid", "4242", "--random-seed", "3", "--clear-env"])
                .arg("--")
                .arg(&prog)
                .arg("no-child"),
        )
    };
    let (first, second) = (profile(), profile());
    assert_eq!(first, second);
    let pcs = first["pcs"].as_array().expect("the loads' values");
    let loads_pid = pcs.iter().any(|pc| {
        pc["values"]
            .as_array()
            .is_some_and(|v| v.iter().any(|v| v["value"] == 4242))
    });
    assert!(loads_pid, "no load of the pid given among {pcs:?}");
}

#[test]
fn a_pid_linux_could_not_give_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("absent");
    for (pid, option) in [
        ("0", "run"),
        ("1", "values"),
        ("4194305", "run"),
        ("x", "profile"),
    ] {
        let out = coprof()
            .args([option, "--pid", pid, "--"])
            .arg(&prog)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--pid {pid}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--pid")
                && err.contains("not a process id a program may be given: give 2 to 4194304"),
            "{err}"
        );
    }
    let trace = common::gen_trace(dir.path(), "mixed", 1000, 1);
    let out = coprof()
        .args(["values", "--pid", "7"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
}

/// Prints its pid and its parent's.
const SHOW_IDS: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    printf("shown: pid %d parent %d\n", getpid(), getppid());
    return 0;
}
"#;

/// Runs `show` in a forked child, then replaces itself by it.
const EXECS: &str = r#"
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    printf("pid %d\n", getpid());
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        execl(argv[1], "show", (char *)0);
        _exit(9);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("child %d exited %d\n", child, WEXITSTATUS(status));
    fflush(stdout);
    execl(argv[1], "show", (char *)0);
    return 9;
}
"#;

/// A RISC-V program a child `execve`s runs in a simulator of its own, and
/// so does the one the program replaces itself by: both keep the swap, the
/// child seeing its parent as the pid given, the program still seeing it
/// as its own.
#[test]
fn the_pid_given_outlives_execve() {
    let dir = tempfile::tempdir().unwrap();
    let show = compile(dir.path(), "show", SHOW_IDS);
    let execs = compile(dir.path(), "execs", EXECS);
    let out = stdout_of(
        coprof()
            .args(["run", "--pid", "4242", "--"])
            .arg(&execs)
            .arg(&show)
            .timeout(std::time::Duration::from_secs(60)),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], "pid 4242");
    let child: i64 = lines[2]
        .strip_prefix("child ")
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no child in {out}"));
    assert_eq!(lines[1], format!("shown: pid {child} parent 4242"));
    assert_eq!(lines[2], format!("child {child} exited 0"));
    assert!(lines[3].starts_with("shown: pid 4242 parent "), "{out}");
}

/// Reads its own `/proc/self/comm`, `stat` and `status`, and a second
/// thread's `/proc/thread-self/comm` and `stat` once it named itself, the
/// signals each thread blocks in its own status and the other's, then
/// names that thread from the first (a write to its `comm` file), and
/// prints what they say against what the calls say: the same whether it
/// runs alone or in the simulator, with or without a pid given.
const PROC_SELF: &str = r#"
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static char text[8192];
static const char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(text, sizeof text, "%s: cannot open", path); return text; }
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}
/* The stat line's name and its fields 4 (ppid) and 20 (threads). */
static void stat_of(const char *path, long id) {
    const char *s = slurp(path);
    const char *open = strchr(s, '('), *close = strrchr(s, ')');
    printf("%s: id is its own %d, name %.*s", path, atol(s) == id,
           (int)(close - open - 1), open + 1);
    long field[24] = {0};
    const char *p = close + 2;
    for (int i = 3; i < 24 && p; i++) {
        field[i] = atol(p);
        p = strchr(p, ' ');
        if (p) p++;
    }
    printf(", ppid is its parent %d, threads %ld\n", field[4] == getppid(), field[20]);
}
static long status_field(const char *key) {
    const char *line = strstr(slurp("/proc/self/status"), key);
    return line ? strtol(line + strlen(key), NULL, 0) : -1;
}
/* Bit SIG of the set KEY ("SigBlk:") of the status file PATH. */
static unsigned long status_bit(const char *path, const char *key, int sig) {
    const char *line = strstr(slurp(path), key);
    return line ? strtoul(line + strlen(key), NULL, 16) >> (sig - 1) & 1 : 9;
}
static pthread_barrier_t step;
static long worker_tid;
static void *work(void *arg) {
    prctl(PR_SET_NAME, "worker");
    printf("thread comm: %s", slurp("/proc/thread-self/comm"));
    long tid = syscall(SYS_gettid);
    stat_of("/proc/thread-self/stat", tid);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", tid);
    printf("by its id: %s", slurp(path));
    snprintf(path, sizeof path, "/proc/%d/task/%ld/comm", getpid(), tid);
    printf("by its task: %s", slurp(path));
    snprintf(path, sizeof path, "/proc/%ld/status", tid);
    const char *line = strstr(slurp(path), "\nPid:");
    printf("its status pid is its id %d\n", line && atol(line + 5) == tid);
    /* Blocked in this thread only: its own status says so, the
       process's (its first thread's) does not. */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    worker_tid = tid;
    /* Read once the first thread is out of pthread_create, which blocks
       every signal in it while it starts a thread. */
    pthread_barrier_wait(&step);
    printf("worker: SIGUSR1 blocked in its own status %lu, in the process's %lu, "
           "SIGUSR2 in the process's %lu\n",
           status_bit("/proc/thread-self/status", "SigBlk:", SIGUSR1),
           status_bit("/proc/self/status", "SigBlk:", SIGUSR1),
           status_bit("/proc/self/status", "SigBlk:", SIGUSR2));
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step);
    return NULL;
}
/* A file's first line, opened relative to directory DIR. */
static const char *line_at(int dir, const char *name) {
    static char line[64];
    strcpy(line, "?");
    int fd = openat(dir, name, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, line, sizeof line - 1);
        line[n > 0 ? n : 0] = 0;
        line[strcspn(line, "\n")] = 0;
        close(fd);
    }
    return line;
}
/* Lists /proc/self/task twice (rewound between), each thread's name read
   relative to the directory, then a file relative to /proc/self. */
static void list_tasks(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) { printf("task: cannot open\n"); return; }
    int n, mine, worker;
    char names[256];
    for (int pass = 0; pass < 2; pass++) {
        rewinddir(d);
        n = mine = worker = 0;
        names[0] = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            long tid = atol(e->d_name);
            n++;
            mine += tid == syscall(SYS_gettid);
            worker += tid == worker_tid;
            char rel[64];
            snprintf(rel, sizeof rel, "%s/comm", e->d_name);
            strcat(names, " ");
            strcat(names, line_at(dirfd(d), rel));
        }
    }
    closedir(d);
    printf("task: %d threads, main's %d, worker's %d, names%s\n", n, mine, worker, names);
    int self = open("/proc/self", O_RDONLY | O_DIRECTORY);
    printf("comm under /proc/self: %s\n", line_at(self, "comm"));
    char exe[4096];
    ssize_t len = readlinkat(self, "exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = 0;
    printf("exe under /proc/self: %s\n", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe);
    close(self);
}
int main(void) {
    signal(SIGUSR1, SIG_IGN);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    sigprocmask(SIG_BLOCK, &usr2, NULL);
    printf("comm: %s", slurp("/proc/self/comm"));
    stat_of("/proc/self/stat", getpid());
    const char *line = strstr(slurp("/proc/self/status"), "Name:");
    printf("status name: %.*s\n", (int)strcspn(line + 6, "\n"), line + 6);
    printf("status pid is its own %d, tgid %d, ppid is its parent %d\n",
           status_field("\nPid:") == getpid(), status_field("\nTgid:") == getpid(),
           status_field("\nPPid:") == getppid());
    unsigned long blocked = strtoul(strstr(slurp("/proc/self/status"), "SigBlk:") + 7, NULL, 16);
    unsigned long ignored = strtoul(strstr(slurp("/proc/self/status"), "SigIgn:") + 7, NULL, 16);
    unsigned long caught = strtoul(strstr(slurp("/proc/self/status"), "SigCgt:") + 7, NULL, 16);
    printf("SIGUSR2 blocked %lu, SIGUSR1 ignored %lu, SIGUSR1 caught %lu\n",
           blocked >> (SIGUSR2 - 1) & 1, ignored >> (SIGUSR1 - 1) & 1,
           caught >> (SIGUSR1 - 1) & 1);
    char path[64], link[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", getpid());
    ssize_t n = readlink(path, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
    printf("exe by pid: %s\n", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
    pthread_t t;
    pthread_barrier_init(&step, NULL, 2);
    pthread_create(&t, NULL, work, NULL);
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step);
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", worker_tid);
    printf("main: SIGUSR1 blocked in the worker's status %lu, in its own %lu\n",
           status_bit(path, "SigBlk:", SIGUSR1),
           status_bit("/proc/thread-self/status", "SigBlk:", SIGUSR1));
    list_tasks();
    /* Named by another thread, which writes its comm file. */
    pthread_setname_np(t, "renamed");
    char got[16] = "?";
    pthread_getname_np(t, got, sizeof got);
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", worker_tid);
    printf("named by main: %s, its comm: %s", got, slurp(path));
    /* pwrite is refused (a sequential file); writev names it by each
       segment in turn, the last one last. */
    int comm = open(path, O_WRONLY);
    ssize_t r = pwrite(comm, "bypwrite", 8, 3);
    printf("pwrite: %s, ", r < 0 && errno == ESPIPE ? "ESPIPE" : "written");
    printf("its comm: %s", slurp(path));
    struct iovec parts[2] = {{"first", 5}, {"second", 6}};
    printf("writev wrote %zd, ", writev(comm, parts, 2));
    printf("its comm: %s", slurp(path));
    close(comm);
    pthread_barrier_wait(&step);
    pthread_join(t, NULL);
    return 0;
}
"#;

#[test]
fn its_own_proc_files_name_the_program_and_the_ids_it_sees() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["-static", "-O1", "-pthread"];
    let prog = common::compile_with(dir.path(), "procself", PROC_SELF, &flags);
    // The same name, in a directory of its own.
    let host_dir = dir.path().join("host");
    std::fs::create_dir(&host_dir).unwrap();
    let host = common::host_compile(&host_dir, "procself", PROC_SELF, &flags);
    let alone = std::process::Command::new(&host).output().unwrap();
    let alone = String::from_utf8_lossy(&alone.stdout).into_owned();
    // What Linux says, checked here so that the comparison means
    // something: the host's files of coprof's process would name coprof
    // and its own ids and signals.
    assert_eq!(
        alone,
        "comm: procself\n\
         /proc/self/stat: id is its own 1, name procself, ppid is its parent 1, threads 1\n\
         status name: procself\n\
         status pid is its own 1, tgid 1, ppid is its parent 1\n\
         SIGUSR2 blocked 1, SIGUSR1 ignored 1, SIGUSR1 caught 0\n\
         exe by pid: procself\n\
         thread comm: worker\n\
         /proc/thread-self/stat: id is its own 1, name worker, ppid is its parent 1, threads 2\n\
         by its id: worker\n\
         by its task: worker\n\
         its status pid is its id 1\n\
         worker: SIGUSR1 blocked in its own status 1, in the process's 0, SIGUSR2 in the process's 1\n\
         main: SIGUSR1 blocked in the worker's status 1, in its own 0\n\
         task: 2 threads, main's 1, worker's 1, names procself worker\n\
         comm under /proc/self: procself\n\
         exe under /proc/self: procself\n\
         named by main: renamed, its comm: renamed\n\
         pwrite: ESPIPE, its comm: renamed\n\
         writev wrote 11, its comm: second\n"
    );
    assert_eq!(run(&prog, &[]), alone);
    assert_eq!(run(&prog, &["--pid", "4242"]), alone);
}

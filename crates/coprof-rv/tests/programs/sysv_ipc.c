/* sysv_ipc.c: System V IPC, the host kernel's objects as under qemu-user.
 * A shared memory segment attached twice (at an address the kernel picks
 * and at one given, rounded with SHM_RND), written through one attachment
 * and read through the other, read by a forked child that writes back,
 * attached read-only (a write then faults), its IPC_STAT (size, attach
 * count) and removal; a semaphore set's values set and read in all ways
 * (SETVAL, SETALL, GETALL, GETVAL, GETNCNT), semop and semtimedop, a
 * parent and child taking turns through it, EAGAIN with IPC_NOWAIT and
 * its IPC_STAT (sem_nsems); a message queue, messages sent and received
 * by type (the first, a given type, the lowest up to a bound), one too
 * long for the buffer (E2BIG, then MSG_NOERROR), ENOMSG when empty, and
 * its IPC_STAT. Every object is private (IPC_PRIVATE) and removed before
 * the end; what is printed does not depend on ids or addresses. */
#define _GNU_SOURCE
#include "corpus.h"

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

static void show(const char *what, long v) { printf("%-40s %ld\n", what, v); }

static sigjmp_buf fault_jump;
static void on_segv(int sig) {
    (void)sig;
    siglongjmp(fault_jump, 1);
}

static void shared_memory(void) {
    int id = shmget(IPC_PRIVATE, 10000, IPC_CREAT | 0600);
    show("shmget", id >= 0);
    char *a = shmat(id, NULL, 0);
    show("shmat anywhere", a != (void *)-1);
    show("page aligned", ((unsigned long)a & 4095) == 0);
    show("starts zeroed", a[0] == 0 && a[9999] == 0);
    /* A second attachment, at an address given off a page boundary and
     * rounded down by SHM_RND, sees the same memory. */
    char *want = (char *)0x3000000000UL + 123;
    char *b = shmat(id, want, SHM_RND);
    show("shmat at a rounded address", b == (char *)0x3000000000UL);
    strcpy(a, "through the first");
    printf("%-40s %s\n", "read through the second", b);
    show("unaligned without SHM_RND", shmat(id, want, 0) == (void *)-1 && errno == EINVAL);
    /* An address that rounds down to 0 asks for none. */
    char *c = shmat(id, (void *)100, SHM_RND);
    show("rounded to 0: anywhere", c != (void *)-1 && c != NULL);
    show("shmdt it", shmdt(c));
    struct shmid_ds ds;
    show("IPC_STAT", shmctl(id, IPC_STAT, &ds));
    show("shm_segsz", (long)ds.shm_segsz);
    show("shm_nattch (two)", (long)ds.shm_nattch);

    /* A forked child reads it and writes back. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = strcmp(b, "through the first") == 0;
        strcpy(a + 5000, "from the child");
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    show("child read it", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("%-40s %s\n", "the child's write", b + 5000);

    /* Read-only: reads work, a write faults. */
    char *r = shmat(id, NULL, SHM_RDONLY);
    show("shmat SHM_RDONLY", r != (void *)-1);
    printf("%-40s %s\n", "read-only read", r + 5000);
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, &old);
    int faulted = 0;
    if (sigsetjmp(fault_jump, 1) == 0) {
        *(volatile char *)r = 'x';
    } else {
        faulted = 1;
    }
    sigaction(SIGSEGV, &old, NULL);
    show("a write to it faults", faulted);

    show("shmdt read-only", shmdt(r));
    show("shmdt second", shmdt(b));
    show("shmdt again", shmdt(b) == -1 && errno == EINVAL);
    shmctl(id, IPC_STAT, &ds);
    show("shm_nattch (one)", (long)ds.shm_nattch);
    show("IPC_RMID", shmctl(id, IPC_RMID, NULL));
    /* Still attached once: usable until detached. */
    strcpy(a, "after IPC_RMID");
    printf("%-40s %s\n", "still there", a);
    show("shmdt first", shmdt(a));
    show("shmat after removal", shmat(id, NULL, 0) == (void *)-1);
    show("shmget of a bad size", shmget(IPC_PRIVATE, 0, IPC_CREAT | 0600) == -1 && errno == EINVAL);
}

static void semaphores(void) {
    int id = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
    show("semget", id >= 0);
    unsigned short set[3] = {4, 0, 7};
    union semun arg = {.array = set};
    show("SETALL", semctl(id, 0, SETALL, arg));
    arg.val = 2;
    show("SETVAL 1", semctl(id, 1, SETVAL, arg));
    unsigned short got[3] = {0};
    arg.array = got;
    show("GETALL", semctl(id, 0, GETALL, arg));
    printf("%-40s %u %u %u\n", "values", got[0], got[1], got[2]);
    struct sembuf ops[2] = {{0, -3, 0}, {2, 5, 0}};
    show("semop", semop(id, ops, 2));
    show("GETVAL 0", semctl(id, 0, GETVAL));
    show("GETVAL 2", semctl(id, 2, GETVAL));
    struct sembuf take = {1, -5, IPC_NOWAIT};
    show("semop would wait: EAGAIN", semop(id, &take, 1) == -1 && errno == EAGAIN);
    struct timespec ts = {0, 1000000};
    take.sem_flg = 0;
    show("semtimedop times out: EAGAIN", semtimedop(id, &take, 1, &ts) == -1 && errno == EAGAIN);
    show("GETNCNT", semctl(id, 1, GETNCNT));
    struct semid_ds ds;
    arg.buf = &ds;
    show("IPC_STAT", semctl(id, 0, IPC_STAT, arg));
    show("sem_nsems", (long)ds.sem_nsems);
    show("mode", (long)(ds.sem_perm.mode & 0777));

    /* A child and its parent take turns: each waits on its own
     * semaphore and posts the other's. */
    arg.val = 0;
    semctl(id, 0, SETVAL, arg);
    semctl(id, 1, SETVAL, arg);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++) {
            struct sembuf wait_mine = {1, -1, 0}, post_theirs = {0, 1, 0};
            semop(id, &wait_mine, 1);
            printf("child turn %d\n", i);
            fflush(stdout);
            semop(id, &post_theirs, 1);
        }
        _exit(0);
    }
    for (int i = 0; i < 3; i++) {
        struct sembuf post_theirs = {1, 1, 0}, wait_mine = {0, -1, 0};
        printf("parent turn %d\n", i);
        fflush(stdout);
        semop(id, &post_theirs, 1);
        semop(id, &wait_mine, 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    show("child exit", WEXITSTATUS(status));
    show("IPC_RMID", semctl(id, 0, IPC_RMID));
    show("semop after removal", semop(id, ops, 1) == -1 && (errno == EINVAL || errno == EIDRM));
}

struct message {
    long mtype;
    char mtext[32];
};

static void message_queues(void) {
    int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    show("msgget", id >= 0);
    const char *texts[] = {"three", "one", "two", "one again"};
    long types[] = {3, 1, 2, 1};
    for (int i = 0; i < 4; i++) {
        struct message m = {.mtype = types[i]};
        strcpy(m.mtext, texts[i]);
        show("msgsnd", msgsnd(id, &m, strlen(texts[i]) + 1, 0));
    }
    struct msqid_ds ds;
    show("IPC_STAT", msgctl(id, IPC_STAT, &ds));
    show("msg_qnum", (long)ds.msg_qnum);
    show("msg_cbytes", (long)ds.msg_cbytes);
    struct message m;
    long n = msgrcv(id, &m, sizeof m.mtext, 2, 0);
    printf("%-40s %ld %ld %s\n", "type 2", n, m.mtype, m.mtext);
    n = msgrcv(id, &m, sizeof m.mtext, -2, 0);
    printf("%-40s %ld %ld %s\n", "lowest type up to 2", n, m.mtype, m.mtext);
    n = msgrcv(id, &m, sizeof m.mtext, 0, 0);
    printf("%-40s %ld %ld %s\n", "the first", n, m.mtype, m.mtext);
    show("too long: E2BIG", msgrcv(id, &m, 3, 0, 0) == -1 && errno == E2BIG);
    n = msgrcv(id, &m, 3, 0, MSG_NOERROR);
    printf("%-40s %ld %ld %.3s\n", "MSG_NOERROR cuts it", n, m.mtype, m.mtext);
    show("empty: ENOMSG", msgrcv(id, &m, sizeof m.mtext, 0, IPC_NOWAIT) == -1 && errno == ENOMSG);
    show("IPC_RMID", msgctl(id, IPC_RMID, NULL));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    shared_memory();
    semaphores();
    message_queues();
    return 0;
}

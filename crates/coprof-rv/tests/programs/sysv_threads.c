/* sysv_threads.c: System V semaphores and message queues between threads
 * of one process, where the thread that lets a wait through is another of
 * the same program: a semop that waits for a thread to raise the value, a
 * ping-pong of 200 turns over two semaphores, a semop with two operations
 * that waits at the second, one that fails at once on an operation with
 * IPC_NOWAIT, semtimedop that times out beside a busy thread and one that
 * another thread lets through before its timeout, a msgrcv that waits for
 * a thread's message of the type it asks for (and MSG_COPY refused
 * without IPC_NOWAIT), a msgsnd that waits for room a reader thread
 * makes, a semop that a signal from another thread interrupts with EINTR
 * although its handler has SA_RESTART, and a msgrcv that waits while the
 * queue is removed (EIDRM). What is printed does not depend on how the
 * threads interleave. */
#define _GNU_SOURCE
#include "corpus.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
};

static void check(int ok, const char *what) {
    if (!ok) {
        printf("FAILED: %s (errno %d)\n", what, errno);
        exit(1);
    }
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Work a thread does before it lets the other through, long enough that
 * the other is waiting by then. */
static unsigned long busy(unsigned long n) {
    volatile unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005UL + i;
    return x;
}

static int sems;
static int queue;

static int sem_change(int num, int change, int flags) {
    struct sembuf op = {(unsigned short)num, (short)change, (short)flags};
    return semop(sems, &op, 1);
}

static void set_value(int num, int v) {
    union semun arg = {.val = v};
    check(semctl(sems, num, SETVAL, arg) == 0, "SETVAL");
}

/* 1. A thread raises semaphore 0 after some work. */
static void *raiser(void *arg) {
    (void)arg;
    busy(2000000);
    check(sem_change(0, 1, 0) == 0, "raise");
    return NULL;
}

/* 2. The other side of the ping-pong: takes 1, gives 2. */
#define TURNS 200
static void *ponger(void *arg) {
    (void)arg;
    for (int i = 0; i < TURNS; i++) {
        check(sem_change(1, -1, 0) == 0, "pong takes");
        check(sem_change(2, 1, 0) == 0, "pong gives");
    }
    return NULL;
}

/* 4. Raises semaphore 3 after a short pause. */
static void *late_raiser(void *arg) {
    pause_ms((long)arg);
    check(sem_change(3, 1, 0) == 0, "late raise");
    return NULL;
}

/* 5. Busy for longer than the other's timeout. */
static void *spinner(void *arg) {
    (void)arg;
    busy(3000000);
    return NULL;
}

struct message {
    long type;
    char text[64];
};

/* 6. Sends a message of type 1, then one of type 2. */
static void *sender(void *arg) {
    (void)arg;
    busy(1000000);
    struct message m = {1, "first, of type 1"};
    check(msgsnd(queue, &m, sizeof m.text, 0) == 0, "send 1");
    busy(1000000);
    struct message n = {2, "second, of type 2"};
    check(msgsnd(queue, &n, sizeof n.text, 0) == 0, "send 2");
    return NULL;
}

/* 7. Takes every message, after a pause, until one of type 9. */
static int taken;
static void *reader(void *arg) {
    (void)arg;
    pause_ms(20);
    struct message m;
    for (;;) {
        check(msgrcv(queue, &m, sizeof m.text, 0, 0) == sizeof m.text, "reader");
        if (m.type == 9)
            break;
        taken++;
    }
    return NULL;
}

/* 8. A signal for the main thread while it waits. */
static volatile sig_atomic_t handled;
static void on_usr1(int sig) {
    (void)sig;
    handled = 1;
}
static int waiting;
static pthread_t main_thread;
static void *interrupter(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&waiting, __ATOMIC_SEQ_CST))
        sched_yield();
    pause_ms(50);
    pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

/* 9. Removes the queue while the main thread waits on it. */
static void *remover(void *arg) {
    (void)arg;
    pause_ms(50);
    check(msgctl(queue, IPC_RMID, NULL) == 0, "remove");
    return NULL;
}

int main(void) {
    pthread_t t;
    sems = semget(IPC_PRIVATE, 4, IPC_CREAT | 0600);
    check(sems >= 0, "semget");
    queue = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    check(queue >= 0, "msgget");

    /* 1. */
    check(pthread_create(&t, NULL, raiser, NULL) == 0, "create raiser");
    show_rc(44, "semop waits for a thread to raise", sem_change(0, -1, 0));
    pthread_join(t, NULL);
    printf("%-44s %d\n", "value after", semctl(sems, 0, GETVAL));

    /* 2. */
    check(pthread_create(&t, NULL, ponger, NULL) == 0, "create ponger");
    int turns = 0;
    for (int i = 0; i < TURNS; i++) {
        check(sem_change(1, 1, 0) == 0, "ping gives");
        check(sem_change(2, -1, 0) == 0, "ping takes");
        turns++;
    }
    pthread_join(t, NULL);
    printf("%-44s %d\n", "ping-pong turns", turns);

    /* 3. Two operations: the first can be done, the second waits; the
     * whole call then waits, and neither is done until both can be. */
    set_value(0, 1);
    check(pthread_create(&t, NULL, late_raiser, (void *)20L) == 0, "create");
    struct sembuf two[2] = {{0, -1, 0}, {3, -1, 0}};
    show_rc(44, "semop waits at its second operation", semop(sems, two, 2));
    pthread_join(t, NULL);
    printf("%-44s %d %d\n", "values after", semctl(sems, 0, GETVAL), semctl(sems, 3, GETVAL));
    /* The same, with IPC_NOWAIT on the operation that cannot be done. */
    set_value(0, 1);
    check(pthread_create(&t, NULL, spinner, NULL) == 0, "create spinner");
    struct sembuf nowait[2] = {{0, -1, 0}, {3, -1, IPC_NOWAIT}};
    show_rc(44, "semop fails at once on its IPC_NOWAIT op", semop(sems, nowait, 2));
    printf("%-44s %d\n", "value of the first left as it was", semctl(sems, 0, GETVAL));
    pthread_join(t, NULL);

    /* 4. semtimedop let through before its timeout. */
    check(pthread_create(&t, NULL, late_raiser, (void *)20L) == 0, "create");
    struct timespec long_wait = {5, 0};
    struct sembuf take3 = {3, -1, 0};
    show_rc(44, "semtimedop let through in time", semtimedop(sems, &take3, 1, &long_wait));
    pthread_join(t, NULL);

    /* 5. semtimedop that times out while another thread runs. */
    check(pthread_create(&t, NULL, spinner, NULL) == 0, "create spinner");
    struct timespec short_wait = {0, 30 * 1000 * 1000};
    show_rc(44, "semtimedop times out", semtimedop(sems, &take3, 1, &short_wait));
    pthread_join(t, NULL);

    /* 6. msgrcv of type 2 waits through the message of type 1. */
    struct message m;
    check(pthread_create(&t, NULL, sender, NULL) == 0, "create sender");
    long n = msgrcv(queue, &m, sizeof m.text, 2, 0);
    printf("%-44s %ld %ld %s\n", "msgrcv of type 2 waits for it", n, m.type, m.text);
    pthread_join(t, NULL);
    n = msgrcv(queue, &m, sizeof m.text, 0, IPC_NOWAIT);
    printf("%-44s %ld %ld %s\n", "the message of type 1 still there", n, m.type, m.text);
    show_rc(44, "then empty", msgrcv(queue, &m, sizeof m.text, 0, IPC_NOWAIT));
    /* MSG_COPY without IPC_NOWAIT is refused, beside a thread as alone. */
    check(pthread_create(&t, NULL, spinner, NULL) == 0, "create spinner");
    show_rc(44, "msgrcv MSG_COPY without IPC_NOWAIT", msgrcv(queue, &m, sizeof m.text, 0, MSG_COPY));
    pthread_join(t, NULL);

    /* 7. msgsnd waits for room: a queue of room for 4 messages, 10 sent. */
    struct msqid_ds ds;
    check(msgctl(queue, IPC_STAT, &ds) == 0, "IPC_STAT");
    ds.msg_qbytes = 4 * sizeof m.text;
    check(msgctl(queue, IPC_SET, &ds) == 0, "IPC_SET");
    check(pthread_create(&t, NULL, reader, NULL) == 0, "create reader");
    int sent = 0;
    for (int i = 0; i < 10; i++) {
        struct message s = {3, "to the reader"};
        if (msgsnd(queue, &s, sizeof s.text, 0) == 0)
            sent++;
    }
    struct message end = {9, "end"};
    check(msgsnd(queue, &end, sizeof end.text, 0) == 0, "send end");
    pthread_join(t, NULL);
    printf("%-44s %d %d\n", "sent and taken through a full queue", sent, taken);
    struct message full = {3, "x"};
    check(msgsnd(queue, &full, sizeof full.text, 0) == 0, "fill 1");
    check(msgsnd(queue, &full, sizeof full.text, 0) == 0, "fill 2");
    check(msgsnd(queue, &full, sizeof full.text, 0) == 0, "fill 3");
    check(msgsnd(queue, &full, sizeof full.text, 0) == 0, "fill 4");
    show_rc(44, "msgsnd to a full queue with IPC_NOWAIT", msgsnd(queue, &full, sizeof full.text, IPC_NOWAIT));
    for (int i = 0; i < 4; i++)
        check(msgrcv(queue, &m, sizeof m.text, 0, IPC_NOWAIT) > 0, "empty it");

    /* 8. A signal interrupts a waiting semop: EINTR, even with
     * SA_RESTART (System V calls are never restarted). */
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    set_value(0, 0);
    check(pthread_create(&t, NULL, interrupter, NULL) == 0, "create interrupter");
    __atomic_store_n(&waiting, 1, __ATOMIC_SEQ_CST);
    show_rc(44, "semop interrupted by a signal", sem_change(0, -1, 0));
    printf("%-44s %d\n", "the handler ran", (int)handled);
    pthread_join(t, NULL);

    /* 9. The queue removed while msgrcv waits on it. */
    check(pthread_create(&t, NULL, remover, NULL) == 0, "create remover");
    show_rc(44, "msgrcv on a queue removed meanwhile", msgrcv(queue, &m, sizeof m.text, 0, 0));
    pthread_join(t, NULL);

    check(semctl(sems, 0, IPC_RMID) == 0, "remove the set");
    printf("done\n");
    return 0;
}

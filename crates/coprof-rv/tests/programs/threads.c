/* threads.c: POSIX threads. pthread_create and pthread_join with return
 * values, a mutex-protected counter, a condition variable hand-off
 * between a producer and consumers, a barrier, thread-local storage,
 * atomics from several threads, thread ids, a detached thread, a signal
 * raised in one thread, and one sent to a chosen thread (pthread_kill). What is printed does not depend on how the
 * threads interleave. */
#define _GNU_SOURCE
#include "corpus.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WORKERS 4
#define ROUNDS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static __thread long mine;
static long atomic_total;

static void *work(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        mine += id;
        __atomic_fetch_add(&atomic_total, 1, __ATOMIC_SEQ_CST);
    }
    return (void *)(mine + 1000 * (syscall(SYS_gettid) != getpid()));
}

/* A bounded queue of one slot, handed over with a condition variable. */
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int slot, full, done;
static long consumed[2];

static void *consume(void *arg) {
    long me = (long)arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (!full && !done)
            pthread_cond_wait(&changed, &qlock);
        if (!full && done) {
            pthread_mutex_unlock(&qlock);
            return NULL;
        }
        consumed[me] += slot;
        full = 0;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&qlock);
    }
}

static pthread_barrier_t barrier;
static int before_barrier;
static int seen_after[3];
static void *meet(void *arg) {
    long me = (long)arg;
    __atomic_fetch_add(&before_barrier, 1, __ATOMIC_SEQ_CST);
    pthread_barrier_wait(&barrier);
    seen_after[me] = __atomic_load_n(&before_barrier, __ATOMIC_SEQ_CST);
    return NULL;
}

static volatile sig_atomic_t usr1;
static void on_usr1(int sig) { usr1 = sig; }
static void *raiser(void *arg) {
    (void)arg;
    raise(SIGUSR1);
    return (void *)(long)usr1;
}

static pthread_t target_self;
static volatile int target_ready, in_target = -1;
static void on_usr2(int sig) {
    (void)sig;
    in_target = pthread_equal(pthread_self(), target_self);
}
static void *wait_for_usr2(void *arg) {
    (void)arg;
    target_self = pthread_self();
    __atomic_store_n(&target_ready, 1, __ATOMIC_SEQ_CST);
    while (in_target < 0)
        sched_yield();
    return NULL;
}

/* A signal to a thread asleep in pthread_cond_wait: its handler runs
 * there (the futex wait ends with EINTR and glibc waits again). */
static pthread_mutex_t wm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcv = PTHREAD_COND_INITIALIZER;
static int go, sleeper_in;
static volatile int handled_asleep;
static void on_hup(int sig) {
    (void)sig;
    handled_asleep = 1;
}
static void *sleeper(void *arg) {
    (void)arg;
    pthread_mutex_lock(&wm);
    sleeper_in = 1;
    while (!go)
        pthread_cond_wait(&wcv, &wm);
    pthread_mutex_unlock(&wm);
    return NULL;
}

static int detached_ran;
static void *detached(void *arg) {
    (void)arg;
    __atomic_store_n(&detached_ran, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

int main(void) {
    printf("== workers ==\n");
    pthread_t t[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, work, (void *)(i + 1));
    long sum = 0;
    for (int i = 0; i < WORKERS; i++) {
        void *r;
        pthread_join(t[i], &r);
        printf("worker %d returned %ld\n", i + 1, (long)r);
        sum += (long)r;
    }
    printf("counter %ld (want %d), atomics %ld, main's thread-local %ld\n", counter,
           WORKERS * ROUNDS, atomic_total, mine);

    printf("== producer and consumers ==\n");
    pthread_t c[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&c[i], NULL, consume, (void *)i);
    long produced = 0;
    for (int v = 1; v <= 500; v++) {
        pthread_mutex_lock(&qlock);
        while (full)
            pthread_cond_wait(&changed, &qlock);
        slot = v;
        full = 1;
        produced += v;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    while (full)
        pthread_cond_wait(&changed, &qlock);
    done = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&qlock);
    for (int i = 0; i < 2; i++)
        pthread_join(c[i], NULL);
    printf("produced %ld, consumed %ld\n", produced, consumed[0] + consumed[1]);

    printf("== barrier ==\n");
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_t m[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&m[i], NULL, meet, (void *)i);
    for (int i = 0; i < 3; i++)
        pthread_join(m[i], NULL);
    printf("each saw all three arrive: %d %d %d\n", seen_after[0], seen_after[1], seen_after[2]);

    printf("== a signal in a thread ==\n");
    signal(SIGUSR1, on_usr1);
    pthread_t s;
    pthread_create(&s, NULL, raiser, NULL);
    void *r;
    pthread_join(s, &r);
    printf("handler ran in the thread: %ld\n", (long)r);

    printf("== a signal to a chosen thread ==\n");
    signal(SIGUSR2, on_usr2);
    pthread_t w;
    pthread_create(&w, NULL, wait_for_usr2, NULL);
    while (!__atomic_load_n(&target_ready, __ATOMIC_SEQ_CST))
        sched_yield();
    printf("pthread_kill rc %d\n", pthread_kill(w, SIGUSR2));
    pthread_join(w, NULL);
    printf("handled in the thread it was sent to: %d\n", in_target);

    printf("== a signal to a thread asleep on a condition variable ==\n");
    signal(SIGHUP, on_hup);
    pthread_t z;
    pthread_create(&z, NULL, sleeper, NULL);
    for (;;) {
        pthread_mutex_lock(&wm);
        int in = sleeper_in;
        pthread_mutex_unlock(&wm);
        if (in)
            break;
        sched_yield();
    }
    /* It holds the mutex until pthread_cond_wait releases it. */
    pthread_mutex_lock(&wm);
    pthread_mutex_unlock(&wm);
    pthread_kill(z, SIGHUP);
    while (!handled_asleep)
        sched_yield();
    pthread_mutex_lock(&wm);
    go = 1;
    pthread_cond_broadcast(&wcv);
    pthread_mutex_unlock(&wm);
    pthread_join(z, NULL);
    printf("handled while it waited: %d\n", handled_asleep);

    printf("== detached ==\n");
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_t d;
    pthread_create(&d, &a, detached, NULL);
    while (!__atomic_load_n(&detached_ran, __ATOMIC_SEQ_CST))
        sched_yield();
    printf("detached thread ran %d\n", detached_ran);
    printf("done\n");
    return 0;
}

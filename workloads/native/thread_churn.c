/* Starts argv[1] threads one after the other, each ending at once: what
   a sampler that follows every thread's start and end costs. */
#include <pthread.h>
#include <stdlib.h>

static void *nothing(void *arg) { return arg; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL))
            return 1;
        pthread_join(t, NULL);
    }
    return 0;
}

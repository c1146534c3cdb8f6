/* qsort.c: sorting 3-D points by their distance from the origin with the
 * C library's qsort, as MiBench's automotive/qsort (qsort_large) does:
 * comparison callbacks through a function pointer, double-precision
 * square roots and records moved in memory. Argument: repetitions
 * (default 4). */
#include <math.h>
#include "kernel.h"

struct point { double x, y, z, dist; };
enum { N = 50000 };
static struct point pts[N];

static int by_distance(const void *a, const void *b) {
    double da = ((const struct point *)a)->dist, db = ((const struct point *)b)->dist;
    return (da > db) - (da < db);
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 4, "qsort");
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) {
        for (int i = 0; i < N; i++) {
            pts[i].x = (double)(kernel_rand() % 20001) / 10.0 - 1000.0;
            pts[i].y = (double)(kernel_rand() % 20001) / 10.0 - 1000.0;
            pts[i].z = (double)(kernel_rand() % 20001) / 10.0 - 1000.0;
            pts[i].dist = sqrt(pts[i].x * pts[i].x + pts[i].y * pts[i].y + pts[i].z * pts[i].z);
        }
        qsort(pts, N, sizeof pts[0], by_distance);
        for (int i = 1; i < N; i++)
            if (pts[i - 1].dist > pts[i].dist) {
                fprintf(stderr, "qsort: output not sorted at %d\n", i);
                return 1;
            }
        for (int i = 0; i < N; i += 1000)
            sum = sum * 1000003 + (uint64_t)(pts[i].dist * 1000.0);
    }
    printf("nearest %.3f farthest %.3f\n", pts[0].dist, pts[N - 1].dist);
    kernel_done("qsort", reps, sum);
    return 0;
}

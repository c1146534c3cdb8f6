/* dijkstra.c: single-source shortest paths with Dijkstra's algorithm on a
 * 160-node weighted graph held as an adjacency matrix, from every node in
 * turn, as MiBench's network/dijkstra does (there with a linked-list
 * queue; here with the O(V^2) array scan, the same access pattern of
 * matrix rows). Argument: repetitions (default 3). */
#include "kernel.h"

enum { V = 160, INF = 0x3fffffff };
static int w[V][V];
static int dist[V], prev_[V];
static unsigned char done[V];

static void dijkstra(int src) {
    for (int i = 0; i < V; i++) {
        dist[i] = INF;
        prev_[i] = -1;
        done[i] = 0;
    }
    dist[src] = 0;
    for (int iter = 0; iter < V; iter++) {
        int u = -1, best = INF;
        for (int i = 0; i < V; i++)
            if (!done[i] && dist[i] < best) {
                best = dist[i];
                u = i;
            }
        if (u < 0)
            break;
        done[u] = 1;
        for (int v = 0; v < V; v++) {
            int e = w[u][v];
            if (e && !done[v] && dist[u] + e < dist[v]) {
                dist[v] = dist[u] + e;
                prev_[v] = u;
            }
        }
    }
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 3, "dijkstra");
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++)
            w[i][j] = (i != j && kernel_rand() % 100 < 12) ? 1 + (int)(kernel_rand() % 100) : 0;
    uint64_t sum = 0;
    long unreachable = 0, hops = 0;
    for (long r = 0; r < reps; r++) {
        for (int s = 0; s < V; s++) {
            dijkstra(s);
            for (int t = 0; t < V; t++) {
                if (dist[t] == INF) {
                    unreachable++;
                    continue;
                }
                sum = sum * 31 + (uint64_t)dist[t];
                for (int x = t; prev_[x] >= 0; x = prev_[x])
                    hops++;
            }
        }
        w[r % V][(r * 13 + 1) % V] = 1 + (int)(r % 50);
    }
    printf("unreachable pairs %ld, total hops %ld\n", unreachable, hops);
    kernel_done("dijkstra", reps, sum);
    return 0;
}

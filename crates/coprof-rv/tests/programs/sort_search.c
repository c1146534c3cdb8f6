/* coprof-corpus: +zb (also built with -march=rv64gc_zba_zbb_zbs) */
/* sort_search.c: qsort (glibc's merge sort with its quicksort fallback,
 * called back through function pointers) on integers, doubles, strings and
 * records with ties, checked for order and permutation, then bsearch,
 * lsearch-style scans and a hand-written heap sort to compare with. */
#define _GNU_SOURCE
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static uint64_t st = 0x853c49e6748fea9bULL;
static uint32_t rnd(void) {
    st = st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(st >> 33);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
struct rec { int key; int seq; char name[12]; };
static int cmp_rec(const void *a, const void *b) {
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->seq > y->seq) - (x->seq < y->seq);
}
static int cmp_rec_r(const void *a, const void *b, void *arg) {
    int mod = *(int *)arg;
    const struct rec *x = a, *y = b;
    int kx = x->key % mod, ky = y->key % mod;
    if (kx != ky)
        return (kx > ky) - (kx < ky);
    return strcmp(x->name, y->name);
}

static void heap_sort(int *a, int n) {
    for (int start = n / 2 - 1; start >= -0; start--) {
        for (int r = start;;) {
            int c = 2 * r + 1;
            if (c >= n) break;
            if (c + 1 < n && a[c + 1] > a[c]) c++;
            if (a[r] >= a[c]) break;
            int t = a[r]; a[r] = a[c]; a[c] = t; r = c;
        }
    }
    for (int end = n - 1; end > 0; end--) {
        int t = a[0]; a[0] = a[end]; a[end] = t;
        for (int r = 0;;) {
            int c = 2 * r + 1;
            if (c >= end) break;
            if (c + 1 < end && a[c + 1] > a[c]) c++;
            if (a[r] >= a[c]) break;
            t = a[r]; a[r] = a[c]; a[c] = t; r = c;
        }
    }
}

int main(void) {
    printf("== integers of many sizes ==\n");
    static const int sizes[] = {0, 1, 2, 3, 7, 16, 100, 1000, 20000};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        int *a = malloc(sizeof(int) * (n + 1)), *b = malloc(sizeof(int) * (n + 1));
        uint64_t sum = 0;
        for (int i = 0; i < n; i++) {
            a[i] = (int)(rnd() % (n / 2 + 1)) - n / 4;
            b[i] = a[i];
            sum += (uint64_t)(int64_t)a[i];
        }
        qsort(a, n, sizeof(int), cmp_int);
        heap_sort(b, n);
        int sorted = 1;
        uint64_t sum2 = 0;
        for (int i = 0; i < n; i++) {
            if (i && a[i - 1] > a[i]) sorted = 0;
            sum2 += (uint64_t)(int64_t)a[i];
        }
        printf("n=%d sorted %d same sum %d equals heap sort %d min %d max %d median %d checksum %016llx\n", n, sorted,
               sum == sum2, memcmp(a, b, sizeof(int) * n) == 0, n ? a[0] : 0, n ? a[n - 1] : 0, n ? a[n / 2] : 0,
               (unsigned long long)fnv1a(FNV_INIT, a, sizeof(int) * n));
        if (n >= 100) {
            int hits = 0, misses = 0;
            for (int k = -n / 4 - 2; k < n / 4 + 2; k += 3) {
                int *p = bsearch(&k, a, n, sizeof(int), cmp_int);
                if (p) { hits++; if (*p != k) printf("bsearch wrong\n"); }
                else misses++;
            }
            printf("   bsearch hits %d misses %d\n", hits, misses);
        }
        qsort(a, n, sizeof(int), cmp_int_desc);
        printf("   descending first %d last %d\n", n ? a[0] : 0, n ? a[n - 1] : 0);
        free(a);
        free(b);
    }
    printf("== doubles ==\n");
    double d[2000];
    for (int i = 0; i < 2000; i++)
        d[i] = (double)(int32_t)rnd() / (double)(rnd() | 1);
    qsort(d, 2000, sizeof(double), cmp_dbl);
    printf("doubles: %.17g %.17g %.17g %.17g\n", d[0], d[1], d[1000], d[1999]);
    printf("== strings ==\n");
    static const char *words[] = {"pear", "apple", "fig", "banana", "kiwi", "apple", "cherry", "date", "elderberry",
                                  "grape", "Apple", "zucchini", "", "a", "aa", "ab", "b"};
    const char *w[sizeof words / sizeof words[0]];
    memcpy(w, words, sizeof words);
    qsort(w, sizeof w / sizeof w[0], sizeof w[0], cmp_str);
    for (unsigned i = 0; i < sizeof w / sizeof w[0]; i++)
        printf("[%s]%s", w[i], i + 1 < sizeof w / sizeof w[0] ? " " : "\n");
    printf("== records with ties (sorted by key then sequence) ==\n");
    enum { NR = 3000 };
    struct rec *r = malloc(sizeof *r * NR);
    for (int i = 0; i < NR; i++) {
        r[i].key = (int)(rnd() % 50);
        r[i].seq = i;
        snprintf(r[i].name, sizeof r[i].name, "n%05u", rnd() % 100000);
    }
    qsort(r, NR, sizeof *r, cmp_rec);
    int ok = 1;
    for (int i = 1; i < NR; i++)
        if (cmp_rec(&r[i - 1], &r[i]) > 0) ok = 0;
    printf("records ordered %d first %d/%d/%s last %d/%d/%s\n", ok, r[0].key, r[0].seq, r[0].name, r[NR - 1].key,
           r[NR - 1].seq, r[NR - 1].name);
    int mod = 7;
    qsort_r(r, NR, sizeof *r, cmp_rec_r, &mod);
    printf("qsort_r by key%%7 then name: first %d/%s last %d/%s checksum %016llx\n", r[0].key, r[0].name,
           r[NR - 1].key, r[NR - 1].name, (unsigned long long)fnv1a(FNV_INIT, r, sizeof *r * NR));
    free(r);
    printf("== lfind / tsearch ==\n");
    int small[] = {5, 3, 9, 1, 7};
    size_t nel = 5;
    int key = 9;
    int *found = lfind(&key, small, &nel, sizeof(int), cmp_int);
    printf("lfind 9 at index %ld\n", found ? (long)(found - small) : -1L);
    void *root = NULL;
    static int vals[64];
    for (int i = 0; i < 64; i++) {
        vals[i] = (int)(rnd() % 40);
        tsearch(&vals[i], &root, cmp_int);
    }
    int distinct = 0;
    for (int k = 0; k < 40; k++)
        distinct += tfind(&k, &root, cmp_int) != NULL;
    printf("tsearch distinct keys %d\n", distinct);
    return 0;
}

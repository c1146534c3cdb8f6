/* coprof-corpus: +zb (also built with -march=rv64gc_zba_zbb_zbs) */
/* malloc.c: glibc's allocator driven through brk (small blocks), mmap and
 * munmap (blocks above the 128 KiB mmap threshold) and mremap (realloc of a
 * large block), with calloc zeroing, realloc growth and shrinking in
 * place, aligned allocation and a pseudo-random alloc/free churn whose
 * contents are verified. Prints contents and checksums, never addresses. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next(void) {
    rng ^= rng << 7;
    rng ^= rng >> 9;
    return rng;
}

/* The bytes of a block that fill and check touch: all of a block up to
 * 1 KiB; of a larger one the first and last 256 bytes and one byte in
 * every 512, which keeps a run short while still covering every page. */
static size_t next_touched(size_t i, size_t n) {
    if (n <= 1024 || i + 1 < 256 || i + 1 >= n - 256)
        return i + 1;
    size_t j = (i + 512) & ~(size_t)511;
    return j < n - 256 ? j : n - 256;
}
static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i = next_touched(i, n))
        p[i] = (unsigned char)(seed + i * 31 + (i >> 8));
}
/* Checks the first `n` bytes of a block that was filled with length `len`. */
static int check_len(const unsigned char *p, size_t n, size_t len, unsigned seed) {
    for (size_t i = 0; i < n; i = next_touched(i, len))
        if (p[i] != (unsigned char)(seed + i * 31 + (i >> 8)))
            return 0;
    return 1;
}
static int check(const unsigned char *p, size_t n, unsigned seed) { return check_len(p, n, n, seed); }

int main(void) {
    printf("== sizes from 0 to 1 MiB ==\n");
    static const size_t sizes[] = {0, 1, 7, 8, 15, 16, 24, 100, 1000, 4095, 4096, 65536, 131072, 200000, 1 << 20};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *p = malloc(n);
        if (!p) {
            printf("malloc(%zu) failed\n", n);
            continue;
        }
        fill(p, n, i);
        printf("malloc(%zu): aligned16 %d usable>=n %d content ok %d\n", n, ((uintptr_t)p & 15) == 0,
               malloc_usable_size(p) >= n, check(p, n, i));
        free(p);
    }
    printf("== calloc zeroes ==\n");
    for (size_t n = 1; n <= (1 << 18); n *= 8) {
        unsigned char *p = calloc(n, 3);
        size_t nz = 0;
        for (size_t i = 0; i < n * 3; i++)
            nz += p[i] != 0;
        printf("calloc(%zu,3) nonzero bytes %zu\n", n, nz);
        memset(p, 0xab, n * 3);
        free(p);
    }
    printf("== realloc keeps contents while growing and shrinking ==\n");
    size_t n = 10;
    unsigned char *p = malloc(n);
    fill(p, n, 77);
    static const size_t steps[] = {20, 5, 1000, 300000, 3000000, 100, 150000, 1 << 22, 64};
    for (unsigned i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        size_t m = steps[i];
        size_t keep = n < m ? n : m;
        p = realloc(p, m);
        int ok = check_len(p, keep, n, 77);
        fill(p, m, 77);
        printf("realloc %zu -> %zu: kept %zu bytes ok %d\n", n, m, keep, ok);
        n = m;
    }
    free(p);
    printf("== aligned allocation ==\n");
    for (size_t a = 16; a <= 65536; a *= 4) {
        void *q = aligned_alloc(a, a * 3);
        void *r = NULL;
        int rc = posix_memalign(&r, a, 100);
        printf("align %zu: aligned_alloc ok %d posix_memalign rc %d ok %d\n", a, ((uintptr_t)q % a) == 0, rc,
               ((uintptr_t)r % a) == 0);
        free(q);
        free(r);
    }
    void *bad = NULL;
    printf("posix_memalign(align 3) -> %d\n", posix_memalign(&bad, 3, 10));
    printf("== churn: 4000 operations on 512 slots ==\n");
    enum { SLOTS = 512 };
    unsigned char *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    unsigned seed[SLOTS] = {0};
    uint64_t bad_blocks = 0, total = 0, h = FNV_INIT;
    for (int op = 0; op < 4000; op++) {
        unsigned s = next() % SLOTS;
        if (slot[s]) {
            bad_blocks += !check(slot[s], len[s], seed[s]);
            h = fnv1a(h, slot[s], len[s] < 32 ? len[s] : 32);
            if (next() % 3 == 0) {
                size_t m = next() % 5000 + 1;
                size_t keep = len[s] < m ? len[s] : m;
                slot[s] = realloc(slot[s], m);
                bad_blocks += !check_len(slot[s], keep, len[s], seed[s]);
                len[s] = m;
                fill(slot[s], m, seed[s]);
            } else {
                free(slot[s]);
                slot[s] = NULL;
            }
        } else {
            size_t m = (next() % 16 == 0) ? next() % 300000 : next() % 400;
            slot[s] = malloc(m);
            len[s] = m;
            seed[s] = (unsigned)op;
            fill(slot[s], m, seed[s]);
            total += m;
        }
    }
    for (unsigned s = 0; s < SLOTS; s++)
        free(slot[s]);
    printf("churn: allocated %llu bytes, corrupted blocks %llu, checksum %016llx\n", (unsigned long long)total,
           (unsigned long long)bad_blocks, (unsigned long long)h);
    printf("== a linked list of 100000 nodes ==\n");
    struct node { struct node *next; uint64_t v; } *head = NULL;
    for (uint64_t i = 0; i < 100000; i++) {
        struct node *nd = malloc(sizeof *nd);
        nd->v = i * i;
        nd->next = head;
        head = nd;
    }
    uint64_t sum = 0;
    while (head) {
        struct node *nx = head->next;
        sum += head->v;
        free(head);
        head = nx;
    }
    printf("list sum %llu\n", (unsigned long long)sum);
    printf("malloc of a huge size: %s\n", malloc((size_t)1 << 62) == NULL ? "NULL" : "non-NULL");
    return 0;
}

/* strsearch.c: Boyer-Moore-Horspool string search of 64 patterns in a
 * 256 KiB generated text, as in MiBench's office/stringsearch: a skip
 * table per pattern, byte loads and compare loops with unpredictable
 * exits. The first eight patterns' counts are checked against a naive
 * search on the first repetition. Argument: repetitions (default 2). */
#include <string.h>
#include "kernel.h"

enum { TEXT = 262144, NPAT = 64 };
static char text[TEXT + 1];
static char pats[NPAT][24];

static long horspool_count(const char *t, long n, const char *p) {
    long m = (long)strlen(p), count = 0;
    long skip[256];
    for (int c = 0; c < 256; c++)
        skip[c] = m;
    for (long i = 0; i < m - 1; i++)
        skip[(unsigned char)p[i]] = m - 1 - i;
    for (long pos = 0; pos + m <= n;) {
        long j = m - 1;
        while (j >= 0 && t[pos + j] == p[j])
            j--;
        if (j < 0)
            count++;
        pos += skip[(unsigned char)t[pos + m - 1]];
    }
    return count;
}

static long naive_count(const char *t, long n, const char *p) {
    long m = (long)strlen(p), count = 0;
    for (long pos = 0; pos + m <= n; pos++)
        if (memcmp(t + pos, p, (size_t)m) == 0)
            count++;
    return count;
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 2, "strsearch");
    /* Text from a small alphabet of syllables, so patterns do occur. */
    static const char *syl[] = {"ka", "to", "ri", "ne", "su", "ma", "lo", " ", "pe", "a", "on", "e"};
    long n = 0;
    while (n < TEXT - 3) {
        const char *s = syl[kernel_rand() % 12];
        while (*s && n < TEXT)
            text[n++] = *s++;
    }
    text[n] = 0;
    for (int p = 0; p < NPAT; p++) {
        int len = 3 + (int)(kernel_rand() % 12);
        long start = (long)(kernel_rand() % (uint32_t)(n - len));
        memcpy(pats[p], text + start, (size_t)len);
        pats[p][len] = 0;
        if (p % 5 == 0)
            pats[p][len - 1] = 'z'; /* a pattern that rarely or never occurs */
    }
    uint64_t sum = 0;
    long total = 0;
    for (long r = 0; r < reps; r++) {
        for (int p = 0; p < NPAT; p++) {
            long c = horspool_count(text, n, pats[p]);
            if (r == 0 && p < 8 && c != naive_count(text, n, pats[p])) {
                fprintf(stderr, "strsearch: Horspool and naive counts disagree for '%s'\n", pats[p]);
                return 1;
            }
            total += c;
            sum = sum * 1000003 + (uint64_t)c;
        }
        text[(r * 7919) % n] = 'q';
    }
    printf("matches %ld; pattern 1 '%s'\n", total, pats[1]);
    kernel_done("strsearch", reps, sum);
    return 0;
}

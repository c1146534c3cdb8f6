/* coprof-corpus: +zb (also built with -march=rv64gc_zba_zbb_zbs) */
/* strings.c: glibc's string and conversion functions, whose RV64 versions
 * read memory a word at a time with unaligned heads and tails: strlen,
 * strcmp, memcpy, memmove with overlap, memset, memchr, strchr, strrchr,
 * strstr, strtok_r, strspn, strcasecmp, strtol/strtoul with range errors,
 * snprintf truncation, sscanf, and character classes. Every offset and
 * length from 0 to 40 is tried so that each alignment path runs. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static char big[512];

int main(void) {
    for (int i = 0; i < (int)sizeof big; i++)
        big[i] = (char)('a' + (i * 7) % 26);
    printf("== lengths and comparisons at every alignment ==\n");
    uint64_t h = FNV_INIT;
    for (int off = 0; off < 16; off++) {
        for (int len = 0; len < 40; len++) {
            char a[128], b[128];
            memcpy(a + off, big, len);
            a[off + len] = 0;
            memcpy(b + (15 - off), big, len);
            b[15 - off + len] = 0;
            size_t l = strlen(a + off);
            int c = strcmp(a + off, b + 15 - off);
            if (len > 0)
                b[15 - off + len - 1] ^= 1;
            int c2 = strcmp(a + off, b + 15 - off);
            int c3 = memcmp(a + off, b + 15 - off, len);
            int c4 = strncmp(a + off, b + 15 - off, len ? len - 1 : 0);
            const char *ch = memchr(a + off, 'q', len);
            int r[6] = {(int)l, c, c2 > 0 ? 1 : c2 < 0 ? -1 : 0, c3 > 0 ? 1 : c3 < 0 ? -1 : 0, c4,
                        ch ? (int)(ch - (a + off)) : -1};
            h = fnv1a(h, r, sizeof r);
            if ((off * 40 + len) % 37 == 0)
                printf("off %d len %d: strlen %d strcmp %d/%d memcmp %d strncmp %d memchr(q) %d\n", off, len, r[0],
                       r[1], r[2], r[3], r[4], r[5]);
        }
    }
    printf("alignment checksum %016llx\n", (unsigned long long)h);
    printf("== memcpy, memmove, memset ==\n");
    char buf[256];
    for (int i = 0; i < 256; i++)
        buf[i] = (char)i;
    memmove(buf + 3, buf, 100);
    memmove(buf + 150, buf + 155, 60);
    memset(buf + 17, 0x5a, 33);
    memcpy(buf + 200, buf + 1, 31);
    printf("after moves: checksum %016llx bytes %d %d %d %d %d\n",
           (unsigned long long)fnv1a(FNV_INIT, buf, sizeof buf), buf[3], buf[50], buf[150], buf[210], buf[17]);
    printf("== searching ==\n");
    const char *hay = "the quick brown fox jumps over the lazy dog; the end";
    printf("strchr o -> %ld, strrchr o -> %ld, strstr 'the' -> %ld, strstr 'lazy dog' -> %ld, strstr 'cat' %s\n",
           strchr(hay, 'o') - hay, strrchr(hay, 'o') - hay, strstr(hay + 1, "the") - hay,
           strstr(hay, "lazy dog") - hay, strstr(hay, "cat") ? "found" : "NULL");
    printf("strspn %zu strcspn %zu strpbrk %ld memrchr %ld strchrnul %ld\n", strspn(hay, "teh "),
           strcspn(hay, "xyz"), strpbrk(hay, "zq") - hay, (const char *)memrchr(hay, 't', strlen(hay)) - hay,
           strchrnul(hay, '#') - hay);
    char tok[] = "alpha, beta,,gamma ;delta;; epsilon";
    char *save = NULL;
    for (char *t = strtok_r(tok, ",; ", &save); t; t = strtok_r(NULL, ",; ", &save))
        printf("token [%s]\n", t);
    printf("strcasecmp %d strncasecmp %d\n", strcasecmp("HeLLo", "hello") == 0, strncasecmp("ABCd", "abcE", 3) == 0);
    char cat[64] = "con";
    strcat(cat, "cat");
    volatile size_t seven = 7;
    strncat(cat, "enation!!!", seven);
    char cp[16];
    strncpy(cp, "0123456789abcdefXYZ", sizeof cp - 1);
    cp[sizeof cp - 1] = 0;
    printf("strcat [%s] strncpy [%s] strdup [%s] strndup [%s]\n", cat, cp, strdup("dup") , strndup("abcdef", 3));
    printf("== number parsing ==\n");
    static const char *nums[] = {"0", "-0", "42", "-42", "0x7fffffffffffffff", "9223372036854775807",
                                 "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                                 "18446744073709551615", "18446744073709551616", "-1", "  +17xyz", "0755",
                                 "zz", "0b101", "1e5"};
    for (unsigned i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        char *e1, *e2;
        errno = 0;
        long v = strtol(nums[i], &e1, 0);
        int err1 = errno;
        errno = 0;
        unsigned long u = strtoul(nums[i], &e2, 10);
        int err2 = errno;
        printf("[%s] strtol(0) %ld end %ld %s | strtoul(10) %lu end %ld %s | atoi %d\n", nums[i], v,
               (long)(e1 - nums[i]), err1 == ERANGE ? "ERANGE" : "", u, (long)(e2 - nums[i]),
               err2 == ERANGE ? "ERANGE" : "", atoi(nums[i]));
    }
    printf("strtol base 36 'zz' %ld base 2 '101101' %ld base 16 'DeadBeef' %ld\n", strtol("zz", NULL, 36),
           strtol("101101", NULL, 2), strtol("DeadBeef", NULL, 16));
    printf("== snprintf ==\n");
    char small[8];
    volatile size_t small_size = sizeof small; /* hides the truncation from the compiler's warning */
    int n = snprintf(small, small_size, "%s-%d", "truncated", 12345);
    printf("snprintf wants %d got [%s]\n", n, small);
    char wide[128];
    snprintf(wide, sizeof wide, "[%5d|%-5d|%05d|%+d|%x|%X|%#o|%#x|%c|%%|%10.3s|%-*d|%ld|%llu|%hhd|%hu|%zu|%p]", 42, 42,
             42, 42, 255, 255, 8, 255, 'Z', "abcdef", 6, 7, LONG_MIN, ULLONG_MAX, 300, 70000, (size_t)77,
             (void *)0);
    printf("%s\n", wide);
    int x, y;
    char w1[16], w2[16];
    unsigned hx;
    int m = sscanf("  12 -34 word   other 0x1F", "%d %d %15s %15s %x", &x, &y, w1, w2, &hx);
    printf("sscanf %d: %d %d [%s] [%s] %u\n", m, x, y, w1, w2, hx);
    char setbuf_[32];
    m = sscanf("abc123def", "%[a-z]%d", setbuf_, &x);
    printf("sscanf %%[ ] %d: [%s] %d\n", m, setbuf_, x);
    printf("== character classes (C locale) ==\n");
    for (int c = 0; c < 128; c += 1) {
        int cls = (isalpha(c) != 0) | (isdigit(c) != 0) << 1 | (isspace(c) != 0) << 2 | (ispunct(c) != 0) << 3 |
                  (isupper(c) != 0) << 4 | (isprint(c) != 0) << 5 | (iscntrl(c) != 0) << 6 | (isxdigit(c) != 0) << 7;
        printf("%02x:%02x%c%c ", c, cls, toupper(c) == c ? '=' : 'U', tolower(c) == c ? '=' : 'L');
        if (c % 8 == 7)
            printf("\n");
    }
    printf("strerror: [%s] [%s] [%s] [%s]\n", strerror(EINVAL), strerror(ENOENT), strerror(ERANGE), strerror(12345));
    return 0;
}

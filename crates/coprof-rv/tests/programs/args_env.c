/* args_env.c: the process start-up state Linux gives a program (the
 * initial stack of argc, argv, envp and the auxiliary vector): every
 * argument byte for byte, environment variables whose names start with
 * COPROF_TEST_ (sorted; the rest of the environment is the host's), getenv,
 * setenv/unsetenv/putenv, the auxiliary vector entries that do not depend
 * on addresses or the host, and program_invocation_short_name; and the
 * same read back from /proc/self/cmdline, /proc/self/environ and
 * /proc/self/auxv, which must be the program's, not its host's. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "corpus.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The whole of `path` (at most `n` bytes) into `buf`; its length. */
static size_t slurp(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t k = fread(buf, 1, n, f);
    fclose(f);
    return k;
}

int main(int argc, char **argv, char **envp) {
    printf("argc %d\n", argc);
    for (int i = 1; i < argc; i++) {
        printf("argv[%d] len %zu [", i, strlen(argv[i]));
        for (const unsigned char *p = (const unsigned char *)argv[i]; *p; p++)
            printf(*p >= 32 && *p < 127 ? "%c" : "\\x%02x", *p);
        printf("]\n");
    }
    printf("argv[argc] is NULL %d\n", argv[argc] == NULL);
    const char *base = strrchr(argv[0], '/');
    printf("argv[0] basename %s, program_invocation_short_name %s\n", base ? base + 1 : argv[0],
           program_invocation_short_name);
    char *mine[64];
    int n = 0, total = 0;
    for (char **e = envp; *e; e++) {
        total++;
        if (strncmp(*e, "COPROF_TEST_", 12) == 0 && n < 64)
            mine[n++] = *e;
    }
    printf("environment has entries: %d\n", total > 0);
    qsort(mine, n, sizeof mine[0], cmp_str);
    for (int i = 0; i < n; i++)
        printf("env %s\n", mine[i]);
    printf("environ == envp %d\n", environ == envp);
    const char *g = getenv("COPROF_TEST_GREETING");
    printf("getenv GREETING [%s] missing [%s]\n", g ? g : "(null)",
           getenv("COPROF_TEST_NOT_SET") ? "set" : "(null)");
    printf("setenv %d\n", setenv("COPROF_TEST_NEW", "fresh value", 0));
    printf("setenv no overwrite %d -> [%s]\n", setenv("COPROF_TEST_NEW", "other", 0), getenv("COPROF_TEST_NEW"));
    printf("setenv overwrite %d -> [%s]\n", setenv("COPROF_TEST_NEW", "other", 1), getenv("COPROF_TEST_NEW"));
    errno = 0;
    printf("setenv bad name %d errno %s\n", setenv("BAD=NAME", "x", 1), strerror(errno));
    static char put[] = "COPROF_TEST_PUT=via putenv";
    putenv(put);
    printf("putenv -> [%s]\n", getenv("COPROF_TEST_PUT"));
    unsetenv("COPROF_TEST_NEW");
    printf("after unsetenv [%s]\n", getenv("COPROF_TEST_NEW") ? "still set" : "(null)");
    printf("== auxiliary vector ==\n");
    printf("AT_PAGESZ %lu\n", getauxval(AT_PAGESZ));
    printf("AT_PHENT %lu\n", getauxval(AT_PHENT));
    printf("AT_PHNUM > 0 %d\n", getauxval(AT_PHNUM) > 0);
    printf("AT_PHDR set %d\n", getauxval(AT_PHDR) != 0);
    printf("AT_ENTRY set %d\n", getauxval(AT_ENTRY) != 0);
    printf("AT_RANDOM set %d\n", getauxval(AT_RANDOM) != 0);
    printf("AT_CLKTCK %lu\n", getauxval(AT_CLKTCK));
    printf("AT_SECURE %lu\n", getauxval(AT_SECURE));
    printf("AT_UID == getuid %d, AT_GID == getgid %d\n", getauxval(AT_UID) == getuid(), getauxval(AT_GID) == getgid());
    printf("sysconf page size %ld, clock ticks %ld\n", sysconf(_SC_PAGESIZE), sysconf(_SC_CLK_TCK));
    errno = 0;
    unsigned long none = getauxval(12345);
    printf("getauxval(unknown) %lu errno %s\n", none, errno == ENOENT ? "ENOENT" : "other");

    static char buf[1 << 16];
    size_t len = slurp("/proc/self/cmdline", buf, sizeof buf);
    int args = 0, as_argv = 1;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1, args++)
        if (args >= argc || strcmp(buf + i, argv[args]) != 0)
            as_argv = 0;
    printf("/proc/self/cmdline: %d arguments, as argv %d\n", args, as_argv && args == argc);
    len = slurp("/proc/self/environ", buf, sizeof buf);
    int greeting = 0, spaces = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        greeting |= strcmp(buf + i, "COPROF_TEST_GREETING=hello") == 0;
        spaces |= strcmp(buf + i, "COPROF_TEST_SPACES=a b  c") == 0;
    }
    printf("/proc/self/environ: greeting %d, spaces %d\n", greeting, spaces);
    static unsigned long aux[512];
    len = slurp("/proc/self/auxv", (char *)aux, sizeof aux) / sizeof aux[0];
    int pagesz = 0, entry = 0, random = 0, end = 0;
    for (size_t i = 0; i + 1 < len && !end; i += 2) {
        pagesz |= aux[i] == AT_PAGESZ && aux[i + 1] == getauxval(AT_PAGESZ);
        entry |= aux[i] == AT_ENTRY && aux[i + 1] == getauxval(AT_ENTRY);
        random |= aux[i] == AT_RANDOM && aux[i + 1] == getauxval(AT_RANDOM);
        end = aux[i] == AT_NULL;
    }
    printf("/proc/self/auxv: AT_PAGESZ %d, AT_ENTRY %d, AT_RANDOM %d, ends with AT_NULL %d\n",
           pagesz, entry, random, end);
    return argc > 3 ? 0 : 1;
}

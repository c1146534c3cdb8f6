/* stdio_files.c: files through stdio and the system calls under it
 * (openat, read, write, lseek, pread64, fstat/newfstatat/statx, fcntl,
 * dup/dup3, pipe2, unlinkat, mkdirat, renameat2, getdents64, faccessat,
 * ioctl TCGETS on a non-terminal), plus reading the whole of stdin. Works
 * in a directory under /tmp with a fixed name per optimisation level (so
 * two builds can run at once) and removes it before exiting. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include "corpus.h"

#define DIR_ "/tmp/coprof-corpus-stdio-files-" LEVEL

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void show(const char *what, long rc) { show_rc(34, what, rc); }

int main(void) {
    char path[256], path2[256];
    printf("== stdin ==\n");
    char line[256];
    int lines = 0;
    size_t bytes = 0;
    while (fgets(line, sizeof line, stdin)) {
        size_t n = strlen(line);
        bytes += n;
        if (n && line[n - 1] == '\n')
            line[--n] = 0;
        for (size_t i = 0; i < n / 2; i++) {
            char t = line[i];
            line[i] = line[n - 1 - i];
            line[n - 1 - i] = t;
        }
        printf("stdin line %d reversed: [%s]\n", ++lines, line);
    }
    printf("stdin: %d lines %zu bytes eof %d\n", lines, bytes, feof(stdin));

    /* Clean leftovers of an interrupted earlier run. */
    snprintf(path, sizeof path, "%s/data.bin", DIR_);
    unlink(path);
    snprintf(path, sizeof path, "%s/renamed.txt", DIR_);
    unlink(path);
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/entry-%d", DIR_, i);
        unlink(path);
    }
    rmdir(DIR_);

    printf("== directory ==\n");
    show("mkdir", mkdir(DIR_, 0755));
    show("mkdir again (EEXIST)", mkdir(DIR_, 0755));
    struct stat st;
    show("stat dir", stat(DIR_, &st));
    printf("is dir %d\n", S_ISDIR(st.st_mode));

    printf("== fwrite / fseek / fread ==\n");
    snprintf(path, sizeof path, "%s/data.bin", DIR_);
    FILE *f = fopen(path, "w+b");
    printf("fopen w+b %s\n", f ? "ok" : strerror(errno));
    uint32_t buf[4096];
    for (int i = 0; i < 4096; i++)
        buf[i] = (uint32_t)i * 2654435761u;
    printf("fwrite %zu\n", fwrite(buf, sizeof buf[0], 4096, f));
    printf("fprintf %d\n", fprintf(f, "tail text %d %s %.3f\n", 42, "words", 2.5));
    printf("ftell %ld\n", ftell(f));
    printf("fseek SEEK_SET 400 -> %d, ftell %ld\n", fseek(f, 400, SEEK_SET), ftell(f));
    uint32_t got[8];
    printf("fread %zu: %08x %08x ... %08x\n", fread(got, 4, 8, f), got[0], got[1], got[7]);
    printf("fseek SEEK_END -25 -> %d, ftell %ld\n", fseek(f, -25, SEEK_END), ftell(f));
    char tail[64] = {0};
    printf("fread tail %zu [%s]\n", fread(tail, 1, sizeof tail - 1, f), tail);
    printf("feof %d\n", feof(f));
    rewind(f);
    uint32_t all[4096];
    size_t nr = fread(all, 4, 4096, f);
    printf("reread %zu words equal %d\n", nr, memcmp(all, buf, sizeof buf) == 0);
    fseek(f, 8, SEEK_SET);
    fputs("OVERWRITE", f);
    fflush(f);
    int fd = fileno(f);
    char pb[16] = {0};
    printf("pread at 8: %zd [%.9s]\n", pread(fd, pb, 9, 8), pb);
    show("fstat", fstat(fd, &st));
    printf("size %lld regular %d\n", (long long)st.st_size, S_ISREG(st.st_mode));
    printf("lseek SEEK_CUR 0 -> %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    printf("lseek SEEK_END 100 -> %lld\n", (long long)lseek(fd, 100, SEEK_END));
    printf("write past end %zd\n", write(fd, "X", 1));
    fstat(fd, &st);
    printf("size after hole %lld\n", (long long)st.st_size);
    char hole[4];
    printf("pread in hole %zd bytes %d %d %d\n", pread(fd, hole, 4, 16500), hole[0], hole[1], hole[2]);
    errno = 0;
    show("lseek negative (EINVAL)", lseek(fd, -5, SEEK_SET));
    int fl = fcntl(fd, F_GETFL);
    printf("fcntl F_GETFL accmode rdwr %d\n", (fl & O_ACCMODE) == O_RDWR);
    printf("fcntl F_GETFD cloexec %d\n", fcntl(fd, F_GETFD) & FD_CLOEXEC);
    struct termios tio;
    show("tcgetattr on a file (ENOTTY)", tcgetattr(fd, &tio));
    printf("isatty(file) %d\n", isatty(fd));
    int d2 = dup(fd);
    printf("dup lseek shares offset: %lld\n", (long long)lseek(d2, 0, SEEK_CUR));
    int d3 = dup3(fd, 50, O_CLOEXEC);
    printf("dup3 -> %d cloexec %d\n", d3, fcntl(d3, F_GETFD) & FD_CLOEXEC);
    close(d2);
    close(d3);
    show("close closed fd (EBADF)", close(d3));
    printf("fclose %d\n", fclose(f));

    printf("== text mode, fscanf, getline, ungetc ==\n");
    snprintf(path2, sizeof path2, "%s/renamed.txt", DIR_);
    f = fopen(path, "w");
    for (int i = 0; i < 50; i++)
        fprintf(f, "%d %s %x\n", i * i, i % 2 ? "odd" : "even", i * 0x1111);
    fclose(f);
    show("rename", rename(path, path2));
    show("access old name (ENOENT)", access(path, F_OK));
    show("access new name R_OK", access(path2, R_OK));
    f = fopen(path2, "r");
    int a, c, count = 0;
    char word[16];
    long sum = 0;
    while (fscanf(f, "%d %15s %x", &a, word, &c) == 3) {
        sum += a + c + (long)strlen(word);
        count++;
    }
    printf("fscanf read %d records sum %ld\n", count, sum);
    rewind(f);
    char *ln = NULL;
    size_t cap = 0;
    ssize_t got_len;
    int k = 0;
    while ((got_len = getline(&ln, &cap, f)) > 0)
        if (k++ % 10 == 0)
            printf("getline %zd [%.*s]\n", got_len, (int)got_len - 1, ln);
    free(ln);
    rewind(f);
    int ch = fgetc(f);
    ungetc('#', f);
    printf("fgetc %c then after ungetc %c\n", ch, fgetc(f));
    fclose(f);
    f = fopen(path2, "a");
    fputs("appended\n", f);
    fclose(f);
    stat(path2, &st);
    printf("size after append %lld\n", (long long)st.st_size);

    printf("== open errors ==\n");
    snprintf(path, sizeof path, "%s/no/such/file", DIR_);
    errno = 0;
    f = fopen(path, "r");
    printf("fopen missing: %s errno %s\n", f ? "opened?" : "NULL", strerror(errno));
    show("open O_CREAT|O_EXCL existing", open(path2, O_CREAT | O_EXCL | O_WRONLY, 0644));
    show("open a directory for writing", open(DIR_, O_WRONLY));
    show("rmdir non-empty", rmdir(DIR_));

    printf("== directory listing (getdents64), sorted ==\n");
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/entry-%d", DIR_, i);
        int efd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
        for (int j = 0; j <= i; j++)
            write(efd, "abc", 3);
        close(efd);
    }
    DIR *dir = opendir(DIR_);
    char *names[32];
    int nn = 0;
    struct dirent *de;
    while ((de = readdir(dir)) && nn < 32)
        names[nn++] = strdup(de->d_name);
    closedir(dir);
    qsort(names, nn, sizeof names[0], cmp_str);
    for (int i = 0; i < nn; i++) {
        snprintf(path, sizeof path, "%s/%s", DIR_, names[i]);
        struct stat es;
        stat(path, &es);
        printf("  %-14s %s size %lld\n", names[i], S_ISDIR(es.st_mode) ? "dir " : "file",
               S_ISDIR(es.st_mode) ? 0LL : (long long)es.st_size);
        free(names[i]);
    }

    printf("== pipe ==\n");
    int pfd[2];
    show("pipe2", pipe2(pfd, O_CLOEXEC));
    const char msg[] = "through the pipe";
    printf("write %zd\n", write(pfd[1], msg, sizeof msg));
    char rb[64] = {0};
    printf("read %zd [%s]\n", read(pfd[0], rb, sizeof rb), rb);
    close(pfd[1]);
    printf("read at eof %zd\n", read(pfd[0], rb, sizeof rb));
    close(pfd[0]);

    printf("== cleanup ==\n");
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/entry-%d", DIR_, i);
        unlink(path);
    }
    show("unlink", unlink(path2));
    show("unlink again (ENOENT)", unlink(path2));
    show("rmdir", rmdir(DIR_));
    show("stat removed dir (ENOENT)", stat(DIR_, &st));
    return 0;
}

/* zstdrun: a small driver for the Zstandard library (zstd-sys's copy of
 * zstd/lib), written for coprof's workloads: the threaded one. It
 * compresses a file with worker threads (ZSTD_c_nbWorkers), whose output
 * zstd makes the same bytes however the threads interleave, or
 * decompresses one, to standard output.
 *
 *   zstdrun [-LEVEL] [-T WORKERS] [-J JOB_KB] FILE   compress
 *   zstdrun -d FILE                                  decompress
 *
 * Defaults: level 3, 2 workers, zstd's own job size (-J 512, its minimum,
 * cuts a few MB of input into several jobs that the workers share). */
#define ZSTD_STATIC_LINKING_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

static void check(size_t r, const char *what) {
    if (ZSTD_isError(r)) {
        fprintf(stderr, "zstdrun: %s: %s\n", what, ZSTD_getErrorName(r));
        exit(1);
    }
}

static int compress(const char *path, int level, int workers, int job_kb) {
    size_t len;
    unsigned char *in = read_file(path, &len);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level), "level");
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers), "workers");
    if (job_kb > 0)
        check(ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, job_kb * 1024), "job size");
    check(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1), "checksum");
    size_t cap = ZSTD_CStreamOutSize();
    unsigned char *out = malloc(cap);
    ZSTD_inBuffer src = {in, len, 0};
    size_t left;
    do {
        ZSTD_outBuffer dst = {out, cap, 0};
        left = ZSTD_compressStream2(c, &dst, &src, ZSTD_e_end);
        check(left, "compress");
        fwrite(out, 1, dst.pos, stdout);
    } while (left != 0);
    ZSTD_freeCCtx(c);
    free(out);
    free(in);
    return 0;
}

static int decompress(const char *path) {
    size_t len;
    unsigned char *in = read_file(path, &len);
    ZSTD_DCtx *d = ZSTD_createDCtx();
    size_t cap = ZSTD_DStreamOutSize();
    unsigned char *out = malloc(cap);
    ZSTD_inBuffer src = {in, len, 0};
    size_t r = 1;
    while (src.pos < src.size) {
        ZSTD_outBuffer dst = {out, cap, 0};
        r = ZSTD_decompressStream(d, &dst, &src);
        check(r, "decompress");
        fwrite(out, 1, dst.pos, stdout);
    }
    if (r != 0) {
        fprintf(stderr, "zstdrun: %s: truncated frame\n", path);
        return 1;
    }
    ZSTD_freeDCtx(d);
    free(out);
    free(in);
    return 0;
}

int main(int argc, char **argv) {
    int level = 3, workers = 2, job_kb = 0, unpack = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-d"))
            unpack = 1;
        else if (!strcmp(argv[i], "-T") && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-J") && i + 1 < argc)
            job_kb = atoi(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1] >= '0' && argv[i][1] <= '9')
            level = atoi(argv[i] + 1);
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: zstdrun [-LEVEL] [-T WORKERS] [-J JOB_KB] FILE | zstdrun -d FILE\n");
        return 2;
    }
    return unpack ? decompress(path) : compress(path, level, workers, job_kb);
}

/*
 * minigzip: a small gzip-like driver for zlib (libz-sys ships the library
 * only), built by workloads/build-real.sh as a real workload for coprof's
 * simulator. It exercises deflate (longest-match search, hashing, Huffman
 * tree building) and inflate (table-driven decoding) on real data.
 *
 *   minigzip [-LEVEL] IN [-o OUT.gz]   compress IN in gzip format, then
 *                                      decompress the result in memory and
 *                                      check it equals IN
 *   minigzip -d IN.gz [-o OUT]         decompress a gzip file
 *
 * Prints the input and output sizes and the CRC-32 of the uncompressed
 * data, so that two runs (qemu-riscv64 and coprof run) can be compared by
 * their standard output. Exit status: 0 on success, 1 on a data error
 * (corrupt input, round trip mismatch), 2 on a usage or I/O error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void die(int status, const char *what, const char *detail) {
    fprintf(stderr, "minigzip: %s: %s\n", what, detail);
    exit(status);
}

/* Reads a whole file into memory. */
static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die(2, path, "cannot open");
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) die(2, path, "out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) die(2, path, "out of memory");
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    if (ferror(f)) die(2, path, "read error");
    fclose(f);
    *len = n;
    return buf;
}

static void write_file(const char *path, const unsigned char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) die(2, path, "cannot create");
    if (fwrite(data, 1, len, f) != len || fclose(f) != 0) die(2, path, "write error");
}

/* Compresses in[0..len) into a gzip stream (windowBits 15 + 16). */
static unsigned char *gzip_compress(const unsigned char *in, size_t len, int level, size_t *out_len) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        die(2, "deflateInit2", s.msg ? s.msg : "failed");
    size_t cap = deflateBound(&s, len) + 64;
    unsigned char *out = malloc(cap);
    if (!out) die(2, "compress", "out of memory");
    /* Feed the input in 64 KiB pieces, as a streaming compressor would. */
    size_t pos = 0;
    s.next_out = out;
    s.avail_out = (uInt)cap;
    int rc;
    do {
        size_t piece = len - pos < 65536 ? len - pos : 65536;
        s.next_in = (unsigned char *)in + pos;
        s.avail_in = (uInt)piece;
        pos += piece;
        rc = deflate(&s, pos == len ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) die(2, "deflate", "stream error");
    } while (pos < len || rc != Z_STREAM_END);
    *out_len = s.total_out;
    deflateEnd(&s);
    return out;
}

/* Decompresses a gzip stream; returns NULL (with *err set) if it is corrupt. */
static unsigned char *gzip_decompress(const unsigned char *in, size_t len, size_t *out_len, const char **err) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, 15 + 16) != Z_OK) die(2, "inflateInit2", "failed");
    size_t cap = len * 4 + 1024, n = 0;
    unsigned char *out = malloc(cap);
    if (!out) die(2, "decompress", "out of memory");
    s.next_in = (unsigned char *)in;
    s.avail_in = (uInt)len;
    int rc;
    do {
        if (n == cap) {
            cap *= 2;
            out = realloc(out, cap);
            if (!out) die(2, "decompress", "out of memory");
        }
        s.next_out = out + n;
        s.avail_out = (uInt)(cap - n);
        rc = inflate(&s, Z_NO_FLUSH);
        n = cap - s.avail_out;
        if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_MEM_ERROR ||
            (rc == Z_BUF_ERROR && s.avail_in == 0)) {
            *err = s.msg ? s.msg : (rc == Z_BUF_ERROR ? "truncated input" : "corrupt input");
            inflateEnd(&s);
            free(out);
            return NULL;
        }
    } while (rc != Z_STREAM_END);
    inflateEnd(&s);
    *out_len = n;
    return out;
}

static unsigned long crc_of(const unsigned char *p, size_t n) {
    return crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

int main(int argc, char **argv) {
    int level = Z_DEFAULT_COMPRESSION, decompress = 0;
    const char *in_path = NULL, *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-d") == 0) {
            decompress = 1;
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (a[0] == '-' && a[1] >= '0' && a[1] <= '9' && a[2] == 0) {
            level = a[1] - '0';
        } else if (a[0] != '-' && !in_path) {
            in_path = a;
        } else {
            fprintf(stderr, "usage: minigzip [-0..-9] IN [-o OUT.gz] | minigzip -d IN.gz [-o OUT]\n");
            return 2;
        }
    }
    if (!in_path) {
        fprintf(stderr, "usage: minigzip [-0..-9] IN [-o OUT.gz] | minigzip -d IN.gz [-o OUT]\n");
        return 2;
    }
    size_t in_len;
    unsigned char *in = read_file(in_path, &in_len);
    const char *err = NULL;
    if (decompress) {
        size_t out_len;
        unsigned char *out = gzip_decompress(in, in_len, &out_len, &err);
        if (!out) die(1, in_path, err);
        if (out_path) write_file(out_path, out, out_len);
        printf("%s: %zu bytes compressed, %zu bytes decompressed, crc32 %08lx\n", in_path, in_len, out_len,
               crc_of(out, out_len));
        return 0;
    }
    size_t gz_len, back_len;
    unsigned char *gz = gzip_compress(in, in_len, level, &gz_len);
    if (out_path) write_file(out_path, gz, gz_len);
    unsigned char *back = gzip_decompress(gz, gz_len, &back_len, &err);
    if (!back) die(1, "round trip", err);
    if (back_len != in_len || memcmp(back, in, in_len) != 0) die(1, "round trip", "decompressed data differs");
    printf("%s: %zu bytes, level %d, %zu bytes compressed (%.2f%%), crc32 %08lx, gzip crc32 %08lx, round trip ok\n",
           in_path, in_len, level == Z_DEFAULT_COMPRESSION ? 6 : level, gz_len,
           in_len ? 100.0 * (double)gz_len / (double)in_len : 0.0, crc_of(in, in_len), crc_of(gz, gz_len));
    return 0;
}

/* sha256.c: SHA-256 (FIPS 180-4) of a 16 KiB message, as in MiBench's
 * security/sha (which uses SHA-1): 64 rounds of 32-bit rotates, adds and
 * logic per 64-byte block. Each repetition hashes the message with the
 * previous digest mixed in. Checked first against the FIPS "abc" example.
 * Argument: repetitions (default 140). */
#include <string.h>
#include "kernel.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const uint8_t *blk) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)blk[4 * t] << 24 | (uint32_t)blk[4 * t + 1] << 16 | (uint32_t)blk[4 * t + 2] << 8 | blk[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

static void sha256(const uint8_t *msg, size_t len, uint8_t out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t i = 0;
    for (; i + 64 <= len; i += 64)
        compress(h, msg + i);
    uint8_t last[128] = {0};
    size_t rest = len - i;
    memcpy(last, msg + i, rest);
    last[rest] = 0x80;
    size_t total = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int k = 0; k < 8; k++)
        last[total - 1 - k] = (uint8_t)(bits >> (8 * k));
    for (size_t k = 0; k < total; k += 64)
        compress(h, last + k);
    for (int k = 0; k < 8; k++) {
        out[4 * k] = (uint8_t)(h[k] >> 24);
        out[4 * k + 1] = (uint8_t)(h[k] >> 16);
        out[4 * k + 2] = (uint8_t)(h[k] >> 8);
        out[4 * k + 3] = (uint8_t)h[k];
    }
}

static void hex(const uint8_t d[32], char s[65]) {
    for (int i = 0; i < 32; i++)
        sprintf(s + 2 * i, "%02x", d[i]);
}

enum { LEN = 16384 };
static uint8_t msg[LEN];

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 140, "sha256");
    uint8_t d[32];
    char s[65];
    sha256((const uint8_t *)"abc", 3, d);
    hex(d, s);
    printf("sha256(\"abc\") = %s\n", s);
    if (strcmp(s, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") != 0) {
        fprintf(stderr, "sha256: the FIPS 180-4 example does not match\n");
        return 1;
    }
    for (int i = 0; i < LEN; i++)
        msg[i] = (uint8_t)kernel_rand();
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) {
        sha256(msg, LEN - (size_t)(r % 64), d);
        memcpy(msg + (r % (LEN / 32)) * 32, d, 32);
        for (int i = 0; i < 8; i++)
            sum = sum * 257 + d[i];
    }
    hex(d, s);
    printf("last digest %s\n", s);
    kernel_done("sha256", reps, sum);
    return 0;
}

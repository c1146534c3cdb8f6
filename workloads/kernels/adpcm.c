/* adpcm.c: IMA ADPCM (the Intel/DVI algorithm of MiBench's
 * telecomm/adpcm, rawcaudio and rawdaudio) encoding 16-bit PCM to 4-bit
 * codes and decoding them back, on a synthesized tone-plus-noise signal of
 * 32768 samples: data-dependent branches and small table lookups per
 * sample. Argument: repetitions (default 65). */
#include "kernel.h"

static const int index_table[16] = {-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8};
static const int step_table[89] = {
    7,     8,     9,     10,    11,    12,    13,    14,    16,    17,    19,    21,    23,    25,    28,
    31,    34,    37,    41,    45,    50,    55,    60,    66,    73,    80,    88,    97,    107,   118,
    130,   143,   157,   173,   190,   209,   230,   253,   279,   307,   337,   371,   408,   449,   494,
    544,   598,   658,   724,   796,   876,   963,   1060,  1166,  1282,  1411,  1552,  1707,  1878,  2066,
    2272,  2499,  2749,  3024,  3327,  3660,  4026,  4428,  4871,  5358,  5894,  6484,  7132,  7845,  8630,
    9493,  10442, 11487, 12635, 13899, 15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767};

struct state { int valprev; int index; };

static void encode(const int16_t *in, uint8_t *out, int n, struct state *st) {
    int valpred = st->valprev, index = st->index, step = step_table[index];
    int buffer = 0, half = 1;
    for (int i = 0; i < n; i++) {
        int diff = in[i] - valpred;
        int sign = diff < 0 ? 8 : 0;
        if (sign)
            diff = -diff;
        int delta = 0, vpdiff = step >> 3;
        if (diff >= step) { delta = 4; diff -= step; vpdiff += step; }
        step >>= 1;
        if (diff >= step) { delta |= 2; diff -= step; vpdiff += step; }
        step >>= 1;
        if (diff >= step) { delta |= 1; vpdiff += step; }
        valpred += sign ? -vpdiff : vpdiff;
        if (valpred > 32767) valpred = 32767;
        else if (valpred < -32768) valpred = -32768;
        delta |= sign;
        index += index_table[delta];
        if (index < 0) index = 0;
        if (index > 88) index = 88;
        step = step_table[index];
        if (half) buffer = (delta << 4) & 0xf0;
        else *out++ = (uint8_t)((delta & 0x0f) | buffer);
        half = !half;
    }
    if (!half)
        *out++ = (uint8_t)buffer;
    st->valprev = valpred;
    st->index = index;
}

static void decode(const uint8_t *in, int16_t *out, int n, struct state *st) {
    int valpred = st->valprev, index = st->index, step = step_table[index];
    int buffer = 0, half = 0;
    for (int i = 0; i < n; i++) {
        int delta;
        if (half) delta = buffer & 0xf;
        else { buffer = *in++; delta = (buffer >> 4) & 0xf; }
        half = !half;
        index += index_table[delta];
        if (index < 0) index = 0;
        if (index > 88) index = 88;
        int sign = delta & 8;
        delta &= 7;
        int vpdiff = step >> 3;
        if (delta & 4) vpdiff += step;
        if (delta & 2) vpdiff += step >> 1;
        if (delta & 1) vpdiff += step >> 2;
        valpred += sign ? -vpdiff : vpdiff;
        if (valpred > 32767) valpred = 32767;
        else if (valpred < -32768) valpred = -32768;
        step = step_table[index];
        *out++ = (int16_t)valpred;
    }
    st->valprev = valpred;
    st->index = index;
}

enum { N = 32768 };
static int16_t pcm[N], back[N];
static uint8_t code[N / 2];

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 65, "adpcm");
    /* A square-ish tone with a slow ramp and noise: integer only. */
    for (int i = 0; i < N; i++) {
        int tone = ((i / 23) % 2 ? 9000 : -9000) + ((i % 23) * 700 - 8000);
        pcm[i] = (int16_t)(tone / 2 + (int)(kernel_rand() % 3000) - 1500 + (i % 4096) - 2048);
    }
    uint64_t sum = 0;
    int64_t err = 0;
    for (long r = 0; r < reps; r++) {
        struct state enc = {0, 0}, dec = {0, 0};
        encode(pcm, code, N, &enc);
        decode(code, back, N, &dec);
        for (int i = 0; i < N / 2; i++)
            sum = sum * 257 + code[i];
        for (int i = 0; i < N; i++) {
            int d = back[i] - pcm[i];
            err += d < 0 ? -d : d;
        }
        pcm[r % N] ^= (int16_t)sum;
    }
    printf("mean absolute error per sample %lld/%ld\n", (long long)(err / reps), (long)N);
    kernel_done("adpcm", reps, sum);
    return 0;
}

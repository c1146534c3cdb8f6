/* dct8x8.c: the 8x8 two-dimensional discrete cosine transform of JPEG
 * (MiBench consumer/jpeg's forward DCT, EEMBC's idct): the separable
 * row-column DCT-II in fixed point with a 13-bit cosine table, quantized,
 * then the inverse transform, over all blocks of a 256x256 generated
 * image. Argument: repetitions (default 9). */
#include "kernel.h"

enum { W = 256, H = 256, SHIFT = 13 };
static uint8_t img[H][W];
static int16_t coefs[H][W];
static uint8_t out[H][W];
static int32_t cosq[8][8]; /* round(c(u) * cos((2x+1)u*pi/16) * 2^13 / 2) */

/* cos((2x+1)u*pi/16) * 2^13 for u,x in 0..7, precomputed (no libm). */
static const int32_t COS[8][8] = {
    {8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192},
    {8035, 6811, 4551, 1598, -1598, -4551, -6811, -8035},
    {7568, 3135, -3135, -7568, -7568, -3135, 3135, 7568},
    {6811, -1598, -8035, -4551, 4551, 8035, 1598, -6811},
    {5793, -5793, -5793, 5793, 5793, -5793, -5793, 5793},
    {4551, -8035, 1598, 6811, -6811, -1598, 8035, -4551},
    {3135, -7568, 7568, -3135, -3135, 7568, -7568, 3135},
    {1598, -4551, 6811, -8035, 8035, -6811, 4551, -1598}};

static const int Q[8][8] = {
    {16, 11, 10, 16, 24, 40, 51, 61},     {12, 12, 14, 19, 26, 58, 60, 55},
    {14, 13, 16, 24, 40, 57, 69, 56},     {14, 17, 22, 29, 51, 87, 80, 62},
    {18, 22, 37, 56, 68, 109, 103, 77},   {24, 35, 55, 64, 81, 104, 113, 92},
    {49, 64, 78, 87, 103, 121, 120, 101}, {72, 92, 95, 98, 112, 100, 103, 99}};

static void init_table(void) {
    /* c(0) = 1/sqrt(2) (5793/8192), c(u>0) = 1; the 1/2 of the 8-point
     * DCT is applied here. */
    for (int u = 0; u < 8; u++)
        for (int x = 0; x < 8; x++)
            cosq[u][x] = u == 0 ? (COS[u][x] * 5793 / 8192) / 2 : COS[u][x] / 2;
}

static void fdct_block(int by, int bx) {
    int32_t tmp[8][8];
    for (int y = 0; y < 8; y++)
        for (int u = 0; u < 8; u++) {
            int64_t s = 0;
            for (int x = 0; x < 8; x++)
                s += (int64_t)cosq[u][x] * (img[by + y][bx + x] - 128);
            tmp[y][u] = (int32_t)(s >> SHIFT);
        }
    for (int u = 0; u < 8; u++)
        for (int v = 0; v < 8; v++) {
            int64_t s = 0;
            for (int y = 0; y < 8; y++)
                s += (int64_t)cosq[v][y] * tmp[y][u];
            int32_t c = (int32_t)(s >> SHIFT);
            int q = Q[v][u];
            coefs[by + v][bx + u] = (int16_t)((c >= 0 ? c + q / 2 : c - q / 2) / q);
        }
}

static void idct_block(int by, int bx) {
    int32_t tmp[8][8];
    for (int v = 0; v < 8; v++)
        for (int x = 0; x < 8; x++) {
            int64_t s = 0;
            for (int u = 0; u < 8; u++)
                s += (int64_t)cosq[u][x] * coefs[by + v][bx + u] * Q[v][u];
            tmp[v][x] = (int32_t)(s >> SHIFT);
        }
    for (int x = 0; x < 8; x++)
        for (int y = 0; y < 8; y++) {
            int64_t s = 0;
            for (int v = 0; v < 8; v++)
                s += (int64_t)cosq[v][y] * tmp[v][x];
            int p = (int)(s >> SHIFT) + 128;
            out[by + y][bx + x] = (uint8_t)(p < 0 ? 0 : p > 255 ? 255 : p);
        }
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 9, "dct8x8");
    init_table();
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y][x] = (uint8_t)(((x * 3 + y * 2) & 0xff) / 2 + (kernel_rand() % 64) + ((x / 32 + y / 32) % 2) * 40);
    uint64_t sum = 0;
    long sq_err = 0;
    for (long r = 0; r < reps; r++) {
        for (int by = 0; by < H; by += 8)
            for (int bx = 0; bx < W; bx += 8) {
                fdct_block(by, bx);
                idct_block(by, bx);
            }
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int d = out[y][x] - img[y][x];
                sq_err += d * d;
                sum = sum * 1000003 + (uint16_t)coefs[y][x];
            }
        img[r % H][(r * 31) % W] ^= 0x55;
    }
    printf("mean squared reconstruction error x1000: %ld\n", sq_err * 1000 / ((long)W * H * reps));
    kernel_done("dct8x8", reps, sum);
    return 0;
}

/* crc32.c: CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) over a
 * 64 KiB buffer with a 256-entry lookup table, as in MiBench's
 * telecomm/CRC32: one table load per byte in a tight loop. Each repetition
 * chains the previous CRC into the buffer. The first repetition is checked
 * against a bit-at-a-time CRC. Argument: repetitions (default 270). */
#include "kernel.h"

enum { LEN = 65536 };
static uint8_t buf[LEN];
static uint32_t table[256];

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
}

static uint32_t crc32_table(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

int main(int argc, char **argv) {
    long reps = kernel_reps(argc, argv, 270, "crc32");
    make_table();
    for (int i = 0; i < LEN; i++)
        buf[i] = (uint8_t)kernel_rand();
    uint32_t check = crc32_bitwise(0, (const uint8_t *)"123456789", 9);
    printf("crc32(\"123456789\") = %08x (expected cbf43926)\n", check);
    uint32_t crc = 0;
    uint64_t sum = 0;
    for (long r = 0; r < reps; r++) {
        crc = crc32_table(crc, buf, LEN);
        if (r == 0 && crc != crc32_bitwise(0, buf, LEN)) {
            fprintf(stderr, "crc32: table and bitwise CRCs disagree\n");
            return 1;
        }
        buf[r % LEN] ^= (uint8_t)crc;
        sum = sum * 31 + crc;
    }
    printf("final crc %08x\n", crc);
    kernel_done("crc32", reps, sum);
    return 0;
}

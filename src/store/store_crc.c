/* CRC32C, table-driven, slicing by 8 (reflected polynomial 0x82F63B78). The tables are
 * built once on first use; the build is idempotent, so a race between two first
 * callers only computes the same table twice. */
#include "store/store_crc.h"

#include <stdbool.h>

static uint32_t T[8][256];
static volatile bool built;

static void build(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        T[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++) T[s][i] = (T[s - 1][i] >> 8) ^ T[0][T[s - 1][i] & 0xff];
    built = true;
}

uint32_t store_crc32c(uint32_t crc, const void *data, size_t len) {
    if (!built) build();
    const unsigned char *p = data;
    crc = ~crc;
    while (len >= 8) {
        /* little-endian assembly keeps the result independent of the host byte order */
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = T[7][lo & 0xff] ^ T[6][(lo >> 8) & 0xff] ^ T[5][(lo >> 16) & 0xff] ^ T[4][lo >> 24] ^
              T[3][p[4]] ^ T[2][p[5]] ^ T[1][p[6]] ^ T[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) crc = (crc >> 8) ^ T[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

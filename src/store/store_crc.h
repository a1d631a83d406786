/* CRC32C (Castagnoli), the checksum of every log record and checkpoint. Written here
 * rather than taken from a library: Debian packages no small CRC32C library. */
#ifndef IL_STORE_STORE_CRC_H
#define IL_STORE_STORE_CRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Continues a CRC32C over more bytes; start with crc = 0. Uses the processor's crc32
   instruction where it has one (store_crc32c_hardware), else store_crc32c_portable. */
uint32_t store_crc32c(uint32_t crc, const void *data, size_t len);

/* The same checksum from tables, on any processor (tests compare the two). */
uint32_t store_crc32c_portable(uint32_t crc, const void *data, size_t len);

/* Whether store_crc32c uses the processor's instruction here. */
bool store_crc32c_hardware(void);

#endif

/* CRC32C (Castagnoli), the checksum of every log record. Written here (table-driven,
 * slicing by 8) rather than taken from a library: Debian packages no small CRC32C
 * library, and the table version is fast enough that fdatasync, not the checksum,
 * bounds a commit. */
#ifndef IL_STORE_STORE_CRC_H
#define IL_STORE_STORE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC32C over more bytes; start with crc = 0. */
uint32_t store_crc32c(uint32_t crc, const void *data, size_t len);

#endif

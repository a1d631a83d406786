/* The compact binary encoding of log payloads: unsigned LEB128 varints, zigzag for
 * signed integers, length-prefixed strings, and values tagged by one byte (ints and
 * timestamps as zigzag varints, floats as 8 raw bytes, vectors as a count and their
 * f32 or i8 elements). Decoding never trusts the input: every read is bounds-checked
 * and a short or malformed payload makes the reader fail, never crash. */
#ifndef IL_STORE_STORE_CODEC_H
#define IL_STORE_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "value/value.h"

void codec_put_u8(il_buf *b, uint8_t v);
void codec_put_uvar(il_buf *b, uint64_t v);
void codec_put_svar(il_buf *b, int64_t v);
void codec_put_u32le(il_buf *b, uint32_t v);
void codec_put_u64le(il_buf *b, uint64_t v);
void codec_put_bytes(il_buf *b, const void *p, size_t n); /* length-prefixed */
void codec_put_str(il_buf *b, const char *s);
void codec_put_val(il_buf *b, val_t v);

/* A bounds-checked cursor over a payload. `ok` turns false at the first bad read and
 * stays false; reads after that return zeros. */
typedef struct codec_reader {
    const unsigned char *p, *end;
    bool ok;
} codec_reader;

void codec_reader_init(codec_reader *r, const void *data, size_t len);
bool codec_at_end(const codec_reader *r);
uint8_t codec_get_u8(codec_reader *r);
uint64_t codec_get_uvar(codec_reader *r);
int64_t codec_get_svar(codec_reader *r);
/* A length-prefixed byte string, pointing into the payload (not NUL-terminated). */
const char *codec_get_bytes(codec_reader *r, size_t *len);
/* A length-prefixed string copied into a NUL-terminated malloc'ed block, or NULL. */
char *codec_get_strdup(codec_reader *r);
val_t codec_get_val(codec_reader *r);

uint32_t codec_load_u32le(const unsigned char *p);
uint64_t codec_load_u64le(const unsigned char *p);

#endif

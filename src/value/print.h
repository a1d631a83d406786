/* Text forms of values: the table cell text the CLI prints, the server-side "Display"
 * text used in listings and messages, and the two float formats they rest on. */
#ifndef IL_VALUE_PRINT_H
#define IL_VALUE_PRINT_H

#include "base/buf.h"
#include "value/value.h"

/* Table cell text (iql-language.md 6.7): ints in decimal; finite floats in shortest
 * round-trip form (fmt_f64_shortest); NaN/inf and Null as `null`; strings quoted, with
 * `\`, `"` and control characters written as escapes (\\ \" \n \t \r) so that a value
 * prints as the literal that wrote it; booleans `true`/`false`; vectors `[e1, e2]` with
 * each f32 element widened to f64 and printed like a float (f32 0.1 shows as
 * 0.10000000149011612, as the reference prints it); i8 vectors `[1, -2]`; timestamps as
 * plain integers. */
void val_fmt_cell(val_t v, il_buf *out);
/* A value as JSON, as result rows carry it on the wire: a string as the JSON string of
 * its bytes (il_json_str), any other value as its cell text, which is JSON already
 * (numbers, null for Null and NaN/inf, booleans, vectors as arrays). */
void val_fmt_json(val_t v, il_buf *out);
/* True when the value is a JSON number on the wire (right-aligned in tables): Int,
 * Timestamp and finite Float. */
bool val_cell_is_number(val_t v);

/* Value Display (6.7): Int decimal; Float as fmt_f64_display; String `"raw"` with the
 * same escapes as cells; Bool; Null as `NULL`; vectors `[1.0000, 2.0000]` (more than 6
 * elements: the first 5 then `... N more`); i8 vectors the same without decimals and
 * with the suffix `]i8`; Timestamp `Nms`. */
void val_fmt_display(val_t v, il_buf *out);

/* `"` + s[0, len) + `"`, with backslash, quote, newline, tab and carriage return written
 * as the escapes IQL reads (\\ \" \n \t \r): a string as the literal that writes it. */
void val_fmt_quoted(const char *s, size_t len, il_buf *out);

/* Shortest round-trip decimal in ryu's layout (6.7 `ryu_f64`): 0.0, 100.0, 3.14,
 * 0.001, 1e20, 2.5e-7, -0.0. Non-finite input prints `null`. */
void fmt_f64_shortest(double d, il_buf *out);
/* The same for an f32 value: the shortest digits that read back as that f32. */
void fmt_f32_shortest(float f, il_buf *out);
/* Rust `{}` of an f64: shortest digits, never an exponent, integral values without
 * `.0` (2.0 -> 2, 1e20 -> 100000000000000000000, 1e-7 -> 0.0000001, -0.0 -> -0,
 * NaN -> NaN, inf -> inf). */
void fmt_f64_display(double d, il_buf *out);

#endif

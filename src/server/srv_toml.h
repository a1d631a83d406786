/* A parser for the subset of TOML that the server's configuration uses: [tables] with
 * dotted names, `key = value` lines (dotted keys too), comments, and values that are basic
 * or literal strings, integers, floats, booleans or arrays of strings (which may span
 * lines). Everything else TOML has (inline tables, arrays of tables, dates, multi-line
 * strings) is refused with a line number rather than half understood. No C TOML library
 * is packaged for the build machines, hence our own. */
#ifndef IL_SERVER_SRV_TOML_H
#define IL_SERVER_SRV_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum srv_toml_type {
    SRV_TOML_STRING,
    SRV_TOML_INT,
    SRV_TOML_FLOAT,
    SRV_TOML_BOOL,
    SRV_TOML_ARRAY, /* of strings */
} srv_toml_type;

typedef struct srv_toml_value {
    srv_toml_type type;
    char *str; /* STRING: malloc'ed, may contain no NUL (refused at parse) */
    int64_t i;
    double f;
    bool b;
    char **items; /* ARRAY */
    size_t nitems;
} srv_toml_value;

typedef struct srv_toml_entry {
    char *key; /* full dotted key, e.g. "http.rate_limit.max_connections" */
    int line;  /* 1-based line of the key */
    srv_toml_value v;
} srv_toml_entry;

typedef struct srv_toml {
    srv_toml_entry *entries; /* in file order */
    size_t n;
} srv_toml;

/* Parses a whole document. On failure returns false, frees what it built and writes
 * "line N: <what>" into err. */
bool srv_toml_parse(const char *text, size_t len, srv_toml *out, char *err, size_t errlen);
/* Parses one value exactly as it may follow `=` (nothing but blanks after it). */
bool srv_toml_parse_value(const char *text, size_t len, srv_toml_value *v, char *err,
                          size_t errlen);
void srv_toml_value_free(srv_toml_value *v);
void srv_toml_free(srv_toml *t);
const char *srv_toml_type_name(srv_toml_type t);

#endif

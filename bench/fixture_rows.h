/* The rows the benchmark fixtures check: every answer they read is a set of two-integer
 * rows ([head, tail]: `?two_hop(1, Z)`, `?r1(400, Y)`, `?hot_reach(X, Y)` ...), compared
 * with the rows the fixture computed itself. Also the checks every subscription reply
 * and every `subscription_delta` header must pass. */
#ifndef IL_BENCH_FIXTURE_ROWS_H
#define IL_BENCH_FIXTURE_ROWS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fx_row {
    int64_t head, tail;
} fx_row;

int fx_row_cmp(const void *a, const void *b);

/* Sorts the rows and drops repeats; returns how many are left. */
size_t fx_rows_sort_unique(fx_row *rows, size_t n);

/* Reads a [head, tail] row of integers. */
bool fx_read_row(const json_t *v, fx_row *r);

/* Checks that the JSON array `rows` holds exactly the `expected` rows (sorted, without
 * repeats) in any order. FX_OK, or FX_INVALID (FX_FAILED when memory runs out) with the
 * first difference in why. */
int fx_check_rows(const json_t *rows, const fx_row *expected, size_t n, char *why, size_t why_len);

/* Checks a `.subscribe NAME ...` result: `subscribed.subscription` is NAME and the rows
 * are the expected snapshot; returns `subscribed.generation` in *generation. */
int fx_check_subscribed(const json_t *result, const char *name, const fx_row *expected, size_t n,
                        uint64_t *generation, char *why, size_t why_len);

/* Checks what every delta of subscription NAME must be: its name and generation, seq
 * *next_seq (then advanced), `inserted` and `retracted` arrays, not both empty. */
int fx_check_delta_header(const json_t *delta, const char *name, uint64_t generation,
                          uint64_t *next_seq, char *why, size_t why_len);

#endif

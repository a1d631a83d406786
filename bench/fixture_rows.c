/* The rows the benchmark fixtures check; see fixture_rows.h. */
#include "fixture_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_session.h"

int fx_row_cmp(const void *pa, const void *pb) {
    const fx_row *a = pa, *b = pb;
    if (a->head != b->head) return a->head < b->head ? -1 : 1;
    return a->tail < b->tail ? -1 : a->tail > b->tail;
}

size_t fx_rows_sort_unique(fx_row *rows, size_t n) {
    qsort(rows, n, sizeof *rows, fx_row_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (kept == 0 || fx_row_cmp(&rows[kept - 1], &rows[i]) != 0) rows[kept++] = rows[i];
    return kept;
}

bool fx_read_row(const json_t *v, fx_row *r) {
    if (json_array_size(v) != 2 || !json_is_integer(json_array_get(v, 0)) ||
        !json_is_integer(json_array_get(v, 1)))
        return false;
    r->head = json_integer_value(json_array_get(v, 0));
    r->tail = json_integer_value(json_array_get(v, 1));
    return true;
}

int fx_check_rows(const json_t *rows, const fx_row *expected, size_t n, char *why, size_t why_len) {
    size_t got_n = json_array_size(rows);
    if (!json_is_array(rows)) {
        snprintf(why, why_len, "no rows array");
        return FX_INVALID;
    }
    fx_row *got = malloc((got_n ? got_n : 1) * sizeof *got);
    if (!got) {
        snprintf(why, why_len, "out of memory");
        return FX_FAILED;
    }
    int rc = FX_OK;
    for (size_t i = 0; rc == FX_OK && i < got_n; i++)
        if (!fx_read_row(json_array_get(rows, i), &got[i])) {
            snprintf(why, why_len, "row %zu is not [int, int]", i);
            rc = FX_INVALID;
        }
    if (rc == FX_OK) {
        qsort(got, got_n, sizeof *got, fx_row_cmp);
        size_t i = 0, j = 0;
        while (rc == FX_OK && (i < got_n || j < n)) {
            int c = i == got_n ? 1 : j == n ? -1 : fx_row_cmp(&got[i], &expected[j]);
            if (c == 0) {
                i++, j++;
                continue;
            }
            const fx_row *r = c < 0 ? &got[i] : &expected[j];
            snprintf(why, why_len,
                     "%zu rows where %zu were expected; the first difference: %s row [%" PRId64
                     ",%" PRId64 "]",
                     got_n, n,
                     c < 0 ? (i > 0 && fx_row_cmp(&got[i], &got[i - 1]) == 0 ? "a repeated"
                                                                             : "an unexpected")
                           : "a missing",
                     r->head, r->tail);
            rc = FX_INVALID;
        }
    }
    free(got);
    return rc;
}

int fx_check_subscribed(const json_t *result, const char *name, const fx_row *expected, size_t n,
                        uint64_t *generation, char *why, size_t why_len) {
    const json_t *sub = json_object_get(result, "subscribed");
    const char *got = json_string_value(json_object_get(sub, "subscription"));
    if (!got || strcmp(got, name) != 0 || !json_is_integer(json_object_get(sub, "generation"))) {
        snprintf(why, why_len, "the reply to .subscribe %s has no subscribed{%s, generation}", name,
                 name);
        return FX_INVALID;
    }
    *generation = (uint64_t)json_integer_value(json_object_get(sub, "generation"));
    char diff[256];
    int rc = fx_check_rows(json_object_get(result, "rows"), expected, n, diff, sizeof diff);
    if (rc != FX_OK) snprintf(why, why_len, "the snapshot of %s: %s", name, diff);
    return rc;
}

int fx_check_delta_header(const json_t *delta, const char *name, uint64_t generation,
                          uint64_t *next_seq, char *why, size_t why_len) {
    const char *got = json_string_value(json_object_get(delta, "subscription"));
    uint64_t gen = (uint64_t)json_integer_value(json_object_get(delta, "generation"));
    uint64_t seq = (uint64_t)json_integer_value(json_object_get(delta, "seq"));
    const json_t *ins = json_object_get(delta, "inserted"),
                 *ret = json_object_get(delta, "retracted");
    if (!got || strcmp(got, name) != 0 || gen != generation) {
        snprintf(why, why_len,
                 "%s got a delta of another subscription (%s, generation %" PRIu64 ")", name,
                 got ? got : "?", gen);
        return FX_INVALID;
    }
    if (seq != *next_seq) {
        snprintf(why, why_len, "%s: delta seq %" PRIu64 " where %" PRIu64 " was due", name, seq,
                 *next_seq);
        return FX_INVALID;
    }
    ++*next_seq;
    if (!json_is_array(ins) || !json_is_array(ret) ||
        json_array_size(ins) + json_array_size(ret) == 0) {
        snprintf(why, why_len, "%s: a delta without rows (seq %" PRIu64 ")", name, seq);
        return FX_INVALID;
    }
    return FX_OK;
}

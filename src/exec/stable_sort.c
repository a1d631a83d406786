/* Stable sort with stop checks (see stable_sort.h): a top-down merge sort whose pieces of
 * at most RUN elements are sorted with qsort (glibc's is a stable merge sort). Two sorted
 * halves already in order are left alone; otherwise the left half is copied out to a
 * counted buffer (base/meter.h) and merged back with the right one in place, so the
 * buffer holds at most half the elements, and is not even allocated for input that is
 * already sorted (often: rows and bindings come out of indexes). The guard is checked
 * before each piece and every RUN elements merged. A sort of at most RUN elements is one
 * qsort with no check. */
#include "exec/stable_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/guard.h"

/* About a millisecond of sorting between checks. */
enum { RUN = 1 << 14 };

typedef struct sorter {
    size_t size;
    int (*cmp)(const void *, const void *);
    char *buf;        /* the left half of a merge; allocated at the first merge */
    size_t buf_elems; /* room for the largest left half */
} sorter;

/* Elements are rows of words or pointers: copied a word at a time, inline, rather than
 * by a call to memcpy for a few bytes. */
static inline void copy_element(char *dst, const char *src, size_t size) {
    if (size % sizeof(uint64_t)) {
        memcpy(dst, src, size);
        return;
    }
    for (size_t i = 0; i < size; i += sizeof(uint64_t)) memcpy(dst + i, src + i, sizeof(uint64_t));
}

/* Merges the sorted base[0..n1) and base[n1..n1+n2) in place, the left side first among
 * equals. Returns false when the statement must stop. */
static bool merge(sorter *s, char *base, size_t n1, size_t n2) {
    size_t size = s->size;
    if (!s->buf) s->buf = il_mem_alloc(s->buf_elems * size);
    memcpy(s->buf, base, n1 * size);
    const char *a = s->buf, *ae = s->buf + n1 * size;
    const char *b = base + n1 * size, *be = b + n2 * size;
    char *out = base; /* never overtakes b: it has n1 more elements to write first */
    size_t since_check = 0;
    while (a < ae && b < be) {
        if (s->cmp(b, a) < 0) {
            copy_element(out, b, size);
            b += size;
        } else {
            copy_element(out, a, size);
            a += size;
        }
        out += size;
        if (++since_check == RUN) {
            if (exec_should_stop()) return false;
            since_check = 0;
        }
    }
    memcpy(out, a, (size_t)(ae - a)); /* what is left of the right side is in place */
    return true;
}

static bool sort_range(sorter *s, char *base, size_t n) {
    if (n <= RUN) {
        if (exec_should_stop()) return false;
        qsort(base, n, s->size, s->cmp);
        return true;
    }
    size_t n1 = n / 2;
    char *right = base + n1 * s->size;
    if (!sort_range(s, base, n1) || !sort_range(s, right, n - n1)) return false;
    if (s->cmp(right, right - s->size) >= 0) return true; /* already in order */
    return merge(s, base, n1, n - n1);
}

bool exec_stable_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    if (n <= RUN) { /* short: the callers' own checks cover it */
        if (n > 1) qsort(base, n, size, cmp);
        return true;
    }
    sorter s = {.size = size, .cmp = cmp, .buf_elems = n / 2};
    bool ok = sort_range(&s, base, n);
    il_mem_free(s.buf);
    return ok;
}

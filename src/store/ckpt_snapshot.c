/* Checkpoint snapshots (ckpt.h): the image's bytes as the engine wrote them, with runs of
 * raw tuple words in between that are encoded only when the image is, off the engine's
 * thread. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "store/ckpt.h"
#include "store/store_codec.h"

/* Bytes, then raw words encoded after them. */
typedef struct ckpt_part {
    il_buf head;
    val_t *vals;
    size_t nvals;
} ckpt_part;

struct ckpt_snapshot {
    uint64_t lsn;
    IL_VEC(ckpt_part) parts;
};

static void new_part(ckpt_snapshot *s) {
    ckpt_part p = {0};
    il_buf_init(&p.head);
    il_vec_push(s->parts, p);
}

ckpt_snapshot *ckpt_snapshot_new(uint64_t lsn) {
    ckpt_snapshot *s = calloc(1, sizeof *s);
    s->lsn = lsn;
    new_part(s);
    return s;
}

il_buf *ckpt_snapshot_bytes(ckpt_snapshot *s) {
    return &s->parts.v[s->parts.n - 1].head;
}

void ckpt_snapshot_add_values(ckpt_snapshot *s, val_t *vals, size_t n) {
    ckpt_part *p = &s->parts.v[s->parts.n - 1];
    p->vals = vals;
    p->nvals = n;
    new_part(s);
}

uint64_t ckpt_snapshot_lsn(const ckpt_snapshot *s) {
    return s->lsn;
}

void ckpt_snapshot_encode(const ckpt_snapshot *s, il_buf *out) {
    for (uint32_t i = 0; i < s->parts.n; i++) {
        const ckpt_part *p = &s->parts.v[i];
        il_buf_put(out, p->head.data, p->head.len);
        for (size_t j = 0; j < p->nvals; j++) codec_put_val(out, p->vals[j]);
    }
}

void ckpt_snapshot_free(ckpt_snapshot *s) {
    if (!s) return;
    for (uint32_t i = 0; i < s->parts.n; i++) {
        il_buf_free(&s->parts.v[i].head);
        free(s->parts.v[i].vals);
    }
    il_vec_free(s->parts);
    free(s);
}

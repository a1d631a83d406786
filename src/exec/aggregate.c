/* Aggregation (see aggregate.h). Bindings are sorted by their group slots, so each group
 * is one contiguous run. The sorts and the walk over the bindings check the running
 * statement's guard (exec/guard.h): there are as many bindings as the body had. */
#include "exec/aggregate.h"

#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/guard.h"
#include "exec/stable_sort.h"

/* Bindings grouped between two checks of the guard. */
enum { CHECK_EVERY_ROWS = 4096 };

typedef struct group_rows {
    const val_t **rows; /* the group's bindings, one value per clause slot; counted */
    uint32_t n, cap;
} group_rows;

typedef struct agg_ctx {
    const plan_clause *c; /* the clause whose bindings are sorted */
} agg_ctx;

static _Thread_local const agg_ctx *sort_ctx;

/* Ascending order of whole bindings (slot order), the order rows reach an aggregate. */
static int cmp_binding(const void *pa, const void *pb) {
    const val_t *a = *(const val_t *const *)pa, *b = *(const val_t *const *)pb;
    for (uint32_t i = 0; i < sort_ctx->c->nslots; i++) {
        int c = val_cmp(a[i], b[i]);
        if (c) return c;
    }
    return 0;
}

static int cmp_vals(const void *pa, const void *pb) {
    val_t a = *(const val_t *)pa, b = *(const val_t *)pb;
    return a < b ? -1 : a > b;
}

/* One simple aggregate of a group; *stopped is set when the statement must stop. */
static val_t simple_agg(const plan_agg *ag, const group_rows *g, const uint32_t *pos,
                        bool *stopped) {
    uint32_t p = pos[ag->slot];
    switch (ag->kind) {
    case IQL_AGG_COUNT:
        return val_int((int64_t)g->n);
    case IQL_AGG_COUNT_DISTINCT: {
        val_t *v = il_mem_alloc(g->n * sizeof *v);
        for (uint32_t i = 0; i < g->n; i++) v[i] = g->rows[i][p];
        if (!exec_stable_sort(v, g->n, sizeof *v, cmp_vals)) *stopped = true;
        int64_t d = 0;
        for (uint32_t i = 0; i < g->n; i++)
            if (i == 0 || v[i] != v[i - 1]) d++;
        il_mem_free(v);
        return val_int(d);
    }
    case IQL_AGG_SUM: {
        int64_t s = 0;
        for (uint32_t i = 0; i < g->n; i++) {
            int64_t x = val_to_i64(g->rows[i][p]), r;
            if (__builtin_add_overflow(s, x, &r)) r = x > 0 ? INT64_MAX : INT64_MIN;
            s = r;
        }
        return val_int(s);
    }
    case IQL_AGG_MIN:
    case IQL_AGG_MAX: {
        val_t best = g->rows[0][p];
        for (uint32_t i = 1; i < g->n; i++) {
            int c = val_cmp(g->rows[i][p], best);
            if (ag->kind == IQL_AGG_MIN ? c < 0 : c > 0) best = g->rows[i][p];
        }
        return best;
    }
    case IQL_AGG_AVG: {
        double s = 0;
        for (uint32_t i = 0; i < g->n; i++) s += val_to_f64(g->rows[i][p]);
        return val_float(s / (double)g->n);
    }
    default:
        return VAL_NULL;
    }
}

static bool ranking(const plan_agg *ag) {
    return ag->kind == IQL_AGG_TOP_K || ag->kind == IQL_AGG_TOP_K_THRESHOLD ||
           ag->kind == IQL_AGG_WITHIN_RADIUS;
}

/* The rows a ranking aggregate keeps, best first; *stopped is set when the statement
 * must stop. */
static uint32_t rank_rows(const plan_clause *c, const plan_agg *ag, const group_rows *g,
                          const uint32_t *pos, const val_t **kept, bool *stopped) {
    uint32_t score_slot = ag->out_slots[ag->order_out];
    uint32_t n = 0;
    bool desc = ag->kind == IQL_AGG_WITHIN_RADIUS ? false : ag->desc;
    for (uint32_t i = 0; i < g->n; i++) {
        val_t s = g->rows[i][pos[score_slot]];
        if (ag->kind == IQL_AGG_TOP_K_THRESHOLD) {
            if (!val_is_numeric(s)) continue;
            double x = val_to_f64(s);
            if (desc ? x < ag->param : x > ag->param) continue;
        } else if (ag->kind == IQL_AGG_WITHIN_RADIUS) {
            if (!val_is_numeric(s) || val_to_f64(s) > ag->param) continue;
        }
        kept[n++] = g->rows[i];
    }
    agg_ctx k = {.c = c};
    sort_ctx = &k;
    if (n > 1 && !exec_stable_sort(kept, n, sizeof *kept, cmp_binding)) *stopped = true;
    sort_ctx = NULL;
    if (*stopped || ag->kind == IQL_AGG_WITHIN_RADIUS || n <= ag->k) return n;
    if (ag->k == 0) return 0; /* top_k<0, ...>: a heap of no rows keeps none */
    /* The rows, in binding order, pass through a heap of K: the worst kept row (lowest
       score for :desc, earliest binding among equal scores) gives way only to a row
       with a strictly better score (iql-language.md 3.6). */
    uint32_t kk = (uint32_t)ag->k, hn = 0;
    uint32_t *heap = malloc((kk + 1) * sizeof *heap);
    uint32_t p = pos[score_slot];
    for (uint32_t i = 0; i < n; i++) {
        if (hn < kk) {
            heap[hn++] = i;
            continue;
        }
        uint32_t worst = 0;
        for (uint32_t j = 1; j < hn; j++) {
            int cmp = val_cmp(kept[heap[j]][p], kept[heap[worst]][p]);
            bool worse = desc ? (cmp < 0 || (cmp == 0 && heap[j] < heap[worst]))
                              : (cmp > 0 || (cmp == 0 && heap[j] > heap[worst]));
            if (worse) worst = j;
        }
        int cmp = val_cmp(kept[i][p], kept[heap[worst]][p]);
        if (desc ? cmp > 0 : cmp < 0) heap[worst] = i;
    }
    const val_t **chosen = malloc((hn + 1) * sizeof *chosen);
    for (uint32_t j = 0; j < hn; j++) chosen[j] = kept[heap[j]];
    memcpy(kept, chosen, hn * sizeof *kept);
    free(chosen);
    free(heap);
    return hn;
}

/* Inserts the group's rows; false when the statement must stop. */
static bool emit_group(const plan_clause *c, const group_rows *g, const uint32_t *pos,
                       rel_t *target) {
    if (g->n == 0) return true;
    bool stopped = false;
    val_t out[REL_MAX_ARITY];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->ngroup; i++) out[n++] = g->rows[0][pos[c->group_slots[i]]];
    int32_t rank_agg = -1;
    uint32_t rank_col = 0;
    for (uint32_t i = 0; i < c->naggs && n < REL_MAX_ARITY; i++) {
        const plan_agg *ag = &c->aggs[i];
        if (ranking(ag)) {
            if (rank_agg < 0) {
                rank_agg = (int32_t)i;
                rank_col = n;
            }
            n += ag->nout;
        } else {
            out[n++] = simple_agg(ag, g, pos, &stopped);
        }
    }
    if (stopped) return false;
    if (rank_agg < 0) {
        rel_insert(target, out);
        return true;
    }
    const plan_agg *ag = &c->aggs[rank_agg];
    const val_t **kept = il_mem_alloc((g->n + 1) * sizeof *kept);
    uint32_t nk = rank_rows(c, ag, g, pos, kept, &stopped);
    for (uint32_t r = 0; r < nk && !stopped; r++) {
        for (uint32_t j = 0; j < ag->nout; j++) out[rank_col + j] = kept[r][pos[ag->out_slots[j]]];
        rel_insert(target, out);
    }
    il_mem_free(kept);
    return !stopped;
}

static _Thread_local const plan_clause *group_ctx;

static int cmp_group_rows(const void *pa, const void *pb) {
    const val_t *a = pa, *b = pb;
    const plan_clause *c = group_ctx;
    for (uint32_t i = 0; i < c->ngroup; i++) {
        val_t x = a[c->group_slots[i]], y = b[c->group_slots[i]];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

bool exec_aggregate(const plan_clause *c, val_t *rows, size_t nrows, rel_t *target) {
    if (nrows == 0) return true;
    uint32_t w = c->nslots ? c->nslots : 1;
    if (c->ngroup && nrows > 1) {
        group_ctx = c;
        bool sorted = exec_stable_sort(rows, nrows, w * sizeof *rows, cmp_group_rows);
        group_ctx = NULL;
        if (!sorted) return false;
    }
    uint32_t *pos = malloc((w + 1) * sizeof *pos);
    for (uint32_t p = 0; p < w; p++) pos[p] = p;
    group_rows g = {0};
    bool ok = true;
    for (size_t r = 0; r < nrows; r++) {
        if (r % CHECK_EVERY_ROWS == CHECK_EVERY_ROWS - 1 && exec_should_stop()) {
            ok = false;
            break;
        }
        const val_t *t = &rows[r * w];
        bool same = g.n > 0;
        for (uint32_t i = 0; same && i < c->ngroup; i++)
            if (g.rows[0][c->group_slots[i]] != t[c->group_slots[i]]) same = false;
        if (!same && g.n) {
            if (!emit_group(c, &g, pos, target)) {
                ok = false;
                break;
            }
            g.n = 0;
        }
        if (g.n == g.cap) {
            g.cap = g.cap ? g.cap * 2 : 64;
            g.rows = il_mem_realloc(g.rows, g.cap * sizeof *g.rows);
        }
        g.rows[g.n++] = t;
    }
    if (ok) ok = emit_group(c, &g, pos, target);
    il_mem_free(g.rows);
    free(pos);
    return ok;
}

bool exec_aggregate_counts_only(const plan_clause *c) {
    if (!c->is_agg || c->ngroup || !c->naggs || c->naggs > REL_MAX_ARITY) return false;
    for (uint32_t i = 0; i < c->naggs; i++)
        if (c->aggs[i].kind != IQL_AGG_COUNT) return false;
    return true;
}

void exec_aggregate_count(const plan_clause *c, size_t n, rel_t *target) {
    if (n == 0) return; /* no binding, no group: no row, as exec_aggregate */
    val_t out[REL_MAX_ARITY];
    for (uint32_t i = 0; i < c->naggs; i++) out[i] = val_int((int64_t)n);
    rel_insert(target, out);
}

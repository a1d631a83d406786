/* Partitions and semi-naive rounds on several threads (parallel_fixpoint.h). */
#include "exec/parallel_fixpoint.h"

#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/btree.h"
#include "exec/team.h"
#include "exec/tuplesort.h"
#include "exec/worker_clause.h"

/* Tuples merged between two counts of work towards the guard's checks, less one. */
enum { MERGE_TICKS_MASK = 4095 };

/* The memory a set takes: its tuples and its slots. */
static uint64_t tupleset_bytes(const tupleset *s) {
    return (uint64_t)s->cap * s->arity * sizeof(val_t) + (uint64_t)s->nslots * sizeof(uint32_t);
}

/* ---- partitions on several threads ----
 * Consecutive partitions are handed out in chunks; each worker runs a chunk's partitions
 * one by one with its own small set, delta and additions, and the chunk's rows (each
 * partition's sorted) are kept apart and appended in chunk order afterwards: the rows
 * are those of one thread, in the same order. */

typedef struct chunk_rows {
    val_t *rows;   /* malloc'ed: filled on threads that count no memory */
    size_t n, cap; /* words */
} chunk_rows;

typedef struct part_worker {
    tupleset local;
    plan_tuples delta, added;
    plan_seek_cache **caches; /* per recursive clause (exec_worker_caches) */
    uint64_t rows_bytes;      /* of the chunks it filled */
} part_worker;

typedef struct parallel_parts {
    plan_program *p;
    exec_ctx *x;
    uint32_t w;                  /* the predicate's arity */
    exec_shared_clause *clauses; /* the recursive clauses */
    uint32_t nclauses;
    const val_t *base;
    const size_t *part_first; /* partition i: base tuples [part_first[i], part_first[i + 1]) */
    size_t nparts, per_chunk;
    chunk_rows *chunks;
    part_worker *workers;
} parallel_parts;

/* One partition's fixpoint on a worker: its rows, sorted, appended to `out`. False when
 * it stopped. */
static bool partition_on_worker(parallel_parts *pp, exec_team *t, uint32_t worker, size_t part,
                                chunk_rows *out) {
    part_worker *wk = &pp->workers[worker];
    uint32_t w = pp->w;
    tupleset_clear(&wk->local);
    wk->added.n = 0;
    for (size_t i = pp->part_first[part]; i < pp->part_first[part + 1]; i++)
        if (tupleset_insert(&wk->local, &pp->base[i * w]))
            exec_push_tuple(&wk->added, &pp->base[i * w], w);
    while (wk->added.n) {
        plan_tuples d = wk->delta;
        wk->delta = wk->added;
        wk->added = d;
        wk->added.n = 0;
        for (uint32_t i = 0; i < pp->nclauses; i++) {
            const exec_shared_clause *sc = &pp->clauses[i];
            plan_seek_cache *caches = exec_worker_caches(&wk->caches[i], sc->c, worker);
            if (!exec_run_on_worker(pp->p, pp->x, sc, t, worker, caches, &wk->delta, NULL,
                                    &wk->added, &wk->local))
                return false;
        }
    }
    if (!tuple_sort(wk->local.tuples, wk->local.n, w)) return false;
    size_t words = (size_t)wk->local.n * w;
    if (out->n + words > out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 1024;
        while (cap < out->n + words) cap *= 2;
        val_t *rows = realloc(out->rows, cap * sizeof *rows);
        if (!rows) abort();
        wk->rows_bytes += (cap - out->cap) * sizeof *rows;
        out->rows = rows;
        out->cap = cap;
    }
    memcpy(&out->rows[out->n], wk->local.tuples, words * sizeof(val_t));
    out->n += words;
    return true;
}

static void partition_chunk(void *ctx, exec_team *t, uint32_t worker, size_t chunk) {
    parallel_parts *pp = ctx;
    chunk_rows *out = &pp->chunks[chunk];
    size_t from = chunk * pp->per_chunk, to = from + pp->per_chunk;
    if (to > pp->nparts) to = pp->nparts;
    for (size_t i = from; i < to; i++)
        if (!partition_on_worker(pp, t, worker, i, out)) return;
    /* the rows are malloc'ed; the calling thread's sets and lists are counted already */
    part_worker *wk = &pp->workers[worker];
    uint64_t sets =
        tupleset_bytes(&wk->local) + ((uint64_t)wk->delta.cap + wk->added.cap) * sizeof(val_t);
    exec_team_bytes(t, worker, wk->rows_bytes + (worker ? sets : 0));
}

/* The partitions of the nbase sorted base tuples from `first` on, on `threads` threads;
 * their rows are appended to *all in partition order. False when it stopped. */
bool exec_partitions_on_threads(plan_program *p, exec_ctx *x, plan_stratum *st,
                                const tupleset *base, uint32_t first, uint32_t col,
                                uint32_t threads, plan_tuples *all) {
    uint32_t w = base->arity;
    size_t nparts = 0;
    size_t *part_first = malloc(((size_t)base->n - first + 1) * sizeof *part_first);
    for (uint32_t g = first; g < base->n; g++)
        if (g == first ||
            base->tuples[(size_t)g * w + col] != base->tuples[(size_t)(g - 1) * w + col])
            part_first[nparts++] = g;
    part_first[nparts] = base->n;
    parallel_parts pp = {
        .p = p, .x = x, .w = w, .base = base->tuples, .part_first = part_first, .nparts = nparts};
    /* some chunks per thread, for balance; few enough that each is worth taking */
    pp.per_chunk = nparts / ((size_t)threads * 16);
    if (pp.per_chunk == 0) pp.per_chunk = 1;
    size_t nchunks = (nparts + pp.per_chunk - 1) / pp.per_chunk;
    pp.chunks = calloc(nchunks, sizeof *pp.chunks);
    pp.clauses = calloc(st->nclauses, sizeof *pp.clauses);
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op < 0) continue;
        exec_shared_clause_resolve(p, c, &pp.clauses[pp.nclauses++]);
    }
    pp.workers = calloc(threads, sizeof *pp.workers);
    for (uint32_t k = 0; k < threads; k++) {
        tupleset_init(&pp.workers[k].local, w);
        pp.workers[k].caches = calloc(pp.nclauses ? pp.nclauses : 1, sizeof *pp.workers[k].caches);
    }
    exec_team_charge charge = {0, 0};
    bool ok = exec_team_run(x, threads, nchunks, partition_chunk, &pp, &charge);
    for (size_t c = 0; c < nchunks; c++) {
        chunk_rows *ch = &pp.chunks[c];
        if (ok && ch->n) {
            il_mvec_reserve(*all, all->n + (uint32_t)ch->n);
            memcpy(&all->v[all->n], ch->rows, ch->n * sizeof(val_t));
            all->n += (uint32_t)ch->n;
        }
        free(ch->rows);
    }
    for (uint32_t k = 0; k < threads; k++) {
        part_worker *wk = &pp.workers[k];
        tupleset_free(&wk->local);
        il_mvec_free(wk->delta);
        il_mvec_free(wk->added);
        for (uint32_t i = 0; i < pp.nclauses; i++)
            exec_worker_caches_free(wk->caches[i], pp.clauses[i].c->nops);
        free(wk->caches);
    }
    if (charge.bytes) il_meter_release(charge.meter_id, charge.bytes);
    for (uint32_t i = 0; i < pp.nclauses; i++) exec_shared_clause_free(&pp.clauses[i]);
    free(pp.workers);
    free(pp.clauses);
    free(pp.chunks);
    free(part_first);
    return ok;
}

/* ---- rounds on several threads ----
 * A round whose delta is big is cut into slices, each slice of each recursive clause's
 * delta a chunk of work: workers read `full` (no one writes it meanwhile) and keep the
 * head tuples it lacks in sets of their own, which the calling thread then inserts into
 * `full`, the new ones becoming the next delta. A variant that reads `full` sees this
 * round's additions only in the next round, as a delta: the fixpoint is the same set. */

/* Below this many delta tuples in a round, the round runs on one thread; slices are at
 * least ROUND_SLICE_MIN tuples. */
enum { ROUND_SHARE_TUPLES = 4096, ROUND_SLICE_MIN = 256 };

typedef struct round_slice {
    uint32_t clause;  /* in exec_parallel_rounds.clauses */
    uint32_t from, n; /* delta tuples */
} round_slice;

typedef struct round_worker {
    tupleset *out;            /* per stratum predicate: head tuples its `full` lacks */
    plan_seek_cache **caches; /* per clause (exec_worker_caches) */
} round_worker;

/* A recursive stratum's state for its rounds on several threads, kept from round to
 * round. */
typedef struct exec_parallel_rounds {
    plan_program *p;
    exec_ctx *x;
    plan_stratum *st;
    uint32_t threads;
    uint32_t *clause_ids; /* the recursive clauses that run in rounds */
    uint32_t *head;       /* per clause: its head's place in st->preds */
    uint32_t nclauses;
    exec_shared_clause *clauses; /* resolved for this round */
    round_slice *slices;
    uint32_t nslices, slices_cap;
    round_worker *workers;
} exec_parallel_rounds;

static uint32_t stratum_place(const plan_stratum *st, uint32_t pred) {
    uint32_t k = 0;
    while (k < st->npreds && st->preds[k] != pred) k++;
    return k;
}

/* The state for st's rounds on threads, or NULL when some recursive clause cannot run
 * on a helper thread. */
exec_parallel_rounds *exec_parallel_rounds_new(plan_program *p, exec_ctx *x, plan_stratum *st,
                                               uint32_t threads) {
    if (!exec_recursion_runs_on_workers(p, st)) return NULL;
    exec_parallel_rounds *pr = calloc(1, sizeof *pr);
    *pr = (exec_parallel_rounds){.p = p, .x = x, .st = st, .threads = threads};
    pr->clause_ids = calloc(st->nclauses ? st->nclauses : 1, sizeof *pr->clause_ids);
    pr->head = calloc(st->nclauses ? st->nclauses : 1, sizeof *pr->head);
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op < 0 || c->is_agg || (x->skip_session && c->session)) continue;
        pr->head[pr->nclauses] = stratum_place(st, c->head_pred);
        pr->clause_ids[pr->nclauses++] = st->clauses[i];
    }
    pr->clauses = calloc(pr->nclauses ? pr->nclauses : 1, sizeof *pr->clauses);
    pr->workers = calloc(threads, sizeof *pr->workers);
    for (uint32_t k = 0; k < threads; k++) {
        round_worker *wk = &pr->workers[k];
        wk->out = calloc(st->npreds, sizeof *wk->out);
        for (uint32_t i = 0; i < st->npreds; i++)
            tupleset_init(&wk->out[i], p->preds.v[st->preds[i]].arity);
        wk->caches = calloc(pr->nclauses ? pr->nclauses : 1, sizeof *wk->caches);
    }
    return pr;
}

void exec_parallel_rounds_free(exec_parallel_rounds *pr) {
    if (!pr) return;
    for (uint32_t k = 0; k < pr->threads; k++) {
        round_worker *wk = &pr->workers[k];
        for (uint32_t i = 0; i < pr->st->npreds; i++) tupleset_free(&wk->out[i]);
        for (uint32_t i = 0; i < pr->nclauses; i++)
            exec_worker_caches_free(wk->caches[i], pr->p->clauses.v[pr->clause_ids[i]].nops);
        free(wk->out);
        free(wk->caches);
    }
    free(pr->workers);
    free(pr->clauses);
    free(pr->slices);
    free(pr->head);
    free(pr->clause_ids);
    free(pr);
}

static void round_chunk(void *ctx, exec_team *t, uint32_t worker, size_t chunk) {
    exec_parallel_rounds *pr = ctx;
    const round_slice *sl = &pr->slices[chunk];
    const exec_shared_clause *sc = &pr->clauses[sl->clause];
    const plan_pred *dp = &pr->p->preds.v[sc->c->ops[sc->c->delta_op].pred];
    uint32_t fw = exec_flat_width(dp->arity);
    plan_tuples slice = {.v = &dp->delta.v[(size_t)sl->from * fw], .n = sl->n * fw};
    round_worker *wk = &pr->workers[worker];
    uint32_t h = pr->head[sl->clause];
    plan_seek_cache *caches = exec_worker_caches(&wk->caches[sl->clause], sc->c, worker);
    exec_run_on_worker(pr->p, pr->x, sc, t, worker, caches, &slice,
                       pr->p->preds.v[pr->st->preds[h]].full, NULL, &wk->out[h]);
    /* the calling thread's sets are counted already */
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < pr->st->npreds && worker; i++) bytes += tupleset_bytes(&wk->out[i]);
    exec_team_bytes(t, worker, bytes);
}

bool exec_round_is_big(const plan_program *p, const plan_stratum *st) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < st->npreds; i++) {
        const plan_pred *pp = &p->preds.v[st->preds[i]];
        n += pp->delta.n / exec_flat_width(pp->arity);
    }
    return n >= ROUND_SHARE_TUPLES;
}

/* The delta tuples of this round, over the clauses that run in rounds. */
static uint64_t round_work(const exec_parallel_rounds *pr) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < pr->nclauses; i++) {
        const plan_clause *c = &pr->p->clauses.v[pr->clause_ids[i]];
        const plan_pred *dp = &pr->p->preds.v[c->ops[c->delta_op].pred];
        n += dp->delta.n / exec_flat_width(dp->arity);
    }
    return n;
}

/* Cuts the round's deltas into slices for the workers. */
static void cut_slices(exec_parallel_rounds *pr, uint64_t total) {
    uint64_t per = total / ((uint64_t)pr->threads * 8);
    if (per < ROUND_SLICE_MIN) per = ROUND_SLICE_MIN;
    pr->nslices = 0;
    for (uint32_t i = 0; i < pr->nclauses; i++) {
        const plan_clause *c = pr->clauses[i].c;
        if (pr->clauses[i].empty) continue;
        const plan_pred *dp = &pr->p->preds.v[c->ops[c->delta_op].pred];
        uint32_t n = dp->delta.n / exec_flat_width(dp->arity);
        for (uint32_t from = 0; from < n; from += (uint32_t)per) {
            if (pr->nslices == pr->slices_cap) {
                pr->slices_cap = pr->slices_cap ? pr->slices_cap * 2 : 64;
                pr->slices = realloc(pr->slices, pr->slices_cap * sizeof *pr->slices);
                if (!pr->slices) abort();
            }
            uint32_t len = n - from < per ? n - from : (uint32_t)per;
            pr->slices[pr->nslices++] = (round_slice){i, from, len};
        }
    }
}

/* Sorts worker k's sets (k = chunk / predicates): inserted in order, they touch each
 * leaf of `full` once rather than at random. */
static void sort_chunk(void *ctx, exec_team *t, uint32_t worker, size_t chunk) {
    (void)t;
    (void)worker;
    exec_parallel_rounds *pr = ctx;
    tupleset *out = &pr->workers[chunk / pr->st->npreds].out[chunk % pr->st->npreds];
    tuple_sort(out->tuples, out->n, out->arity);
}

/* The workers' sorted sets of one predicate, merged: the smallest tuple not yet taken. */
typedef struct heads {
    const tupleset *sets; /* one per worker; NULL entries none */
    const val_t **at;     /* per worker: its next tuple, or NULL once done */
    uint32_t k, w;
    const val_t *min; /* the smallest of `at`, or NULL */
} heads;

static void heads_min(heads *h) {
    h->min = NULL;
    for (uint32_t j = 0; j < h->k; j++)
        if (h->at[j] && (!h->min || bt_cmp(h->at[j], h->min, h->w) < 0)) h->min = h->at[j];
}

/* Steps every worker past the tuple t (one equal to min, copied by the caller). */
static void heads_skip(heads *h, const val_t *t) {
    for (uint32_t j = 0; j < h->k; j++) {
        if (!h->at[j] || bt_cmp(h->at[j], t, h->w) != 0) continue;
        const tupleset *s = &h->sets[j];
        h->at[j] += h->w;
        if (h->at[j] == &s->tuples[(size_t)s->n * h->w]) h->at[j] = NULL;
    }
    heads_min(h);
}

/* Merges the workers' sorted sets with `full` into a new relation built bottom-up,
 * appending the tuples it lacked to `added`: when a round adds many tuples for the size
 * of `full`, cheaper than inserting them one by one. The runs of `full` between two new
 * tuples are copied whole. (The indexes beside the first are built again when next
 * sought.) */
static void rebuild_full(exec_parallel_rounds *pr, uint32_t i, size_t nnew) {
    plan_pred *pp = &pr->p->preds.v[pr->st->preds[i]];
    uint32_t w = pp->arity, k = pr->threads;
    size_t nfull = rel_count(pp->full), n = 0;
    val_t *merged = il_mem_alloc((nfull + nnew) * w * sizeof *merged);
    tupleset *sets = malloc(k * sizeof *sets);
    heads h = {.sets = sets, .at = malloc(k * sizeof *h.at), .k = k, .w = w};
    if (!sets || !h.at) abort();
    for (uint32_t j = 0; j < k; j++) {
        sets[j] = pr->workers[j].out[i];
        h.at[j] = sets[j].n ? sets[j].tuples : NULL;
    }
    heads_min(&h);
    rel_cursor cur;
    rel_seek(pp->full, 0, NULL, 0, &cur);
    const val_t *run;
    size_t rn;
    uint32_t stride;
    while ((run = rel_next_run(&cur, &rn, &stride))) {
        size_t a = 0;
        while (a < rn) {
            const val_t *t = &run[a * stride];
            int c = h.min ? bt_cmp(t, h.min, w) : -1;
            if (c < 0) { /* full's tuples before the next new one: copied whole */
                size_t lo = a + 1, hi = rn;
                while (h.min && lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (bt_cmp(&run[mid * stride], h.min, w) < 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                if (!h.min) lo = rn;
                if (stride == w) {
                    memcpy(&merged[n * w], t, (lo - a) * w * sizeof *t);
                    n += lo - a;
                } else {
                    for (size_t b = a; b < lo; b++, n++)
                        memcpy(&merged[n * w], &run[b * stride], w * sizeof *t);
                }
                a = lo;
                continue;
            }
            const val_t *next = c == 0 ? t : h.min;
            memcpy(&merged[n * w], next, w * sizeof *next);
            if (c == 0)
                a++;
            else
                exec_push_tuple(&pp->added, next, w);
            heads_skip(&h, &merged[n * w]);
            n++;
        }
    }
    for (; h.min; n++) {
        memcpy(&merged[n * w], h.min, w * sizeof *merged);
        exec_push_tuple(&pp->added, h.min, w);
        heads_skip(&h, &merged[n * w]);
    }
    free(h.at);
    free(sets);
    rel_t *fresh = rel_new(w);
    if (rel_load_sorted(fresh, merged, n)) {
        rel_swap(pp->full, fresh);
    } else { /* not expected: the words are in index order */
        for (size_t t = 0; t < n; t++) rel_insert(pp->full, &merged[t * w]);
    }
    rel_free(fresh);
    il_mem_free(merged);
}

/* The workers' tuples into `full`; those new to it are the next delta. False when it
 * stopped. */
static bool merge_round(exec_parallel_rounds *pr) {
    exec_ctx *x = pr->x;
    bool ok = true;
    for (uint32_t i = 0; i < pr->st->npreds && ok; i++) {
        plan_pred *pp = &pr->p->preds.v[pr->st->preds[i]];
        if (!pp->full) continue;
        size_t nnew = 0;
        for (uint32_t k = 0; k < pr->threads; k++) nnew += pr->workers[k].out[i].n;
        if (pp->arity && nnew && nnew * 8 >= rel_count(pp->full)) {
            rebuild_full(pr, i, nnew);
            ok = !exec_tick_n(x, nnew);
        } else {
            uint32_t fw = exec_flat_width(pp->arity);
            for (uint32_t k = 0; k < pr->threads && ok; k++) {
                const tupleset *out = &pr->workers[k].out[i];
                for (uint32_t t = 0; t < out->n && ok; t++) {
                    const val_t *tuple = &out->tuples[(size_t)t * out->arity];
                    if (rel_insert(pp->full, tuple)) exec_push_tuple(&pp->added, tuple, fw);
                    if ((t & MERGE_TICKS_MASK) == MERGE_TICKS_MASK)
                        ok = !exec_tick_n(x, MERGE_TICKS_MASK + 1);
                }
            }
        }
    }
    for (uint32_t k = 0; k < pr->threads; k++)
        for (uint32_t i = 0; i < pr->st->npreds; i++) tupleset_clear(&pr->workers[k].out[i]);
    return ok && !x->error;
}

/* Runs the round's recursive clauses on several threads when its delta is big enough
 * (the caller runs it on one otherwise). */
bool exec_round_on_threads(exec_parallel_rounds *pr) {
    uint64_t total = round_work(pr);
    if (total < ROUND_SHARE_TUPLES) return false;
    for (uint32_t i = 0; i < pr->nclauses; i++)
        exec_shared_clause_resolve(pr->p, &pr->p->clauses.v[pr->clause_ids[i]], &pr->clauses[i]);
    cut_slices(pr, total);
    if (exec_team_run(pr->x, pr->threads, pr->nslices, round_chunk, pr, NULL) &&
        exec_team_run(pr->x, pr->threads, (size_t)pr->threads * pr->st->npreds, sort_chunk, pr,
                      NULL))
        merge_round(pr);
    for (uint32_t i = 0; i < pr->nclauses; i++) exec_shared_clause_free(&pr->clauses[i]);
    return true;
}

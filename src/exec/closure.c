/* Linear closure by graph search (closure.h). The generic partitioned fixpoint joins each
 * round's delta with the stepping relation through its index and deduplicates every
 * derivation in a hash set; on the full closure of the random 2,000 / 4,000 graph (2.5
 * million pairs, 5 million derivations) that was two thirds of the whole process's time.
 * Here the stepping relation becomes adjacency lists over dense node numbers once, and
 * each partition is one breadth-first search with a visited stamp per node. */
#include "exec/closure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/meter.h"
#include "exec/guard.h"
#include "exec/snapidx.h"
#include "exec/team.h"
#include "base/mix.h"
#include "exec/tuplesort.h"

#define NO_NODE UINT32_MAX
/* Work counted between two calls of exec_tick_n: the per-node loop stays free of calls. */
#define TICK_BATCH 4096u

bool exec_closure_match(const plan_program *p, const plan_stratum *st, uint32_t col,
                        exec_closure_step *step) {
    if (st->npreds != 1 || col > 1) return false;
    uint32_t self = st->preds[0], other = 1 - col;
    if (p->preds.v[self].arity != 2) return false;
    uint32_t recursive = 0;
    for (uint32_t i = 0; i < st->nclauses; i++) {
        const plan_clause *c = &p->clauses.v[st->clauses[i]];
        if (c->delta_op < 0) continue;
        if (++recursive > 1 || c->is_agg || c->error || c->nops != 2 || c->delta_op != 0 ||
            c->nhead != 2)
            return false;
        const plan_op *d = &c->ops[0], *e = &c->ops[1];
        /* the delta: both columns bound to variables of their own */
        if (d->kind != POP_SCAN || d->version != PV_DELTA || d->pred != self || d->arity != 2 ||
            d->nprefix != 0 || d->order[0] > 1 || d->order[1] > 1 || d->order[0] == d->order[1])
            return false;
        /* an op's act, act_slot, prefix_slot and prefix_check are by column, not by
           position in its index order */
        uint32_t slot[2]; /* slot[k]: the variable of the delta's column k */
        for (uint32_t k = 0; k < 2; k++) {
            if (d->act[k] != PCOL_BIND) return false;
            slot[k] = d->act_slot[k];
        }
        if (slot[0] == slot[1]) return false;
        /* the step: sought by the delta's other column, its other column a new variable
           (either of its columns may be the sought one: a right-linear closure steps
           backwards, from the second column to the first) */
        if (e->kind != POP_SCAN || e->version != PV_FULL || e->pred == self || e->arity != 2 ||
            e->nprefix != 1 || e->order[0] > 1 || e->order[1] > 1 || e->order[0] == e->order[1])
            return false;
        uint32_t from_col = e->order[0], to_col = e->order[1];
        if (e->prefix_slot[from_col] != (int32_t)slot[other] || e->prefix_check[from_col] != -1 ||
            e->act[to_col] != PCOL_BIND)
            return false;
        uint32_t to = e->act_slot[to_col];
        if (to == slot[0] || to == slot[1]) return false;
        /* the head: the partition's value kept, the node stepped to */
        if (c->head[col]->kind != PX_SLOT || c->head[col]->slot != slot[col] ||
            c->head[other]->kind != PX_SLOT || c->head[other]->slot != to)
            return false;
        *step = (exec_closure_step){
            .pred = e->pred, .from_col = from_col, .to_col = to_col, .order = e->order};
    }
    return recursive == 1;
}

/* Dense node numbers of values (compared word for word, as the indexes compare them),
 * numbered in ascending order of the values: a partition's rows come out sorted by
 * walking its nodes in number order. */
typedef struct node_map {
    val_t *keys;
    uint32_t *ids; /* NO_NODE: an empty slot */
    size_t mask;
    val_t *values; /* values[id], ascending */
    uint32_t n;
} node_map;

/* Numbers the n values of v (sorted in place, duplicates dropped). */
static bool node_map_build(node_map *m, val_t *v, size_t n) {
    if (!tuple_sort(v, n, 1)) return false;
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (!distinct || v[i] != v[distinct - 1]) v[distinct++] = v[i];
    size_t cap = 16;
    while (cap < distinct * 2) cap *= 2;
    m->keys = il_mem_alloc(cap * sizeof *m->keys);
    m->ids = il_mem_alloc(cap * sizeof *m->ids);
    memset(m->ids, 0xff, cap * sizeof *m->ids);
    m->mask = cap - 1;
    m->values = v;
    m->n = (uint32_t)distinct;
    for (uint32_t id = 0; id < m->n; id++) {
        size_t i = il_mix64(v[id]) & m->mask;
        while (m->ids[i] != NO_NODE) i = (i + 1) & m->mask;
        m->keys[i] = v[id];
        m->ids[i] = id;
    }
    return true;
}

static void node_map_free(node_map *m) {
    il_mem_free(m->keys);
    il_mem_free(m->ids);
    il_mem_free(m->values);
}

/* The number of a value that is a node (every value the map was built from is). */
static uint32_t node_of(const node_map *m, val_t v) {
    size_t i = il_mix64(v) & m->mask;
    while (m->keys[i] != v) i = (i + 1) & m->mask;
    return m->ids[i];
}

/* The stepping relation as adjacency lists: node a's successors are
 * succ[start[a] .. start[a + 1]). Its nodes: every value of the relation and of the
 * seeds. */
typedef struct graph {
    node_map nodes;
    uint32_t *start, *succ;
} graph;

static void graph_free(graph *g) {
    node_map_free(&g->nodes);
    il_mem_free(g->start);
    il_mem_free(g->succ);
}

/* Builds g from the pairs of rel (NULL: none) and the seeds (column `seed_col` of the
 * nbase base tuples). False when it stopped. */
static bool graph_build(graph *g, exec_ctx *x, const rel_t *rel, const exec_closure_step *step,
                        const val_t *base, size_t nbase, uint32_t seed_col) {
    memset(g, 0, sizeof *g);
    size_t nedges = rel && rel_arity(rel) == 2 ? rel_count(rel) : 0;
    /* the pairs, then every node value (pairs' and seeds') to be numbered */
    val_t *pairs = il_mem_alloc((nedges ? nedges : 1) * 2 * sizeof *pairs);
    val_t *values = il_mem_alloc((nedges * 2 + nbase + 1) * sizeof *values);
    size_t k = 0;
    if (nedges) {
        const uint32_t *order = rel_index_order(rel, 0);
        uint32_t at_from = order[0] == step->from_col ? 0 : 1, at_to = 1 - at_from;
        rel_cursor cur;
        rel_seek(rel, 0, NULL, 0, &cur);
        const val_t *t;
        while (k < nedges && (t = rel_next(&cur, NULL))) {
            pairs[2 * k] = values[2 * k] = t[at_from];
            pairs[2 * k + 1] = values[2 * k + 1] = t[at_to];
            k++;
        }
    }
    for (size_t i = 0; i < nbase; i++) values[2 * k + i] = base[i * 2 + seed_col];
    if (!node_map_build(&g->nodes, values, 2 * k + nbase)) {
        il_mem_free(values);
        il_mem_free(pairs);
        return false;
    }
    uint32_t n = g->nodes.n;
    g->start = il_mem_calloc((size_t)n + 1, sizeof *g->start);
    g->succ = il_mem_alloc((k ? k : 1) * sizeof *g->succ);
    uint32_t *from = il_mem_alloc((k ? k : 1) * sizeof *from);
    for (size_t i = 0; i < k; i++) {
        from[i] = node_of(&g->nodes, pairs[2 * i]);
        g->start[from[i] + 1]++;
    }
    for (uint32_t a = 0; a < n; a++) g->start[a + 1] += g->start[a];
    uint32_t *fill = il_mem_alloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, g->start, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < k; i++) g->succ[fill[from[i]]++] = node_of(&g->nodes, pairs[2 * i + 1]);
    il_mem_free(fill);
    il_mem_free(from);
    il_mem_free(pairs);
    return !exec_tick_n(x, k + nbase);
}

static int cmp_id(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Puts the ids[0..n) of a partition in ascending order: through the bitmap `bits` (all
 * zero, and left so) when they are many of the graph's nodes, else by sorting. */
static void order_ids(uint32_t *ids, uint32_t n, uint64_t *bits, uint32_t nodes) {
    size_t words = ((size_t)nodes + 63) / 64;
    if (words > (size_t)n * 4) {
        qsort(ids, n, sizeof *ids, cmp_id);
        return;
    }
    for (uint32_t i = 0; i < n; i++) bits[ids[i] / 64] |= 1ull << (ids[i] % 64);
    uint32_t out = 0;
    for (size_t w = 0; w < words && out < n; w++) {
        uint64_t b = bits[w];
        bits[w] = 0;
        while (b) {
            ids[out++] = (uint32_t)(w * 64 + (uint32_t)__builtin_ctzll(b));
            b &= b - 1;
        }
    }
}

/* Rows searched on another thread than the statement's. */
typedef struct chunk_rows {
    val_t *rows;   /* malloc'ed: searched on threads that count no memory */
    size_t n, cap; /* tuples */
} chunk_rows;

/* What a run keeps across partitions: where the rows go, and the work not yet counted. */
typedef IL_VEC(val_t) tuple_vec;
typedef struct run_state {
    exec_ctx *x;
    uint32_t col, other;
    tuple_vec all; /* every partition's tuples, sorted partition by partition */
    bool ordered;  /* `all` is in the result's order (order_by_first) */
    uint64_t work;
    /* searched on several threads: the rows chunk by chunk instead of in `all` */
    chunk_rows *chunks;
    size_t nchunks;
    uint64_t charged, meter_id; /* the chunks' bytes charged to the statement's meter */
} run_state;

/* Counts w units of work; false once the evaluation must stop. */
static bool count_work(run_state *rs, uint64_t w) {
    rs->work += w;
    if (rs->work < TICK_BATCH) return true;
    bool stop = exec_tick_n(rs->x, rs->work);
    rs->work = 0;
    return !stop;
}

/* The end of the partition that starts at base tuple `first`. */
static size_t partition_end(const run_state *rs, const val_t *base, size_t nbase, size_t first) {
    size_t end = first + 1;
    while (end < nbase && base[end * 2 + rs->col] == base[first * 2 + rs->col]) end++;
    return end;
}

/* One partition's search over a whole graph: per searcher, a visited stamp per node, the
 * queue, and a bitmap for putting the ids found in order. */
typedef struct searcher {
    uint32_t *stamp, *queue;
    uint64_t *bits;
    uint32_t gen;
} searcher;

static void searcher_init(searcher *s, uint32_t n) {
    s->stamp = il_mem_calloc(n ? n : 1, sizeof *s->stamp);
    s->queue = il_mem_alloc((n ? n : 1) * sizeof *s->queue);
    s->bits = il_mem_calloc(((size_t)n + 63) / 64 + 1, sizeof *s->bits);
    s->gen = 0;
}

static void searcher_free(searcher *s) {
    il_mem_free(s->stamp);
    il_mem_free(s->queue);
    il_mem_free(s->bits);
}

/* Searches from the seeds of base tuples [first, end) of one partition; leaves what they
 * reach in s->queue in ascending id order (= value order) and returns how many. `more`
 * is called with the work done every TICK_BATCH units or so, and the search ends (with
 * false in *ok) when it returns false. */
static uint32_t search_one(const graph *g, searcher *s, const val_t *base, size_t first, size_t end,
                           uint32_t other, bool (*more)(void *ctx, uint64_t work), void *ctx,
                           bool *ok) {
    uint32_t n = g->nodes.n;
    if (++s->gen == 0) { /* the stamps wrapped: every node unvisited again */
        memset(s->stamp, 0, (n ? n : 1) * sizeof *s->stamp);
        s->gen = 1;
    }
    uint32_t gen = s->gen, queued = 0, *stamp = s->stamp, *queue = s->queue;
    /* the partition's seeds (distinct: the base tuples are), then what they reach */
    for (size_t t = first; t < end; t++) {
        uint32_t id = node_of(&g->nodes, base[t * 2 + other]);
        if (stamp[id] != gen) {
            stamp[id] = gen;
            queue[queued++] = id;
        }
    }
    uint64_t work = 0;
    for (uint32_t head = 0; head < queued; head++) {
        uint32_t a = queue[head];
        for (uint32_t e = g->start[a]; e < g->start[a + 1]; e++) {
            uint32_t b = g->succ[e];
            if (stamp[b] == gen) continue;
            stamp[b] = gen;
            queue[queued++] = b;
        }
        work += 1 + g->start[a + 1] - g->start[a];
        if (work >= TICK_BATCH) {
            if (!more(ctx, work)) {
                *ok = false;
                return 0;
            }
            work = 0;
        }
    }
    if (work && !more(ctx, work)) {
        *ok = false;
        return 0;
    }
    /* numbered in value order: the partition's rows in order, without sorting tuples */
    order_ids(queue, queued, s->bits, n);
    return queued;
}

/* Appends a partition's rows (its value in column col, each node found in the other).
 * Partitioned by the second column, the first holds the node's number instead of its
 * value, for order_by_first. */
static val_t *put_rows(val_t *out, const graph *g, const searcher *s, uint32_t found, uint32_t col,
                       val_t part) {
    for (uint32_t i = 0; i < found; i++, out += 2) {
        out[col] = part;
        out[1 - col] = col == 0 ? g->nodes.values[s->queue[i]] : (val_t)s->queue[i];
    }
    return out;
}

static bool more_sequential(void *ctx, uint64_t work) {
    return count_work(ctx, work);
}

/* Every partition in turn, on the calling thread. */
static bool search_all(run_state *rs, const graph *g, const val_t *base, size_t nbase) {
    searcher s;
    searcher_init(&s, g->nodes.n);
    bool ok = true;
    for (size_t first = 0; ok && first < nbase;) {
        size_t end = partition_end(rs, base, nbase, first);
        uint32_t found = search_one(g, &s, base, first, end, rs->other, more_sequential, rs, &ok);
        if (!ok) break;
        /* partitions come in ascending order of their column: when it leads, the rows of
           all of them concatenate in order */
        il_mvec_reserve(rs->all, rs->all.n + 2 * found);
        put_rows(&rs->all.v[rs->all.n], g, &s, found, rs->col, base[first * 2 + rs->col]);
        rs->all.n += 2 * found;
        first = end;
    }
    searcher_free(&s);
    return ok;
}

/* ---- the partitions on several threads (exec/team.h) ---- */

/* Partitions are handed out in chunks of consecutive ones, each chunk's rows kept apart
 * and the chunks taken in order at the end: the result is the same, byte for byte, as on
 * one thread, whatever thread searched what. */
typedef struct parallel {
    const graph *g;
    const val_t *base;
    uint32_t col, other;
    const size_t *part_first; /* partition i: base tuples [part_first[i], part_first[i + 1]) */
    size_t nparts, per_chunk, nchunks;
    chunk_rows *chunks;
    searcher *searchers; /* per worker */
    uint64_t *bytes;     /* per worker: the rows of the chunks it searched */
} parallel;

/* A worker's polls of its team, as search_one's `more`. */
typedef struct team_poll {
    exec_team *t;
    uint32_t worker;
} team_poll;

static bool more_parallel(void *ctx, uint64_t work) {
    team_poll *tp = ctx;
    return !exec_team_poll(tp->t, tp->worker, work);
}

/* Searches a chunk on a worker (exec_team_work). */
static void search_chunk(void *ctx, exec_team *t, uint32_t worker, size_t c) {
    parallel *pr = ctx;
    team_poll tp = {t, worker};
    chunk_rows *out = &pr->chunks[c];
    size_t from = c * pr->per_chunk, to = from + pr->per_chunk;
    if (to > pr->nparts) to = pr->nparts;
    bool ok = true;
    for (size_t i = from; i < to && ok; i++) {
        size_t first = pr->part_first[i], end = pr->part_first[i + 1];
        uint32_t found = search_one(pr->g, &pr->searchers[worker], pr->base, first, end, pr->other,
                                    more_parallel, &tp, &ok);
        if (!ok) break;
        if (out->n + found > out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 1024;
            while (cap < out->n + found) cap *= 2;
            out->rows = realloc(out->rows, cap * 2 * sizeof *out->rows);
            if (!out->rows) {
                fprintf(stderr, "out of memory (closure)\n");
                abort();
            }
            pr->bytes[worker] += (cap - out->cap) * 2 * sizeof *out->rows;
            exec_team_bytes(t, worker, pr->bytes[worker]);
            out->cap = cap;
        }
        put_rows(&out->rows[out->n * 2], pr->g, &pr->searchers[worker], found, pr->col,
                 pr->base[first * 2 + pr->col]);
        out->n += found;
    }
}

/* The partitions' searches on `threads` threads (the calling one among them); the rows
 * go to pr->chunks in partition order, charged to the statement's meter until
 * free_chunks. False when it stopped. */
static bool search_parallel(run_state *rs, const graph *g, const val_t *base,
                            const size_t *part_first, size_t nparts, uint32_t threads,
                            parallel *pr) {
    memset(pr, 0, sizeof *pr);
    pr->g = g;
    pr->base = base;
    pr->col = rs->col;
    pr->other = rs->other;
    pr->part_first = part_first;
    pr->nparts = nparts;
    /* some chunks per thread, for balance; few enough that each is worth taking */
    pr->per_chunk = nparts / ((size_t)threads * 16);
    if (pr->per_chunk == 0) pr->per_chunk = 1;
    pr->nchunks = (nparts + pr->per_chunk - 1) / pr->per_chunk;
    pr->chunks = calloc(pr->nchunks, sizeof *pr->chunks);
    pr->searchers = calloc(threads, sizeof *pr->searchers);
    pr->bytes = calloc(threads, sizeof *pr->bytes);
    if (!pr->chunks || !pr->searchers || !pr->bytes) abort();
    for (uint32_t k = 0; k < threads; k++)
        searcher_init(&pr->searchers[k], g->nodes.n); /* on this thread: counted */
    exec_team_charge charge = {0, 0};
    bool ok = exec_team_run(rs->x, threads, pr->nchunks, search_chunk, pr, &charge);
    for (uint32_t k = 0; k < threads; k++) searcher_free(&pr->searchers[k]);
    free(pr->searchers);
    free(pr->bytes);
    rs->charged = charge.bytes;
    rs->meter_id = charge.meter_id;
    return ok;
}

/* The graph as far as the searches reach: a node's successors are read from the step's
 * index the first time a search expands it. */
#define NOT_READ UINT32_MAX
typedef struct lazy_graph {
    const rel_t *rel;
    int idx;
    uint32_t at_to; /* where the node stepped to is in a tuple of the index */
    val_t *keys;    /* value -> node, open addressing */
    uint32_t *ids;
    size_t mask;
    IL_VEC(val_t) values;   /* per node */
    IL_VEC(uint32_t) first; /* per node: its successors' start in succ, or NOT_READ */
    IL_VEC(uint32_t) count; /* per node: how many */
    IL_VEC(uint32_t) stamp; /* per node: the partition that last reached it */
    IL_VEC(uint32_t) succ;
} lazy_graph;

static void lazy_slots(lazy_graph *g, size_t cap) {
    g->keys = il_mem_alloc(cap * sizeof *g->keys);
    g->ids = il_mem_alloc(cap * sizeof *g->ids);
    memset(g->ids, 0xff, cap * sizeof *g->ids);
    g->mask = cap - 1;
}

static void lazy_put(lazy_graph *g, val_t v, uint32_t id) {
    size_t i = il_mix64(v) & g->mask;
    while (g->ids[i] != NO_NODE) i = (i + 1) & g->mask;
    g->keys[i] = v;
    g->ids[i] = id;
}

static uint32_t lazy_node(lazy_graph *g, val_t v) {
    size_t i = il_mix64(v) & g->mask;
    for (; g->ids[i] != NO_NODE; i = (i + 1) & g->mask)
        if (g->keys[i] == v) return g->ids[i];
    uint32_t id = g->values.n;
    g->keys[i] = v;
    g->ids[i] = id;
    il_mvec_push(g->values, v);
    il_mvec_push(g->first, NOT_READ);
    il_mvec_push(g->count, 0);
    il_mvec_push(g->stamp, 0);
    if ((size_t)g->values.n * 2 > g->mask) { /* over half full: twice the room */
        val_t *keys = g->keys;
        uint32_t *ids = g->ids;
        size_t cap = (g->mask + 1) * 2;
        lazy_slots(g, cap);
        for (size_t j = 0; j < cap / 2; j++)
            if (ids[j] != NO_NODE) lazy_put(g, keys[j], ids[j]);
        il_mem_free(keys);
        il_mem_free(ids);
    }
    return id;
}

static void lazy_read(lazy_graph *g, uint32_t a) {
    val_t v = g->values.v[a];
    rel_cursor cur;
    rel_seek(g->rel, g->idx, &v, 1, &cur);
    uint32_t from = g->succ.n;
    const val_t *t;
    while ((t = rel_next(&cur, NULL))) {
        uint32_t b = lazy_node(g, t[g->at_to]);
        il_mvec_push(g->succ, b);
    }
    g->first.v[a] = from;
    g->count.v[a] = g->succ.n - from;
}

static bool run_lazy(run_state *rs, const rel_t *rel, int idx, const val_t *base, size_t nbase) {
    uint32_t col = rs->col, other = rs->other;
    lazy_graph g = {.rel = rel, .idx = idx, .at_to = 1};
    /* room for the seeds and some of what they reach; it grows with the search (a table
       sized for the whole graph cost more in clearing than the search of a bound query) */
    size_t cap = 256;
    while (cap < nbase * 8) cap *= 2;
    lazy_slots(&g, cap);
    IL_VEC(uint32_t) queue = {0};
    uint32_t gen = 0;
    bool ok = true;
    for (size_t first = 0; ok && first < nbase;) {
        val_t part = base[first * 2 + col];
        size_t end = partition_end(rs, base, nbase, first);
        if (++gen == 0) {
            memset(g.stamp.v, 0, g.stamp.n * sizeof *g.stamp.v);
            gen = 1;
        }
        queue.n = 0;
        for (size_t t = first; t < end; t++) {
            uint32_t id = lazy_node(&g, base[t * 2 + other]);
            if (g.stamp.v[id] != gen) {
                g.stamp.v[id] = gen;
                il_mvec_push(queue, id);
            }
        }
        for (uint32_t head = 0; head < queue.n && ok; head++) {
            uint32_t a = queue.v[head];
            if (g.first.v[a] == NOT_READ) lazy_read(&g, a);
            for (uint32_t s = g.first.v[a], e = s + g.count.v[a]; s < e; s++) {
                uint32_t b = g.succ.v[s];
                if (g.stamp.v[b] == gen) continue;
                g.stamp.v[b] = gen;
                il_mvec_push(queue, b);
            }
            ok = count_work(rs, 1 + g.count.v[a]);
        }
        if (!ok) break;
        size_t from = rs->all.n;
        il_mvec_reserve(rs->all, rs->all.n + 2 * queue.n);
        val_t *out = &rs->all.v[rs->all.n];
        for (uint32_t i = 0; i < queue.n; i++, out += 2) {
            out[col] = part;
            out[other] = g.values.v[queue.v[i]];
        }
        rs->all.n += 2 * queue.n;
        ok = tuple_sort(&rs->all.v[from], queue.n, 2);
        first = end;
    }
    il_mvec_free(queue);
    il_mem_free(g.keys);
    il_mem_free(g.ids);
    il_mvec_free(g.values);
    il_mvec_free(g.first);
    il_mvec_free(g.count);
    il_mvec_free(g.stamp);
    il_mvec_free(g.succ);
    return ok;
}

/* Below this much search work (partitions times nodes), one thread does it all: starting
 * threads would cost more than they save. */
#define PARALLEL_MIN_WORK 1000000u

static void free_chunks(run_state *rs);

/* Rows of a closure partitioned by its second column (put_rows: node numbers in the
 * first) come partition after partition, in ascending order of the second column. A
 * counting sort by the first column's node (numbered in value order; stable, so each
 * node's rows keep the partitions' order) puts them in the result's order, values in
 * place of numbers, without comparing tuples: into rs->all, the chunks freed. */
static void order_by_first(run_state *rs, const graph *g) {
    size_t nsrc = rs->chunks ? rs->nchunks : 1, total = 0;
    size_t *at = il_mem_calloc((size_t)g->nodes.n + 1, sizeof *at);
    for (size_t c = 0; c < nsrc; c++) {
        const val_t *rows = rs->chunks ? rs->chunks[c].rows : rs->all.v;
        size_t n = rs->chunks ? rs->chunks[c].n : rs->all.n / 2;
        for (size_t t = 0; t < n; t++) at[(uint32_t)rows[2 * t] + 1]++;
        total += n;
    }
    for (uint32_t a = 0; a < g->nodes.n; a++) at[a + 1] += at[a];
    tuple_vec sorted = {0};
    il_mvec_reserve(sorted, (uint32_t)(total * 2));
    for (size_t c = 0; c < nsrc; c++) {
        const val_t *rows = rs->chunks ? rs->chunks[c].rows : rs->all.v;
        size_t n = rs->chunks ? rs->chunks[c].n : rs->all.n / 2;
        for (size_t t = 0; t < n; t++) {
            uint32_t id = (uint32_t)rows[2 * t];
            size_t to = at[id]++;
            sorted.v[2 * to] = g->nodes.values[id];
            sorted.v[2 * to + 1] = rows[2 * t + 1];
        }
    }
    sorted.n = (uint32_t)(total * 2);
    il_mem_free(at);
    if (rs->chunks) {
        free_chunks(rs);
        rs->nchunks = 0;
        rs->charged = 0;
    }
    il_mvec_free(rs->all);
    rs->all = sorted;
    rs->ordered = true;
}

/* The whole graph built first: every partition searched over it, on the statement's
 * threads when there is enough work for them. */
static bool run_eager(run_state *rs, const rel_t *rel, const exec_closure_step *step,
                      const val_t *base, size_t nbase, uint32_t threads) {
    graph g;
    bool ok = graph_build(&g, rs->x, rel, step, base, nbase, rs->other);
    size_t nparts = 0;
    if (ok && threads > 1)
        for (size_t first = 0; first < nbase; first = partition_end(rs, base, nbase, first))
            nparts++;
    if (nparts >= (size_t)threads * 2 && (uint64_t)nparts * g.nodes.n >= PARALLEL_MIN_WORK) {
        size_t *part_first = malloc((nparts + 1) * sizeof *part_first), i = 0;
        for (size_t first = 0; first < nbase; first = partition_end(rs, base, nbase, first))
            part_first[i++] = first;
        part_first[nparts] = nbase;
        parallel pr;
        ok = search_parallel(rs, &g, base, part_first, nparts, threads, &pr);
        rs->chunks = pr.chunks;
        rs->nchunks = pr.nchunks;
        free(part_first);
    } else if (ok) {
        ok = search_all(rs, &g, base, nbase);
    }
    if (ok && rs->col != 0) order_by_first(rs, &g);
    graph_free(&g);
    return ok;
}

/* Loads the rows into `full`: the chunks searched on several threads, in order, or the
 * rows of `all`. False when it stopped. */
static bool load_rows(run_state *rs, rel_t *full) {
    bool ok = true;
    size_t nparts = rs->chunks ? rs->nchunks : 1;
    const val_t **parts = malloc(nparts * sizeof *parts);
    size_t *counts = malloc(nparts * sizeof *counts), total = 0;
    for (size_t c = 0; c < nparts; c++) {
        parts[c] = rs->chunks ? rs->chunks[c].rows : rs->all.v;
        counts[c] = rs->chunks ? rs->chunks[c].n : rs->all.n / 2;
        total += counts[c];
    }
    if (total && !rel_load_sorted_parts(full, parts, counts, nparts))
        for (size_t c = 0; c < nparts && ok; c++)
            for (size_t t = 0; t < counts[c] && ok; t++) {
                rel_insert(full, &parts[c][t * 2]);
                if ((t & (TICK_BATCH - 1)) == 0) ok = !exec_tick_n(rs->x, TICK_BATCH);
            }
    free(parts);
    free(counts);
    return ok;
}

static void free_chunks(run_state *rs) {
    for (size_t c = 0; rs->chunks && c < rs->nchunks; c++) free(rs->chunks[c].rows);
    free(rs->chunks);
    rs->chunks = NULL;
    if (rs->charged) il_meter_release(rs->meter_id, rs->charged);
}

bool exec_closure_run(plan_program *p, exec_ctx *x, const plan_stratum *st, uint32_t col,
                      const exec_closure_step *step, const val_t *base, size_t nbase) {
    plan_pred *pp = &p->preds.v[st->preds[0]];
    const plan_pred *sp = &p->preds.v[step->pred];
    rel_t *rel = sp->kind == PP_BASE ? (rel_t *)sp->stored : sp->full;
    if (rel && (rel_arity(rel) != 2 || rel_count(rel) == 0)) rel = NULL;
    run_state rs = {.x = x, .col = col, .other = 1 - col};
    uint32_t threads = x->guard && x->guard->threads > 1 ? x->guard->threads : 1;
    /* Few seeds for the size of the graph (a bound query): the searches may reach only
       a little of it, so it is read as they go. */
    int idx = rel && nbase * 4 < rel_count(rel) ? exec_rel_index(&rel, step->order, 1) : -1;
    bool ok = idx >= 0 && rel_index_order(rel, idx)[0] == step->from_col
                  ? run_lazy(&rs, rel, idx, base, nbase)
                  : run_eager(&rs, rel, step, base, nbase, threads);
    if (ok && rs.work) ok = !exec_tick_n(x, rs.work);
    /* rows partitioned by the second column were put in order (order_by_first), but a
       lazy search's, which are sorted here */
    if (ok && col != 0 && !rs.ordered && !tuple_sort(rs.all.v, rs.all.n / 2, 2)) ok = false;
    if (ok) ok = load_rows(&rs, pp->full);
    if (rs.chunks) free_chunks(&rs);
    if (!ok && !x->error) x->error = EXEC_STOPPED;
    il_mvec_free(rs.all);
    return ok;
}

/* Pinned graphs: a session reads one revision of its graph while other sessions write
 * (il_session_pin; docs/engine.md, "Concurrency").
 *
 * The pin is a copy of the graph's catalog made where statements are serialized: each
 * stored relation a copy-on-write snapshot (exec/rel.h, O(indexes) each), each rule a
 * copy of its clauses, each maintained rule's rows a snapshot, each vector index a
 * revision of its HNSW graph (kg_indexes_pin). Nothing in it is shared with the live graph
 * but what snapshots and those graphs share, so a writer may change or drop anything
 * meanwhile. The copy has no plan cache of its own beyond the pin. A query that would
 * make a rule maintained (views/read_policy.h) makes the view on the copy instead, as its
 * own evaluation, and reads its rows; the next serialized call after the unpin hands the
 * view to the live graph, caught up with the commits since the pin (adopt_views). A
 * snapshot lacking an index a query needs is copied, once per pin, into a private
 * relation holding it (exec/snapidx.h); the index is added to the stored relation at the
 * unpin, so the next pinned read of that shape finds it.
 *
 * The unpin may run on any thread, beside serialized statements: it releases the
 * snapshots and puts the session back on its graph, and leaves the rest (freeing the
 * copy, which another thread may still be naming through il_session_graph; adding the
 * indexes; clearing a session whose graph was dropped) to the next serialized call that
 * collects (kg_pins_collect). So a pinned read that ends while a long write runs does not
 * wait for it. */
#include <stdlib.h>
#include <string.h>

#include "exec/snapidx.h"
#include "iql/parser.h"
#include "kg/kg.h"
#include "views/read_policy.h"
#include "views/view.h"

/* A write publishes the revision before it when a pin began or ended this recently. */
#define PUBLISH_AFTER_PIN_NS 1000000000u

typedef struct pin_copy {
    const rel_t *snap;
    rel_t *copy;
} pin_copy;

typedef struct pin_want {
    char *rel;
    uint32_t ncols;
    uint32_t cols[REL_MAX_ARITY];
} pin_want;

/* A graph's latest committed revision pinned for readers that cannot take the engine
 * lock (kg_publish): the pinned copy, whose snapshots pins made from it borrow. */
typedef struct kg_published {
    _Atomic uint32_t refs; /* the graph's (until unpublished) plus one per pin made from it */
    uint64_t commits;      /* the graph's commits as of the revision */
    kg_graph *copy;
} kg_published;

/* The names of the engine's graphs, sorted, as of one statement's end: immutable, shared
 * by the pins made while it is the engine's latest (e->listed), so that `.kg list` and
 * `.status` run pinned beside a write that creates or drops a graph. */
typedef struct kg_names {
    _Atomic uint32_t refs; /* the engine's (while it is e->listed) plus one per pin */
    uint32_t n;
    char *names[];
} kg_names;

/* A copy of one rule as of one generation (kg_rule.gen), immutable, shared by the rules
 * copies of every version in which the rule had that generation. */
typedef struct rule_copy {
    kg_rule rule;          /* first: kg_rule_free frees the whole copy */
    _Atomic uint32_t refs; /* one per kg_rules_copy holding it */
} rule_copy;

/* A graph's rules as of one version, immutable: a writer changes rules only by moving
 * the version (catalog.c, txn.c), so every pin of that version may read the same copy;
 * the next version's copy shares the rules that did not change. Copying each rule for
 * every pin had cost a pin 0.6 ms with 1,000 rules and 5.4 ms with 3,000 (BENCHMARKS.md,
 * "Reads beside writes"). */
typedef struct kg_rules_copy {
    _Atomic uint32_t refs; /* the live graph's (while its version holds) plus one per pin */
    uint64_t version;
    uint64_t serial;         /* unique in the process (kg_rule.copy_serial) */
    IL_VEC(kg_rule *) rules; /* each the `rule` of a rule_copy */
    il_strmap names;
} kg_rules_copy;

/* A view a pinned read made, for the live graph to adopt. */
typedef struct pin_view {
    char *rel;
    view_t *view;
} pin_view;

typedef struct kg_pin {
    kg_published *from;       /* the publication whose snapshots it borrows, or NULL: its own */
    kg_rules_copy *rules;     /* the rules the copy's rules and rule_names are (a reference) */
    il_strmap rows;           /* maintained rule -> snapshot of its rows */
    IL_VEC(char *) row_names; /* the keys of rows, owned */
    IL_VEC(const rel_t *) row_snaps; /* their snapshots */
    IL_VEC(pin_copy) copies;         /* private copies with indexes snapshots lack */
    IL_VEC(pin_want) wants;          /* indexes to add to the stored relations */
    IL_VEC(pin_view) views; /* rows also in `rows`; the views keep the relations' snapshots */
    exec_snapidx provider;
    const exec_snapidx *previous; /* the provider installed before the pin's */
    kg_names *graphs;             /* the engine's graphs as of the pin (a reference), or NULL */
} kg_pin;

static const iql_schema *schema_copy(il_arena *a, const iql_schema *s) {
    iql_schema *c = il_arena_alloc(a, sizeof *c);
    c->rel = il_arena_strdup(a, s->rel);
    c->ncols = s->ncols;
    c->cols = s->ncols ? il_arena_alloc(a, s->ncols * sizeof *c->cols) : NULL;
    for (uint32_t i = 0; i < s->ncols; i++) {
        c->cols[i] = s->cols[i];
        c->cols[i].name = il_arena_strdup(a, s->cols[i].name);
    }
    return c;
}

/* The stored relation of the pinned graph whose snapshot is snap, or NULL. */
static kg_relation *stored_of(kg_graph *g, const rel_t *snap) {
    for (uint32_t i = 0; i < g->rels.n; i++)
        if (g->rels.v[i]->data == snap) return g->rels.v[i];
    return NULL;
}

static rel_t *copy_with_index(void *ctx, const rel_t *snap, const uint32_t *cols, uint32_t ncols) {
    kg_graph *g = ctx;
    kg_pin *p = g->pin;
    rel_t *copy = NULL;
    for (uint32_t i = 0; i < p->copies.n && !copy; i++)
        if (p->copies.v[i].snap == snap) copy = p->copies.v[i].copy;
    if (!copy) {
        copy = rel_new(rel_arity(snap));
        if (!copy) return NULL;
        rel_cursor cur;
        rel_seek(snap, 0, NULL, 0, &cur);
        const val_t *t;
        while ((t = rel_next(&cur, NULL))) rel_insert(copy, t);
        il_vec_push(p->copies, ((pin_copy){snap, copy}));
    }
    bool had = rel_find_index(copy, cols, ncols) >= 0;
    if (rel_index(copy, cols, ncols) < 0) return NULL;
    kg_relation *r = had ? NULL : stored_of(g, snap);
    if (r) {
        pin_want w = {.rel = strdup(r->name), .ncols = ncols};
        memcpy(w.cols, cols, ncols * sizeof *cols);
        il_vec_push(p->wants, w);
    }
    return copy;
}

static rule_copy *copy_of(kg_rule *r) {
    return (rule_copy *)r;
}

static void rules_unref(kg_rules_copy *c) {
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1) return;
    for (uint32_t i = 0; i < c->rules.n; i++) {
        rule_copy *rc = copy_of(c->rules.v[i]);
        if (atomic_fetch_sub_explicit(&rc->refs, 1, memory_order_acq_rel) == 1)
            kg_rule_free(&rc->rule);
    }
    il_vec_free(c->rules);
    il_strmap_free(&c->names);
    free(c);
}

/* A new copy of live rule lr. */
static kg_rule *rule_copy_new(const kg_rule *lr) {
    rule_copy *rc = calloc(1, sizeof *rc);
    atomic_init(&rc->refs, 1);
    kg_rule *r = &rc->rule;
    r->name = strdup(lr->name);
    r->gen = lr->gen;
    il_arena_init(&r->arena);
    for (uint32_t j = 0; j < lr->clauses.n; j++) kg_rule_push_clause(r, lr->clauses.v[j]);
    return r;
}

/* Serialized: a copy of live's rules as of now, made from prev (the latest, or NULL):
 * each rule that did not change since is prev's copy (found through the live rule, no
 * lookup by name), and prev's name map is taken whole when no rule went since, with the
 * changed and new rules put into it; so a pin after one rule changed costs a pointer per
 * rule and a copy of the map, not a copy of every rule. */
static kg_rules_copy *rules_copy_new(kg_graph *live, const kg_rules_copy *prev) {
    static _Atomic uint64_t serials;
    kg_rules_copy *c = calloc(1, sizeof *c);
    atomic_init(&c->refs, 1);
    c->version = live->version;
    c->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
    uint32_t kept = 0; /* live rules that prev has (changed or not) */
    for (uint32_t i = 0; i < live->rules.n; i++) {
        const kg_rule *lr = live->rules.v[i];
        kept += prev && lr->copy_serial == prev->serial;
    }
    bool patch = prev && kept == prev->rules.n;
    if (patch) il_strmap_copy(&c->names, &prev->names);
    il_vec_reserve(c->rules, live->rules.n);
    for (uint32_t i = 0; i < live->rules.n; i++) {
        kg_rule *lr = live->rules.v[i];
        bool in_prev = prev && lr->copy_serial == prev->serial;
        kg_rule *r;
        if (in_prev && lr->copy->gen == lr->gen) {
            r = lr->copy;
            atomic_fetch_add_explicit(&copy_of(r)->refs, 1, memory_order_relaxed);
            if (!patch) il_strmap_put(&c->names, r->name, r);
        } else {
            r = rule_copy_new(lr);
            il_strmap_put(&c->names, r->name, r);
        }
        il_vec_push(c->rules, r);
        lr->copy = r;
        lr->copy_serial = c->serial;
    }
    return c;
}

/* Serialized: a reference on live's rules as of now, copied when they changed since the
 * last copy (only the rules that changed). */
static kg_rules_copy *rules_of(kg_graph *live) {
    kg_rules_copy *c = live->rules_copy;
    if (!c || c->version != live->version) {
        kg_rules_copy *prev = c;
        c = rules_copy_new(live, prev);
        rules_unref(prev);
        live->rules_copy = c;
    }
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void kg_pin_rules_release(kg_graph *g) {
    rules_unref(g->rules_copy);
    g->rules_copy = NULL;
}

/* A pinned copy of `live`, or with `from`, of the published copy from->copy: its
 * snapshots borrowed, not taken (any thread: a published copy never changes). */
static kg_graph *pin_graph(kg_graph *live, kg_published *from) {
    if (from) live = from->copy;
    kg_graph *g = calloc(1, sizeof *g);
    g->name = strdup(live->name);
    g->e = live->e;
    g->version = live->version;
    g->serial = live->serial;
    il_arena_init(&g->arena);
    kg_pin *p = calloc(1, sizeof *p);
    g->pin = p;
    for (uint32_t i = 0; i < live->rels.n; i++) {
        const kg_relation *lr = live->rels.v[i];
        kg_relation *r = calloc(1, sizeof *r);
        r->name = strdup(lr->name);
        r->data = !lr->data ? NULL : from ? lr->data : (rel_t *)rel_snapshot(lr->data);
        r->schema = lr->schema ? (iql_schema *)schema_copy(&g->arena, lr->schema) : NULL;
        il_vec_push(g->rels, r);
        il_strmap_put(&g->rel_names, r->name, r);
    }
    /* The rules are the shared copy's, read only (a pinned copy changes no rule): its
       vector and name map are borrowed, and given back before kg_catalog_free. */
    if (from) {
        p->rules = from->copy->pin->rules;
        atomic_fetch_add_explicit(&p->rules->refs, 1, memory_order_relaxed);
    } else {
        p->rules = rules_of(live);
    }
    g->rules.v = p->rules->rules.v;
    g->rules.n = g->rules.cap = p->rules->rules.n;
    g->rule_names = p->rules->names;
    kg_indexes_pin(g, live); /* a reference on each HNSW graph, and its revision */
    p->from = from;
    if (from) { /* what the publication's pin read of the read policy */
        kg_pin *fp = live->pin;
        for (uint32_t i = 0; i < fp->row_names.n; i++) {
            char *key = strdup(fp->row_names.v[i]);
            il_vec_push(p->row_names, key);
            il_vec_push(p->row_snaps, fp->row_snaps.v[i]);
            il_strmap_put(&p->rows, key, (void *)fp->row_snaps.v[i]);
        }
    } else if (read_policy_active(live)) /* what the read policy would read now, as of now */
        for (uint32_t i = 0, n = read_policy_entries(live); i < n; i++) {
            const char *name;
            const rel_t *rows = read_policy_entry(live, i, &name);
            if (!rows) continue;
            char *key = strdup(name);
            const rel_t *snap = rel_snapshot((rel_t *)rows);
            il_vec_push(p->row_names, key);
            il_vec_push(p->row_snaps, snap);
            il_strmap_put(&p->rows, key, (void *)snap);
        }
    p->provider = (exec_snapidx){.copy = copy_with_index, .ctx = g};
    return g;
}

static void names_unref(kg_names *l) {
    if (!l || atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1) return;
    for (uint32_t i = 0; i < l->n; i++) free(l->names[i]);
    free(l);
}

/* Under pins_mu: a reference on the engine's latest list of graphs. */
static kg_names *names_ref(il_engine *e) {
    kg_names *l = e->listed;
    if (l) atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
    return l;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void kg_graphs_relist(il_engine *e) {
    if (e->listed && !e->graphs_moved) return;
    kg_names *l = malloc(sizeof *l + e->graphs.n * sizeof *l->names);
    atomic_init(&l->refs, 1);
    l->n = e->graphs.n;
    for (uint32_t i = 0; i < l->n; i++) l->names[i] = strdup(e->graphs.v[i]->name);
    qsort(l->names, l->n, sizeof *l->names, cmp_names);
    pthread_mutex_lock(&e->pins_mu);
    kg_names *old = e->listed;
    e->listed = l;
    pthread_mutex_unlock(&e->pins_mu);
    e->graphs_moved = false;
    names_unref(old);
}

void kg_graphs_unlist(il_engine *e) {
    names_unref(e->listed);
    e->listed = NULL;
}

const char **kg_graph_names(il_session *s, uint32_t *n) {
    kg_names *l = s->kg->pin ? s->kg->pin->graphs : NULL;
    il_engine *e = s->e;
    *n = l ? l->n : e->graphs.n;
    const char **names = malloc((*n ? *n : 1) * sizeof *names);
    for (uint32_t i = 0; i < *n; i++) names[i] = l ? l->names[i] : e->graphs.v[i]->name;
    if (!l) qsort(names, *n, sizeof *names, cmp_names);
    return names;
}

static void pin_graph_free(kg_graph *g) {
    kg_pin *p = g->pin;
    names_unref(p->graphs);
    for (uint32_t i = 0; i < p->views.n; i++) { /* not adopted */
        view_close(p->views.v[i].view);
        free(p->views.v[i].rel);
    }
    il_vec_free(p->views);
    il_vec_free(g->views);
    g->rules.v = NULL;
    g->rules.n = 0;
    g->rule_names = (il_strmap){0};
    rules_unref(p->rules);
    kg_catalog_free(g);
    kg_indexes_free(g); /* drops the references on the HNSW graphs */
    kg_plan_cache_free(g);
    for (uint32_t i = 0; i < p->row_names.n; i++) {
        free(p->row_names.v[i]);
        rel_snapshot_release(p->row_snaps.v[i]);
    }
    il_vec_free(p->row_names);
    il_vec_free(p->row_snaps);
    il_strmap_free(&p->rows);
    for (uint32_t i = 0; i < p->copies.n; i++) rel_free(p->copies.v[i].copy);
    il_vec_free(p->copies);
    for (uint32_t i = 0; i < p->wants.n; i++) free(p->wants.v[i].rel);
    il_vec_free(p->wants);
    free(p);
    il_arena_destroy(&g->arena);
    free(g->name);
    free(g);
}

/* The oldest live pin's number, for the guards (under pins_mu). */
static void publish_oldest(il_engine *e) {
    atomic_store_explicit(&e->snap_watch.oldest, e->pins.n ? e->pins.v[0] : 0,
                          memory_order_relaxed);
}

static uint64_t pins_add(il_engine *e) {
    atomic_store_explicit(&e->last_pin_ns, exec_clock_ns(), memory_order_relaxed);
    pthread_mutex_lock(&e->pins_mu);
    uint64_t seq = ++e->pin_next;
    il_vec_push(e->pins, seq); /* numbers only grow: the vector stays ascending */
    publish_oldest(e);
    pthread_mutex_unlock(&e->pins_mu);
    return seq;
}

static void pins_remove(il_engine *e, uint64_t seq) {
    atomic_store_explicit(&e->last_pin_ns, exec_clock_ns(), memory_order_relaxed);
    pthread_mutex_lock(&e->pins_mu);
    for (uint32_t i = 0; i < e->pins.n; i++) {
        if (e->pins.v[i] != seq) continue;
        memmove(e->pins.v + i, e->pins.v + i + 1, (e->pins.n - i - 1) * sizeof *e->pins.v);
        e->pins.n--;
        break;
    }
    publish_oldest(e);
    pthread_mutex_unlock(&e->pins_mu);
}

void il_engine_set_snapshot_memory(il_engine *e, uint64_t bytes) {
    atomic_store_explicit(&e->snap_watch.limit, bytes, memory_order_relaxed);
}

uint64_t il_snapshot_memory_bytes(void) {
    return bt_snapshot_bytes();
}

/* What an unpin leaves to the next serialized call (kg_pins_collect): the pinned copy,
 * its snapshots already released, to free, with the indexes its queries built to add to
 * the live relations; and a session whose graph was dropped under the pin, to clear. */
typedef struct kg_pin_later {
    struct kg_pin_later *next;
    kg_graph *pinned;
    il_session *reset;
} kg_pin_later;

/* The difference between the pinned snapshot `was` and the stored relation `now` (either
 * may be NULL: no facts), or false when there is none. */
static bool difference(const rel_t *was, const rel_t *now, uint32_t arity, view_delta_rel *d) {
    if ((!was || !rel_count(was)) && (!now || !rel_count(now))) return false;
    if (was && now && rel_changes(was) == rel_changes(now)) return false; /* untouched */
    d->plus = rel_new(arity);
    d->minus = rel_new(arity);
    rel_difference(was, now, d->plus, d->minus);
    return true;
}

/* Whether the live graph can take a view computed on the pinned copy: it is the same
 * graph (not dropped, perhaps made again: graphs have serial numbers), at the same
 * version (rules changed, or a relation came or went: the view would rebuild), with no
 * uncommitted changes (an open transaction, whose writes views see at its commit). */
static bool adoptable(const il_engine *e, const kg_graph *copy, const kg_graph *live) {
    return live && live->serial == copy->serial && live->version == copy->version && !e->txn &&
           !live->view_pending && !e->views_unmaintained;
}

/* Moves view v, computed on the pinned copy, to the live graph, and hands it, as one
 * commit's delta, the difference between the snapshots it was computed from and the
 * stored relations it reads now, so that it is caught up with the commits since the
 * pin. */
static void catch_up(kg_graph *copy, kg_graph *live, view_t *v) {
    IL_VEC(view_delta_rel) delta = {0};
    for (uint32_t k = 0; k < copy->rels.n; k++) {
        const kg_relation *pr = copy->rels.v[k];
        if (!view_reads_stored(v, pr->name)) continue;
        const kg_relation *lr = kg_rel_find(live, pr->name);
        const rel_t *now = lr ? lr->data : NULL;
        uint32_t arity = pr->data ? rel_arity(pr->data) : now ? rel_arity(now) : 1;
        view_delta_rel d = {.name = pr->name};
        if (difference(pr->data, now, arity, &d)) il_vec_push(delta, d);
    }
    view_rehome(v, live);
    view_graph_commit(&v, 1, delta.v, delta.n);
    for (uint32_t k = 0; k < delta.n; k++) {
        rel_free(delta.v[k].plus);
        rel_free(delta.v[k].minus);
    }
    il_vec_free(delta);
}

/* The views pinned reads made on `copy` (kg_pin_note_query) become the live graph's
 * maintained rules, caught up with the commits since the pin; one is closed instead (when
 * the copy is freed) when the live graph cannot take it (adoptable) or a serialized read
 * decided on the rule meanwhile. */
static void adopt_views(il_engine *e, kg_graph *copy, kg_graph *live) {
    kg_pin *p = copy->pin;
    bool current = adoptable(e, copy, live);
    for (uint32_t i = 0; i < p->views.n; i++) {
        pin_view *pv = &p->views.v[i];
        if (!current || !read_policy_undecided(live, pv->rel)) continue; /* closed when freed */
        catch_up(copy, live, pv->view);
        read_policy_adopt(live, pv->rel, pv->view);
        pv->view = NULL;
    }
}

bool kg_pin_adopt_view(il_session *s, view_t *v) {
    kg_graph *copy = s->kg;
    if (!s->pinned_live || copy->pin->from) return false;
    kg_graph *live = kg_graph_find(s->e, copy->name);
    if (!adoptable(s->e, copy, live)) return false;
    catch_up(copy, live, v);
    return true;
}

void kg_pin_note_query(il_session *s, const iql_query *q) {
    kg_pin *p = s->kg->pin;
    /* A publication's snapshots may go before the next serialized call, and its revision
       is already behind: such a read evaluates. */
    if (p->from || il_strmap_get(&p->rows, q->goal.rel)) return;
    bool stopped;
    view_t *v = read_policy_build(s, q, &stopped);
    const rel_t *rows = v ? view_current_rows(v) : NULL;
    if (!rows) {
        view_close(v);
        return;
    }
    pin_view pv = {strdup(q->goal.rel), v};
    il_vec_push(p->views, pv);
    il_strmap_put(&p->rows, pv.rel, (void *)rows);
}

void kg_pins_collect(il_engine *e) {
    if (!atomic_load_explicit(&e->pins_later_any, memory_order_acquire)) return;
    pthread_mutex_lock(&e->pins_mu);
    kg_pin_later *l = e->pins_later;
    e->pins_later = NULL;
    atomic_store_explicit(&e->pins_later_any, false, memory_order_relaxed);
    pthread_mutex_unlock(&e->pins_mu);
    while (l) {
        kg_graph *g = l->pinned, *live = kg_graph_find(e, g->name);
        /* The indexes pinned queries built for themselves go to the relations, when they
           still exist (a graph dropped and made again under the same name is harmless:
           an index that no longer fits is refused). */
        for (uint32_t i = 0; live && i < g->pin->wants.n; i++) {
            const pin_want *w = &g->pin->wants.v[i];
            kg_relation *r = kg_rel_find(live, w->rel);
            if (r && r->data) rel_index(r->data, w->cols, w->ncols); /* -1: no longer fits */
        }
        adopt_views(e, g, live);
        if (l->reset) {
            sess_clear(l->reset, NULL, NULL);
            pthread_mutex_lock(&e->pins_mu);
            l->reset->reset_pending = false;
            pthread_mutex_unlock(&e->pins_mu);
        }
        pin_graph_free(g);
        kg_pin_later *next = l->next;
        free(l);
        l = next;
    }
}

bool il_session_pin(il_session *s) {
    if (s->pinned_live) return true;
    kg_pins_collect(s->e);
    kg_graph *live = s->kg;
    if (s->e->txn) return false;
    s->pin_commits = atomic_load_explicit(&live->commits, memory_order_acquire);
    kg_graph *g = pin_graph(live, NULL);
    pthread_mutex_lock(&s->e->pins_mu);
    g->pin->graphs = names_ref(s->e);
    __atomic_store_n(&s->kg, g, __ATOMIC_RELEASE);
    s->pinned_live = live;
    pthread_mutex_unlock(&s->e->pins_mu);
    s->pin_seq = pins_add(s->e);
    return true;
}

static void published_unref(kg_published *pub);

/* Releases the pinned copy's snapshots, or drops its publication's (any thread): what
 * only they kept goes now. */
static void release_snapshots(kg_graph *g) {
    kg_pin *p = g->pin;
    bool own = !p->from;
    /* the views made on the pin are caught up from them (adopt_views; pin_graph_free
       releases them) */
    if (!p->views.n)
        for (uint32_t i = 0; i < g->rels.n; i++) {
            if (own) rel_free(g->rels.v[i]->data);
            g->rels.v[i]->data = NULL;
        }
    for (uint32_t i = 0; i < p->row_snaps.n; i++) {
        if (own) rel_snapshot_release(p->row_snaps.v[i]);
        p->row_snaps.v[i] = NULL;
    }
    if (!own) published_unref(p->from);
    p->from = NULL;
}

/* Any thread: the last reference frees the publication. */
static void published_unref(kg_published *pub) {
    if (!pub || atomic_fetch_sub_explicit(&pub->refs, 1, memory_order_acq_rel) != 1) return;
    release_snapshots(pub->copy);
    pin_graph_free(pub->copy);
    free(pub);
}

bool il_session_pin_published(il_session *s) {
    il_engine *e = s->e;
    if (s->pinned_live) return false;
    pthread_mutex_lock(&e->pins_mu);
    kg_graph *live = s->kg;
    /* not while its state waits to be cleared (its graph was dropped under its last pin) */
    kg_published *pub = s->reset_pending ? NULL : live->published;
    /* the latest list of graphs: every graph created or dropped before the pin, whose log
       record is then written before the caller reads how far the log is (the server's
       reply waits for that much) */
    kg_names *graphs = pub ? names_ref(e) : NULL;
    if (pub) atomic_fetch_add_explicit(&pub->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&e->pins_mu);
    if (!pub) return false;
    kg_graph *g = pin_graph(live, pub);
    g->pin->graphs = graphs;
    pthread_mutex_lock(&e->pins_mu);
    bool still = s->kg == live; /* else a drop of its graph moved it meanwhile */
    if (still) {
        __atomic_store_n(&s->kg, g, __ATOMIC_RELEASE);
        s->pinned_live = live;
    }
    pthread_mutex_unlock(&e->pins_mu);
    if (!still) {
        release_snapshots(g);
        pin_graph_free(g);
        return false;
    }
    s->pin_commits = pub->commits;
    s->pin_seq = pins_add(e);
    return true;
}

bool il_session_pin_current(const il_session *s) {
    /* Under pins_mu: a drop of the graph moves pinned_live to `default` under it before
       the graph is freed. Only the session's own graph counts: writes to other graphs
       leave its revision current. */
    pthread_mutex_lock(&s->e->pins_mu);
    kg_graph *live = s->pinned_live;
    bool current = live && live->serial == s->kg->serial &&
                   atomic_load_explicit(&live->commits, memory_order_acquire) == s->pin_commits;
    pthread_mutex_unlock(&s->e->pins_mu);
    return current;
}

static bool pins_recent(il_engine *e) {
    uint64_t at = atomic_load_explicit(&e->last_pin_ns, memory_order_relaxed);
    return atomic_load_explicit(&e->snap_watch.oldest, memory_order_relaxed) ||
           (at && exec_clock_ns() - at < PUBLISH_AFTER_PIN_NS);
}

/* Publishes g's latest committed revision, unless one is published. */
static void publish(il_engine *e, kg_graph *g) {
    if (g->published) return;
    kg_published *pub = calloc(1, sizeof *pub);
    atomic_init(&pub->refs, 1);
    pub->commits = atomic_load_explicit(&g->commits, memory_order_relaxed);
    pub->copy = pin_graph(g, NULL);
    pthread_mutex_lock(&e->pins_mu);
    g->published = pub;
    pthread_mutex_unlock(&e->pins_mu);
}

void kg_publish(il_session *w) {
    il_engine *e = w->e;
    if (e->txn) return; /* the revision before it stays published until it ends (txn.c) */
    kg_graph *g = w->kg;
    if (!(w->publish || pins_recent(e))) {
        /* A write that publishes nothing withdraws what a write to another graph published
           of its graph, before it changes anything: else it would copy each node it
           changes for a publication nobody may read (readers pinned on it keep it). */
        kg_unpublish(g);
        return;
    }
    publish(e, g);
    /* The graphs other sessions are on, so that a read of one need not wait for this
       write either. Their publications cost nothing until they are written (no node is
       replaced under them) and stay valid until then: a write to one withdraws it. Under
       pins_mu: a pinned session's graph is pinned_live, which a read pinning a
       publication sets beside this. */
    IL_VEC(kg_graph *) others = {0};
    pthread_mutex_lock(&e->pins_mu);
    for (uint32_t i = 0; i < e->sessions.n; i++) {
        il_session *o = e->sessions.v[i];
        kg_graph *h = o->pinned_live ? o->pinned_live : o->kg;
        if (o == w || h == g || h->published || h->to_publish) continue;
        h->to_publish = true;
        il_vec_push(others, h);
    }
    pthread_mutex_unlock(&e->pins_mu);
    for (uint32_t i = 0; i < others.n; i++) {
        others.v[i]->to_publish = false;
        publish(e, others.v[i]);
    }
    il_vec_free(others);
}

void kg_unpublish(kg_graph *g) {
    if (!g->published) return;
    pthread_mutex_lock(&g->e->pins_mu);
    kg_published *pub = g->published;
    g->published = NULL;
    pthread_mutex_unlock(&g->e->pins_mu);
    published_unref(pub);
}

void kg_unpublish_written(il_engine *e, kg_graph *g) {
    /* Counted before the publication goes, and so before the revision moves (the change
       hook comes after): a reader that pinned it and then read a moved revision sees the
       count moved too (il_session_pin_current). */
    atomic_fetch_add_explicit(&g->commits, 1, memory_order_acq_rel);
    kg_unpublish(g);
    kg_graphs_relist(e);
}

void il_session_unpin(il_session *s) {
    if (!s->pinned_live) return;
    kg_graph *g = s->kg; /* the pinned copy: a drop moves only unpinned sessions' kg */
    il_engine *e = s->e;
    release_snapshots(g);
    kg_pin_later *l = calloc(1, sizeof *l);
    l->pinned = g;
    /* pins_mu orders this with a drop of the live graph (meta.c), which moves the
       session to `default` and asks for the reset that move makes */
    pthread_mutex_lock(&e->pins_mu);
    __atomic_store_n(&s->kg, s->pinned_live, __ATOMIC_RELEASE);
    s->pinned_live = NULL;
    if (s->reset_at_unpin) l->reset = s;
    s->reset_pending |= s->reset_at_unpin;
    s->reset_at_unpin = false;
    l->next = e->pins_later;
    e->pins_later = l;
    atomic_store_explicit(&e->pins_later_any, true, memory_order_release);
    pthread_mutex_unlock(&e->pins_mu);
    pins_remove(e, s->pin_seq);
    s->pin_seq = 0;
}

void il_session_set_publish(il_session *s, bool on) {
    s->publish = on;
}

bool il_session_pinned(const il_session *s) {
    return s->pinned_live != NULL;
}

void kg_pin_enter(kg_graph *g) {
    if (!g->pin) return;
    g->pin->previous = exec_snapidx_installed;
    exec_snapidx_installed = &g->pin->provider;
}

void kg_pin_leave(kg_graph *g) {
    if (g->pin) exec_snapidx_installed = g->pin->previous;
}

bool kg_maintained_active(kg_graph *g) {
    return g->pin ? g->pin->row_names.n || g->pin->views.n : read_policy_active(g);
}

const rel_t *kg_maintained_rows(kg_graph *g, const char *rel) {
    return g->pin ? il_strmap_get(&g->pin->rows, rel) : read_policy_rows(g, rel);
}

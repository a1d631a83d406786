/* The proof trees of `.why` as JSON (why.h), in the original's shape (protocol-later.md
 * 1.13, docs/server.md "Proof trees"): per row one DAG `{version, query, roots, nodes}`,
 * nodes keyed by string ids. A conclusion is one node however many parents reach it; its
 * first kept derivation gives its kind and children, the others are `rule` nodes listed
 * in `alternatives`. Nodes are written breadth first from the row, so a conclusion is met
 * first at its smallest depth, which decides whether the depth bound truncates it. */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "iql/print.h"
#include "kg/why.h"
#include "plan/build.h"
#include "value/print.h"

/* What a queued node is. */
typedef enum item_kind {
    IT_CONCLUSION, /* a why_node: "n<id>" */
    IT_ALT,        /* a further derivation of a conclusion: "d<deriv>" */
    IT_NEGATION,   /* a negated literal of a derivation: "x<deriv>_<literal>" */
    IT_VECTOR,     /* an hnsw_nearest literal of a derivation: "x<deriv>_<literal>" */
} item_kind;

typedef struct item {
    item_kind kind;
    uint32_t id;  /* node or derivation */
    uint32_t lit; /* IT_NEGATION, IT_VECTOR: the literal */
    uint32_t depth;
} item;

typedef struct writer {
    const why_ctx *w;
    il_buf *out;
    uint32_t *seen; /* per node: the tree (1-based) it was queued in */
    uint32_t tree;
    IL_VEC(item) queue;
    uint32_t head;
    bool first_node;
} writer;

static void json_cstr(il_buf *b, const char *s) {
    il_json_str(b, s, strlen(s));
}

static const val_t *node_vals(const why_ctx *w, uint32_t id) {
    return &w->vals.v[w->nodes.v[id].vals];
}

static void put_id(il_buf *o, const item *it) {
    switch (it->kind) {
    case IT_CONCLUSION:
        il_buf_printf(o, "\"n%u\"", it->id);
        break;
    case IT_ALT:
        il_buf_printf(o, "\"d%u\"", it->id);
        break;
    default:
        il_buf_printf(o, "\"x%u_%u\"", it->id, it->lit);
        break;
    }
}

/* Queues an item and writes its id. A conclusion is queued once per tree. */
static void child(writer *wr, item it) {
    put_id(wr->out, &it);
    if (it.kind == IT_CONCLUSION) {
        if (wr->seen[it.id] == wr->tree) return;
        wr->seen[it.id] = wr->tree;
    }
    il_vec_push(wr->queue, it);
}

/* "conclusion":{"pred":..,"args":[..]} of a why_node */
static void conclusion(writer *wr, uint32_t id) {
    const why_ctx *w = wr->w;
    const why_node *n = &w->nodes.v[id];
    il_buf_puts(wr->out, ",\"conclusion\":{\"pred\":");
    json_cstr(wr->out, w->rels.v[n->rel]);
    il_buf_puts(wr->out, ",\"args\":[");
    for (uint32_t i = 0; i < n->arity; i++) {
        if (i) il_buf_putc(wr->out, ',');
        val_fmt_json(node_vals(w, id)[i], wr->out);
    }
    il_buf_puts(wr->out, "]}");
}

/* {"X":1,...}: the clause's own variables (not the prover's `#` ones) in [from, to). */
static void bindings(writer *wr, const why_clause *c, const val_t *row, uint32_t from,
                     uint32_t to) {
    il_buf_putc(wr->out, '{');
    bool first = true;
    for (uint32_t i = from; i < to; i++) {
        if (c->out_names[i][0] == '#') continue;
        if (!first) il_buf_putc(wr->out, ',');
        first = false;
        json_cstr(wr->out, c->out_names[i]);
        il_buf_putc(wr->out, ':');
        val_fmt_json(row[i], wr->out);
    }
    il_buf_putc(wr->out, '}');
}

/* A literal's argument: its value in the instance, a constant, or null for `_`. */
static void arg_value(il_buf *o, const why_lit *wl, const iql_term *t, uint32_t j,
                      const val_t *row) {
    if (wl->arg_col[j] >= 0)
        val_fmt_json(row[wl->arg_col[j]], o);
    else if (plan_term_is_const(t))
        val_fmt_json(plan_const_value(t), o);
    else
        il_buf_puts(o, "null");
}

static void rule_id(writer *wr, const why_clause *c) {
    il_buf t;
    il_buf_init(&t);
    iql_fmt_rule(c->src, &t);
    il_buf_puts(wr->out, ",\"rule_id\":");
    il_json_str(wr->out, t.data, t.len);
    il_buf_free(&t);
}

typedef IL_VEC(uint32_t) id_list;

/* The ids of an instance's literals: atoms as conclusions, negations and searches as
 * leaves (comparisons held; their variables are in the bindings). With `listed` (an
 * aggregate's inputs, which may share a child) a conclusion already listed is skipped. */
static void instance_children(writer *wr, const why_deriv *d, uint32_t di, uint32_t depth,
                              bool *first, id_list *listed) {
    const why_ctx *w = wr->w;
    const why_clause *c = &w->clauses.v[d->clause];
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->src->nbody; i++) {
        const iql_literal *l = &c->src->body[i];
        const why_lit *wl = &c->lits[i];
        if (l->kind == IQL_LIT_CMP) continue;
        item it = {.id = di, .lit = i, .depth = depth + 1};
        if (l->kind == IQL_LIT_NEG) {
            it.kind = IT_NEGATION;
        } else if (wl->vector) {
            it.kind = IT_VECTOR;
        } else {
            if (k >= d->nchild) continue;
            it.kind = IT_CONCLUSION;
            it.id = w->children.v[d->child_off + k++];
            if (listed) {
                bool dup = false;
                for (uint32_t q = 0; q < listed->n && !dup; q++) dup = listed->v[q] == it.id;
                if (dup) continue;
                il_vec_push(*listed, it.id);
            }
        }
        if (!*first) il_buf_putc(wr->out, ',');
        *first = false;
        child(wr, it);
    }
}

/* "aggregate":{...} of the clause's first aggregate, for the node's tuple. */
static void aggregate_field(writer *wr, const why_deriv *d) {
    const why_ctx *w = wr->w;
    const why_clause *c = &w->clauses.v[d->clause];
    const why_node *n = &w->nodes.v[d->node];
    il_buf *o = wr->out;
    uint32_t col = 0;
    const iql_term *agg = NULL;
    for (uint32_t i = 0; i < c->src->head.nargs && !agg; i++) {
        const iql_term *t = c->src->head.args[i];
        if (t->kind == IQL_T_AGG) {
            agg = t;
            break;
        }
        if (t->kind != IQL_T_PLACEHOLDER) col++;
    }
    if (!agg) return;
    bool ranking = agg->u.agg.kind == IQL_AGG_TOP_K || agg->u.agg.kind == IQL_AGG_TOP_K_THRESHOLD ||
                   agg->u.agg.kind == IQL_AGG_WITHIN_RADIUS;
    const char *var = agg->u.agg.var;
    if (ranking && agg->u.agg.nspecs) {
        uint32_t s = agg->u.agg.order_spec < agg->u.agg.nspecs ? agg->u.agg.order_spec : 0;
        var = agg->u.agg.specs[s].var;
        col += s;
    }
    il_buf_puts(o, ",\"aggregate\":{\"fn\":");
    json_cstr(o, iql_agg_kind_name(agg->u.agg.kind));
    il_buf_puts(o, ",\"value_var\":");
    if (var)
        json_cstr(o, var);
    else
        il_buf_puts(o, "null");
    il_buf_puts(o, ",\"result\":");
    if (col < n->arity)
        val_fmt_json(node_vals(w, d->node)[col], o);
    else
        il_buf_puts(o, "null");
    il_buf_printf(o, ",\"contributing_count\":%llu,\"sample_inputs\":[",
                  (unsigned long long)d->ninputs);
    uint32_t shown = 0;
    for (uint32_t in = d->first_input; in != WHY_NONE; in = w->derivs.v[in].next) {
        const val_t *row = &w->vals.v[w->derivs.v[in].vals];
        if (shown++) il_buf_putc(o, ',');
        il_buf_putc(o, '[');
        bool first = true;
        for (uint32_t i = c->nseed; i < c->nout; i++) {
            if (c->out_names[i][0] == '#') continue;
            if (!first) il_buf_putc(o, ',');
            first = false;
            val_fmt_json(row[i], o);
        }
        il_buf_putc(o, ']');
    }
    il_buf_puts(o, "]}");
}

/* The fields of one derivation after its conclusion: a rule or an aggregate. */
static void deriv_fields(writer *wr, uint32_t di, uint32_t depth) {
    const why_ctx *w = wr->w;
    const why_deriv *d = &w->derivs.v[di];
    const why_clause *c = &w->clauses.v[d->clause];
    il_buf *o = wr->out;
    if (!c->is_query) il_buf_puts(o, ",\"source\":\"derived\"");
    rule_id(wr, c);
    il_buf_puts(o, ",\"bindings\":");
    if (c->is_agg) {
        bindings(wr, c, &w->vals.v[d->vals], 0, c->nseed);
        aggregate_field(wr, d);
    } else {
        bindings(wr, c, &w->vals.v[d->vals], 0, c->nout);
    }
    size_t mark = o->len;
    il_buf_puts(o, ",\"children\":[");
    size_t open = o->len;
    bool first = true;
    if (c->is_agg) {
        id_list listed = {0};
        for (uint32_t in = d->first_input; in != WHY_NONE; in = w->derivs.v[in].next)
            instance_children(wr, &w->derivs.v[in], in, depth, &first, &listed);
        il_vec_free(listed);
    } else {
        instance_children(wr, d, di, depth, &first, NULL);
    }
    if (o->len == open)
        o->len = mark; /* no children: omitted */
    else
        il_buf_putc(o, ']');
}

static void node_open(writer *wr, const item *it, const char *kind) {
    il_buf *o = wr->out;
    if (!wr->first_node) il_buf_putc(o, ',');
    wr->first_node = false;
    put_id(o, it);
    il_buf_printf(o, ":{\"kind\":\"%s\"", kind);
}

static bool deriv_is_agg(const why_ctx *w, uint32_t d) {
    return w->clauses.v[w->derivs.v[d].clause].is_agg;
}

static void write_conclusion(writer *wr, const item *it) {
    const why_ctx *w = wr->w;
    const why_node *n = &w->nodes.v[it->id];
    il_buf *o = wr->out;
    uint32_t first = n->first;
    while (first != WHY_NONE && !w->derivs.v[first].kept) first = w->derivs.v[first].next;
    if (n->kind == WN_FACT) {
        node_open(wr, it, "fact");
        conclusion(wr, it->id);
        il_buf_puts(o, ",\"source\":\"edb\"}");
        return;
    }
    if (n->kind == WN_TRUNCATED || first == WHY_NONE || it->depth > w->max_depth ||
        o->len > WHY_MAX_JSON_BYTES) {
        node_open(wr, it, "truncated");
        conclusion(wr, it->id);
        il_buf_printf(o, ",\"truncated\":{\"depth_limit\":%u}}", w->max_depth);
        return;
    }
    node_open(wr, it, deriv_is_agg(w, first) ? "aggregate" : "rule");
    conclusion(wr, it->id);
    deriv_fields(wr, first, it->depth);
    bool any = false;
    for (uint32_t d = w->derivs.v[first].next; d != WHY_NONE; d = w->derivs.v[d].next) {
        if (!w->derivs.v[d].kept) continue;
        il_buf_puts(o, any ? "," : ",\"alternatives\":[");
        any = true;
        child(wr, (item){.kind = IT_ALT, .id = d, .depth = it->depth});
    }
    if (any) il_buf_putc(o, ']');
    il_buf_putc(o, '}');
}

static void write_alt(writer *wr, const item *it) {
    const why_ctx *w = wr->w;
    const why_deriv *d = &w->derivs.v[it->id];
    node_open(wr, it, deriv_is_agg(w, it->id) ? "aggregate" : "rule");
    conclusion(wr, d->node);
    deriv_fields(wr, it->id, it->depth);
    il_buf_putc(wr->out, '}');
}

/* `!rel(...)` of an instance: the atom with its bound values. */
static void write_negation(writer *wr, const item *it) {
    const why_ctx *w = wr->w;
    const why_deriv *d = &w->derivs.v[it->id];
    const why_clause *c = &w->clauses.v[d->clause];
    const iql_literal *l = &c->src->body[it->lit];
    const why_lit *wl = &c->lits[it->lit];
    const val_t *row = &w->vals.v[d->vals];
    il_buf *o = wr->out;
    node_open(wr, it, "negation");
    il_buf_puts(o, ",\"conclusion\":{\"pred\":");
    json_cstr(o, l->atom.rel);
    il_buf_puts(o, ",\"args\":[");
    il_buf t;
    il_buf_init(&t);
    il_buf_printf(&t, "%s(", l->atom.rel);
    for (uint32_t j = 0; j < l->atom.nargs; j++) {
        if (j) {
            il_buf_putc(o, ',');
            il_buf_puts(&t, ", ");
        }
        arg_value(o, wl, l->atom.args[j], j, row);
        if (wl->arg_col[j] >= 0)
            val_fmt_display(row[wl->arg_col[j]], &t);
        else
            iql_fmt_term(l->atom.args[j], &t);
    }
    il_buf_putc(&t, ')');
    il_buf_puts(o, "]},\"negation\":{\"pattern\":");
    il_json_str(o, t.data, t.len);
    il_buf_puts(o, "}}");
    il_buf_free(&t);
}

/* hnsw_nearest("index", Query, K, Id, Dist[, Ef]) of an instance: one of the K found. */
static void write_vector(writer *wr, const item *it) {
    const why_ctx *w = wr->w;
    const why_deriv *d = &w->derivs.v[it->id];
    const why_clause *c = &w->clauses.v[d->clause];
    const iql_atom *at = &c->src->body[it->lit].atom;
    const why_lit *wl = &c->lits[it->lit];
    const val_t *row = &w->vals.v[d->vals];
    il_buf *o = wr->out;
    node_open(wr, it, "vector_search");
    il_buf_puts(o, ",\"conclusion\":{\"pred\":");
    json_cstr(o, at->rel);
    il_buf_puts(o, ",\"args\":[");
    for (uint32_t j = 0; j < at->nargs; j++) {
        if (j) il_buf_putc(o, ',');
        arg_value(o, wl, at->args[j], j, row);
    }
    il_buf_puts(o, "]},\"vector_search\":{\"index_name\":");
    arg_value(o, wl, at->args[0], 0, row);
    il_buf_puts(o, ",\"metric\":");
    if (wl->metric)
        json_cstr(o, wl->metric);
    else
        il_buf_puts(o, "null");
    static const char *const names[] = {"query_vector", "k", "result_id", "distance", "ef_search"};
    static const uint32_t args[] = {1, 2, 3, 4, 5};
    for (uint32_t i = 0; i < 5; i++) {
        if (args[i] >= at->nargs) continue;
        il_buf_printf(o, ",\"%s\":", names[i]);
        arg_value(o, wl, at->args[args[i]], args[i], row);
    }
    il_buf_puts(o, "}}");
}

static void write_tree(writer *wr, uint32_t root) {
    const why_ctx *w = wr->w;
    il_buf *o = wr->out;
    wr->tree++;
    wr->queue.n = 0;
    wr->head = 0;
    wr->first_node = true;
    il_buf_puts(o, "{\"version\":1,\"query\":");
    json_cstr(o, w->query ? w->query : "");
    il_buf_puts(o, ",\"roots\":[");
    /* a row of the query itself is at depth 0: its goal's atoms are at 1 */
    child(wr, (item){.kind = IT_CONCLUSION,
                     .id = root,
                     .depth = w->nodes.v[root].kind == WN_QUERY ? 0 : 1});
    il_buf_puts(o, "],\"nodes\":{");
    while (wr->head < wr->queue.n) {
        item it = wr->queue.v[wr->head++];
        switch (it.kind) {
        case IT_CONCLUSION:
            write_conclusion(wr, &it);
            break;
        case IT_ALT:
            write_alt(wr, &it);
            break;
        case IT_NEGATION:
            write_negation(wr, &it);
            break;
        case IT_VECTOR:
            write_vector(wr, &it);
            break;
        }
    }
    il_buf_puts(o, "}}");
}

void why_json(const why_ctx *w, il_buf *out) {
    writer wr = {.w = w, .out = out};
    wr.seen = calloc(w->nodes.n + 1, sizeof *wr.seen);
    il_buf_putc(out, '[');
    for (uint32_t i = 0; i < w->roots.n; i++) {
        if (i) il_buf_putc(out, ',');
        write_tree(&wr, w->roots.v[i]);
    }
    il_buf_putc(out, ']');
    il_vec_free(wr.queue);
    free(wr.seen);
}

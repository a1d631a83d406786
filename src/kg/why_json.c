/* The proof trees of `.why` as JSON (why.h; the shape is documented in docs/server.md,
 * "Proof trees"): one tree per row, a conclusion written out in full the first time it
 * appears in the result (rows in order) and as a `ref` to its id afterwards, so the
 * output grows with the proofs' DAG, not with the rows times their shared sub-proofs. */
#include <stdlib.h>
#include <string.h>

#include "base/json_str.h"
#include "iql/print.h"
#include "kg/why.h"
#include "plan/build.h"
#include "value/print.h"

typedef struct writer {
    const why_ctx *w;
    il_buf *out;
    bool *written; /* per node: written out in full already */
} writer;

static void json_cstr(il_buf *b, const char *s) {
    il_json_str(b, s, strlen(s));
}

static const val_t *node_vals(const why_ctx *w, uint32_t id) {
    return &w->vals.v[w->nodes.v[id].vals];
}

static void atom_text(const why_ctx *w, uint32_t id, il_buf *t) {
    const why_node *n = &w->nodes.v[id];
    il_buf_printf(t, "%s(", w->rels.v[n->rel]);
    for (uint32_t i = 0; i < n->arity; i++) {
        if (i) il_buf_puts(t, ", ");
        val_fmt_display(node_vals(w, id)[i], t);
    }
    il_buf_putc(t, ')');
}

/* "atom":"..","relation":"..","tuple":[..] */
static void atom_fields(writer *wr, uint32_t id) {
    const why_ctx *w = wr->w;
    const why_node *n = &w->nodes.v[id];
    il_buf t;
    il_buf_init(&t);
    atom_text(w, id, &t);
    il_buf_puts(wr->out, ",\"atom\":");
    il_json_str(wr->out, t.data, t.len);
    il_buf_free(&t);
    il_buf_puts(wr->out, ",\"relation\":");
    json_cstr(wr->out, w->rels.v[n->rel]);
    il_buf_puts(wr->out, ",\"tuple\":[");
    for (uint32_t i = 0; i < n->arity; i++) {
        if (i) il_buf_putc(wr->out, ',');
        val_fmt_json(node_vals(w, id)[i], wr->out);
    }
    il_buf_putc(wr->out, ']');
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

static bool has_call(const iql_term *t) {
    if (t->kind == IQL_T_CALL) return true;
    if (t->kind == IQL_T_ARITH) return has_call(t->u.arith.lhs) || has_call(t->u.arith.rhs);
    return false;
}

static void side_value(writer *wr, int32_t col, const iql_term *t, const val_t *row) {
    if (col >= 0)
        val_fmt_json(row[col], wr->out);
    else if (plan_term_is_const(t))
        val_fmt_json(plan_const_value(t), wr->out);
    else
        il_buf_puts(wr->out, "null");
}

static void write_node(writer *wr, uint32_t id, uint32_t depth);

/* The literals of one instance: atoms as nodes, negations and comparisons as leaves. */
static void write_children(writer *wr, const why_deriv *d, uint32_t depth) {
    const why_ctx *w = wr->w;
    const why_clause *c = &w->clauses.v[d->clause];
    const val_t *row = &w->vals.v[d->vals];
    il_buf *o = wr->out;
    il_buf_puts(o, ",\"children\":[");
    uint32_t child = 0;
    for (uint32_t i = 0; i < c->src->nbody; i++) {
        const iql_literal *l = &c->src->body[i];
        const why_lit *wl = &c->lits[i];
        if (i) il_buf_putc(o, ',');
        if (l->kind == IQL_LIT_ATOM) {
            if (child < d->nchild)
                write_node(wr, w->children.v[d->child_off + child++], depth + 1);
            else
                il_buf_puts(o, "null");
            continue;
        }
        il_buf t;
        il_buf_init(&t);
        if (l->kind == IQL_LIT_NEG) {
            il_buf_printf(&t, "%s(", l->atom.rel);
            for (uint32_t j = 0; j < l->atom.nargs; j++) {
                if (j) il_buf_puts(&t, ", ");
                if (wl->arg_col[j] >= 0)
                    val_fmt_display(row[wl->arg_col[j]], &t);
                else
                    iql_fmt_term(l->atom.args[j], &t);
            }
            il_buf_putc(&t, ')');
            il_buf_puts(o, "{\"kind\":\"negation\",\"atom\":");
            il_json_str(o, t.data, t.len);
            il_buf_puts(o, ",\"relation\":");
            json_cstr(o, l->atom.rel);
            il_buf_putc(o, '}');
        } else {
            iql_fmt_literal(l, &t);
            il_buf_printf(o, "{\"kind\":\"%s\",\"literal\":",
                          has_call(l->lhs) || has_call(l->rhs) ? "builtin" : "comparison");
            il_json_str(o, t.data, t.len);
            il_buf_puts(o, ",\"lhs\":");
            side_value(wr, wl->lhs_col, l->lhs, row);
            il_buf_puts(o, ",\"rhs\":");
            side_value(wr, wl->rhs_col, l->rhs, row);
            il_buf_putc(o, '}');
        }
        il_buf_free(&t);
    }
    il_buf_putc(o, ']');
}

static void rule_fields(writer *wr, const why_clause *c) {
    il_buf t;
    il_buf_init(&t);
    iql_fmt_rule(c->src, &t);
    il_buf_puts(wr->out, ",\"rule\":");
    il_json_str(wr->out, t.data, t.len);
    il_buf_free(&t);
    il_buf_printf(wr->out, ",\"clause\":%u", c->number);
}

static void write_deriv(writer *wr, const why_deriv *d, uint32_t depth) {
    const why_ctx *w = wr->w;
    const why_clause *c = &w->clauses.v[d->clause];
    const val_t *row = &w->vals.v[d->vals];
    il_buf *o = wr->out;
    if (!c->is_agg) {
        il_buf_puts(o, "{\"kind\":\"rule\"");
        rule_fields(wr, c);
        il_buf_puts(o, ",\"bindings\":");
        bindings(wr, c, row, 0, c->nout);
        write_children(wr, d, depth);
        il_buf_putc(o, '}');
        return;
    }
    il_buf_puts(o, "{\"kind\":\"aggregate\"");
    rule_fields(wr, c);
    il_buf_puts(o, ",\"aggregates\":[");
    bool first = true;
    for (uint32_t i = 0; i < c->src->head.nargs; i++) {
        const iql_term *t = c->src->head.args[i];
        if (t->kind != IQL_T_AGG) continue;
        il_buf text;
        il_buf_init(&text);
        iql_fmt_term(t, &text);
        if (!first) il_buf_putc(o, ',');
        first = false;
        il_json_str(o, text.data, text.len);
        il_buf_free(&text);
    }
    il_buf_puts(o, "],\"group\":");
    bindings(wr, c, row, 0, c->nseed);
    il_buf_printf(o, ",\"input_count\":%llu,\"inputs\":[", (unsigned long long)d->ninputs);
    uint32_t shown = 0;
    for (uint32_t in = d->first_input; in != WHY_NONE; in = w->derivs.v[in].next) {
        const why_deriv *id = &w->derivs.v[in];
        if (shown++) il_buf_putc(o, ',');
        il_buf_puts(o, "{\"bindings\":");
        bindings(wr, c, &w->vals.v[id->vals], 0, c->nout);
        write_children(wr, id, depth);
        il_buf_putc(o, '}');
    }
    il_buf_printf(o, "],\"sampled\":%s}", shown < d->ninputs ? "true" : "false");
}

static void write_node(writer *wr, uint32_t id, uint32_t depth) {
    const why_ctx *w = wr->w;
    const why_node *n = &w->nodes.v[id];
    il_buf *o = wr->out;
    if (n->kind == WN_FACT) {
        il_buf_puts(o, "{\"kind\":\"fact\"");
        atom_fields(wr, id);
        il_buf_putc(o, '}');
        return;
    }
    if (n->kind == WN_TRUNCATED || depth > w->max_depth || o->len > WHY_MAX_JSON_BYTES) {
        il_buf_puts(o, "{\"kind\":\"truncated\"");
        atom_fields(wr, id);
        il_buf_putc(o, '}');
        return;
    }
    if (wr->written[id]) {
        il_buf_printf(o, "{\"kind\":\"ref\",\"id\":%u", id);
        il_buf t;
        il_buf_init(&t);
        atom_text(w, id, &t);
        il_buf_puts(o, ",\"atom\":");
        il_json_str(o, t.data, t.len);
        il_buf_free(&t);
        il_buf_putc(o, '}');
        return;
    }
    wr->written[id] = true;
    il_buf_printf(o, "{\"kind\":\"derived\",\"id\":%u", id);
    atom_fields(wr, id);
    il_buf_puts(o, ",\"derivations\":[");
    uint32_t k = 0;
    for (uint32_t d = n->first; d != WHY_NONE; d = w->derivs.v[d].next) {
        if (!w->derivs.v[d].kept) continue;
        if (k++) il_buf_putc(o, ',');
        write_deriv(wr, &w->derivs.v[d], depth);
    }
    il_buf_printf(o, "],\"more\":%s}", n->more ? "true" : "false");
}

void why_json(const why_ctx *w, il_buf *out) {
    writer wr = {.w = w, .out = out};
    wr.written = calloc(w->nodes.n + 1, sizeof *wr.written);
    il_buf_putc(out, '[');
    for (uint32_t i = 0; i < w->roots.n; i++) {
        uint32_t id = w->roots.v[i];
        const why_node *row = &w->nodes.v[id];
        if (i) il_buf_putc(out, ',');
        il_buf_puts(out, "{\"row\":[");
        for (uint32_t j = 0; j < row->arity; j++) {
            if (j) il_buf_putc(out, ',');
            val_fmt_json(w->vals.v[row->vals + j], out);
        }
        il_buf_puts(out, "],\"proof\":");
        if (row->kind != WN_QUERY) {
            write_node(&wr, id, 1);
        } else {
            uint32_t d = row->first;
            while (d != WHY_NONE && !w->derivs.v[d].kept) d = w->derivs.v[d].next;
            if (d == WHY_NONE) {
                il_buf_puts(out, "null");
            } else {
                const why_deriv *dv = &w->derivs.v[d];
                const why_clause *c = &w->clauses.v[dv->clause];
                il_buf_puts(out, "{\"kind\":\"query\",\"bindings\":");
                bindings(&wr, c, &w->vals.v[dv->vals], 0, c->nout);
                write_children(&wr, dv, 0);
                il_buf_putc(out, '}');
            }
        }
        il_buf_putc(out, '}');
    }
    il_buf_putc(out, ']');
    free(wr.written);
}

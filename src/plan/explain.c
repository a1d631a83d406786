/* Text of a compiled program for `.debug`: the predicates after the demand rewrite and,
 * stratum by stratum, each clause as the operations it runs (index seeks with their
 * bound columns, probes, filters, assignments, the head). */
#include <stdio.h>

#include "exec/builtin.h"
#include "plan/explain.h"
#include "value/print.h"

static void fmt_expr(const plan_clause *c, const plan_expr *e, il_buf *out) {
    switch (e->kind) {
    case PX_SLOT:
        il_buf_puts(out, c->slot_names[e->slot]);
        break;
    case PX_CONST:
        val_fmt_display(e->c, out);
        break;
    case PX_ARITH:
        il_buf_putc(out, '(');
        fmt_expr(c, e->l, out);
        il_buf_printf(out, " %c ", e->op);
        fmt_expr(c, e->r, out);
        il_buf_putc(out, ')');
        break;
    case PX_CALL:
        il_buf_printf(out, "%s(", e->fn ? e->fn->name : "?");
        for (uint32_t i = 0; i < e->nargs; i++) {
            if (i) il_buf_puts(out, ", ");
            fmt_expr(c, e->args[i], out);
        }
        il_buf_putc(out, ')');
        break;
    }
}

static const char *cmp_text(iql_cmp_op op) {
    static const char *const t[] = {"=", "!=", "<", "<=", ">", ">="};
    return t[op];
}

static void fmt_op(const plan_program *p, const plan_clause *c, const plan_op *op, il_buf *out) {
    switch (op->kind) {
    case POP_SCAN:
    case POP_NEG: {
        const plan_pred *pp = &p->preds.v[op->pred];
        il_buf_printf(out, "%s %s%s", op->kind == POP_SCAN ? "Seek" : "Not", pp->name,
                      op->version == PV_DELTA ? " (delta)" : "");
        if (op->nprefix) {
            il_buf_puts(out, " on [");
            for (uint32_t i = 0; i < op->nprefix; i++) {
                uint32_t col = op->order[i];
                il_buf_printf(out, "%s%u=", i ? ", " : "", col);
                if (op->prefix_slot[col] >= 0)
                    il_buf_puts(out, c->slot_names[op->prefix_slot[col]]);
                else
                    val_fmt_display(op->prefix_const[col], out);
            }
            il_buf_putc(out, ']');
        } else {
            il_buf_puts(out, " (full scan)");
        }
        bool any = false;
        for (uint32_t i = op->nprefix; i < op->arity; i++) {
            uint32_t col = op->order[i];
            if (op->act[col] != PCOL_BIND) continue;
            il_buf_printf(out, "%s%s", any ? ", " : " -> ", c->slot_names[op->act_slot[col]]);
            any = true;
        }
        break;
    }
    case POP_FILTER:
        il_buf_puts(out, "Filter ");
        if (op->mode == PCMP_CONST_CONST) {
            il_buf_puts(out, op->result ? "true" : "false");
            break;
        }
        fmt_expr(c, op->lhs, out);
        il_buf_printf(out, " %s ", cmp_text(op->cmp));
        fmt_expr(c, op->rhs, out);
        break;
    case POP_ASSIGN:
        il_buf_printf(out, "Assign %s = ", c->slot_names[op->slot]);
        fmt_expr(c, op->rhs, out);
        break;
    case POP_HNSW:
        il_buf_printf(out, "HnswSearch k=%u ef=%u query=", op->k, op->ef);
        fmt_expr(c, op->rhs, out);
        for (uint32_t k = 0; k < 2; k++)
            il_buf_printf(out, "%s%s", k ? ", " : " -> ",
                          op->act_slot[k] != UINT32_MAX ? c->slot_names[op->act_slot[k]] : "_");
        break;
    }
}

static void fmt_head(const plan_program *p, const plan_clause *c, il_buf *out) {
    il_buf_printf(out, "Emit %s(", p->preds.v[c->head_pred].name);
    if (c->is_agg) {
        for (uint32_t i = 0; i < c->ngroup; i++)
            il_buf_printf(out, "%s%s", i ? ", " : "", c->slot_names[c->group_slots[i]]);
        il_buf_printf(out, "%s%u aggregate(s)", c->ngroup ? ", " : "", c->naggs);
    } else {
        for (uint32_t i = 0; i < c->nhead; i++) {
            if (i) il_buf_puts(out, ", ");
            fmt_expr(c, c->head[i], out);
        }
    }
    il_buf_putc(out, ')');
}

void plan_explain(const plan_program *p, il_buf *out) {
    il_buf_printf(out, "  Predicates: %u\n", p->preds.n);
    for (uint32_t i = 0; i < p->preds.n; i++) {
        const plan_pred *pp = &p->preds.v[i];
        if (pp->kind == PP_BASE)
            il_buf_printf(out, "    %s (stored, %zu tuples)\n", pp->name,
                          pp->stored ? rel_count(pp->stored) : (size_t)0);
        else
            il_buf_printf(out, "    %s (derived, arity %u)\n", pp->name, pp->arity);
    }
    uint32_t shown = 0;
    for (uint32_t s = 0; s < p->strata.n; s++) {
        const plan_stratum *st = &p->strata.v[s];
        if (!st->nclauses) continue;
        il_buf_printf(out, "\n  Stratum %u%s:", ++shown, st->recursive ? " (recursive)" : "");
        for (uint32_t i = 0; i < st->npreds; i++)
            il_buf_printf(out, " %s", p->preds.v[st->preds[i]].name);
        il_buf_putc(out, '\n');
        for (uint32_t k = 0; k < st->nclauses; k++) {
            const plan_clause *c = &p->clauses.v[st->clauses[k]];
            il_buf_printf(out, "    Clause %u%s:\n", k + 1,
                          c->delta_op >= 0    ? " (semi-naive variant)"
                          : c->recursive_base ? " (runs only as its semi-naive variants)"
                                              : "");
            for (uint32_t o = 0; o < c->nops; o++) {
                il_buf_printf(out, "      %u. ", o + 1);
                fmt_op(p, c, &c->ops[o], out);
                il_buf_putc(out, '\n');
            }
            il_buf_puts(out, "      => ");
            fmt_head(p, c, out);
            il_buf_putc(out, '\n');
        }
    }
}

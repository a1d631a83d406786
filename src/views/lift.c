/* Lifting a standing query's goal constants (lift.h). The rewrite is done on the
 * text, so that everything else reaches the view exactly as the client wrote it (the
 * tree printer would turn the float 2.0 into 2), and then checked by parsing the result:
 * any doubt leaves the query as written, which is always correct, only unshared. */
#include "views/lift.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "iql/lexer.h"
#include "iql/parser.h"

/* A lifted variable's name; a query that already mentions the prefix is not lifted. */
#define LIFT_PREFIX "_Lifted"

static bool liftable(const iql_term *t) {
    return t->kind == IQL_T_INT || t->kind == IQL_T_STRING;
}

static val_t constant(const iql_term *t) {
    return t->kind == IQL_T_INT ? val_int(t->u.ival) : val_str(t->u.str.ptr, t->u.str.len);
}

static bool parse_query(il_arena *a, const char *text, size_t len, iql_stmt *st) {
    const char *err;
    return iql_parse(a, text, len, st, &err) && st->kind == IQL_STMT_QUERY;
}

/* The rewritten text, or false when the goal is not the first literal as written or
 * has nothing to lift. */
static bool rewrite(const char *q, size_t len, const iql_query *goalq, il_buf *out, uint32_t *cols,
                    uint32_t *nkeys) {
    const iql_atom *goal = &goalq->goal;
    size_t p = 0;
    if (p >= len || q[p] != '?') return false;
    p++;
    while (p < len && iql_lex_space((unsigned char)q[p])) p++;
    size_t name = p;
    while (p < len && iql_lex_ident((unsigned char)q[p])) p++;
    if (p - name != strlen(goal->rel) || memcmp(q + name, goal->rel, p - name) != 0) return false;
    while (p < len && iql_lex_space((unsigned char)q[p])) p++;
    if (p >= len || q[p] != '(') return false;
    size_t close = iql_lex_match_paren(q, p, len);
    if (close >= len) return false;
    il_buf_put(out, q, p + 1);
    size_t b = p + 1;
    for (uint32_t i = 0; i < goal->nargs; i++) {
        if (b > close) return false;
        size_t e = iql_lex_split(q, b, close, IQL_SPLIT_ANGLE);
        if (liftable(goal->args[i])) {
            il_buf_printf(out, " %s%u", LIFT_PREFIX, i);
            cols[(*nkeys)++] = i;
        } else {
            il_buf_put(out, q + b, e - b);
        }
        if (e < close) il_buf_putc(out, ',');
        b = e + 1;
    }
    if (b <= close) return false; /* more pieces than the parser saw */
    il_buf_put(out, q + close, len - close);
    return *nkeys > 0;
}

/* The rewritten query must parse to the same query with variables where the lifted
 * constants were. */
static bool same_but_lifted(il_arena *a, const il_buf *text, const iql_query *orig,
                            const uint32_t *cols, uint32_t nkeys) {
    iql_stmt st;
    if (!parse_query(a, text->data, text->len, &st)) return false;
    const iql_query *nq = &st.u.query;
    if (strcmp(nq->goal.rel, orig->goal.rel) != 0 || nq->goal.nargs != orig->goal.nargs ||
        nq->nextra != orig->nextra || nq->nsort != 0 || nq->limit >= 0 || nq->offset != 0)
        return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < nq->goal.nargs; i++) {
        const iql_term *t = nq->goal.args[i];
        if (k < nkeys && cols[k] == i) {
            char want[32];
            snprintf(want, sizeof want, "%s%u", LIFT_PREFIX, i);
            if (t->kind != IQL_T_VAR || strcmp(t->u.var, want) != 0) return false;
            k++;
        } else if (t->kind != orig->goal.args[i]->kind) {
            return false;
        }
    }
    return k == nkeys;
}

void view_lift(const char *query, size_t len, view_lifted *out) {
    while (len && iql_lex_space((unsigned char)*query)) query++, len--;
    while (len && iql_lex_space((unsigned char)query[len - 1])) len--;
    memset(out, 0, sizeof *out);
    il_arena a;
    il_arena_init(&a);
    il_buf text;
    il_buf_init(&text);
    iql_stmt st;
    bool lifted = false;
    uint32_t *cols = NULL, nkeys = 0;
    if (parse_query(&a, query, len, &st) && !memmem(query, len, LIFT_PREFIX, strlen(LIFT_PREFIX))) {
        const iql_query *q = &st.u.query;
        cols = calloc(q->goal.nargs + 1, sizeof *cols);
        lifted = q->nsort == 0 && q->limit < 0 && q->offset == 0 &&
                 rewrite(query, len, q, &text, cols, &nkeys) &&
                 same_but_lifted(&a, &text, q, cols, nkeys);
        if (lifted) {
            out->consts = calloc(nkeys, sizeof *out->consts);
            for (uint32_t k = 0; k < nkeys; k++) out->consts[k] = constant(q->goal.args[cols[k]]);
        }
    }
    if (lifted) {
        out->text = strndup(text.data, text.len);
        out->nkeys = nkeys;
        out->cols = cols;
    } else {
        out->text = strndup(query, len);
        free(cols);
    }
    il_buf_free(&text);
    il_arena_destroy(&a);
}

void view_lifted_free(view_lifted *l) {
    free(l->text);
    free(l->cols);
    free(l->consts);
    memset(l, 0, sizeof *l);
}

/* libFuzzer target for the IQL front end: the script reader splits the input into
 * statements, each is parsed, and a parsed rule or query is printed back. Nothing may
 * crash, leak or hang, whatever the bytes. A statement read directly as a ground fact
 * must give the tree the general path gives it (the same text with a comment after it
 * goes that way). Run with `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "iql/parser.h"
#include "iql/print.h"
#include "iql/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_term(const iql_term *a, const iql_term *b) {
    if (a->kind != b->kind) return false;
    if (a->kind == IQL_T_INT) return a->u.ival == b->u.ival;
    if (a->kind == IQL_T_STRING)
        return a->u.str.len == b->u.str.len &&
               memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0;
    return false; /* a ground fact holds nothing else */
}

/* The general path's tree of a statement the direct reading took. */
static void check_direct(il_arena *a, const char *text, size_t len, const iql_stmt *st) {
    char *general = malloc(len + 4);
    memcpy(general, text, len);
    memcpy(general + len, " //", 3);
    iql_stmt g;
    const char *err;
    bool ok = iql_parse(a, general, len + 3, &g, &err);
    bool same = ok && g.kind == st->kind && strcmp(g.u.facts.rel, st->u.facts.rel) == 0 &&
                g.u.facts.bulk == st->u.facts.bulk && g.u.facts.ntuples == 1 &&
                st->u.facts.ntuples == 1 && g.u.facts.tuples[0].n == st->u.facts.tuples[0].n;
    for (uint32_t k = 0; same && k < g.u.facts.tuples[0].n; k++)
        same = same_term(g.u.facts.tuples[0].terms[k], st->u.facts.tuples[0].terms[k]);
    if (!same) {
        fprintf(stderr, "ground fact read directly otherwise than by the general path: %.*s\n",
                (int)len, text);
        abort();
    }
    free(general);
}

static bool parse(il_arena *a, const char *text, size_t len, iql_stmt *st, const char **err) {
    uint64_t direct = iql_parse_fact_count();
    bool ok = iql_parse(a, text, len, st, err);
    if (ok && iql_parse_fact_count() != direct) check_direct(a, text, len, st);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    iql_script sc;
    iql_script_init(&sc, (const char *)data, size);
    iql_script_item it;
    il_arena a;
    il_arena_init(&a);
    il_buf out;
    il_buf_init(&out);
    while (iql_script_next(&sc, &it)) {
        iql_stmt st;
        const char *err;
        if (parse(&a, it.text, it.len, &st, &err)) {
            switch (st.kind) {
            case IQL_STMT_PERSIST_RULE:
            case IQL_STMT_SESSION_RULE:
            case IQL_STMT_COND_DELETE:
                iql_fmt_rule(&st.u.rule, &out);
                break;
            case IQL_STMT_QUERY:
                iql_fmt_atom(&st.u.query.goal, &out);
                break;
            default:
                break;
            }
        }
        il_buf_clear(&out);
        il_arena_reset(&a);
    }
    /* the whole input as one statement too, newlines and all */
    iql_stmt st;
    const char *err;
    parse(&a, (const char *)data, size, &st, &err);
    il_buf_free(&out);
    il_arena_destroy(&a);
    iql_script_free(&sc);
    return 0;
}

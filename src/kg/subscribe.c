/* Standing queries through the embedding API (il_subscribe): the engine's families
 * (views/family.h) behind the public handle, each subscription's column headers as its
 * query's table names them, and the check of a standing query's text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "iql/parser.h"
#include "iql/script.h"
#include "kg/kg.h"
#include "views/family.h"

/* The column headers of `?query` as a query over persistent data names them: arity
 * malloc'ed strings, and a NULL after them. */
static char **headers(il_session *ses, const char *q, size_t len, uint32_t arity) {
    il_arena a;
    il_arena_init(&a);
    iql_stmt st;
    const char *perr;
    char **cols = calloc(arity + 1, sizeof *cols);
    query_shape shape;
    memset(&shape, 0, sizeof shape);
    bool ok = iql_parse(&a, q, len, &st, &perr) && st.kind == IQL_STMT_QUERY;
    if (ok) {
        kg_query_opts opts = {.with_session = false};
        kg_query_shape(ses, &st.u.query, opts, &a, &shape);
    }
    for (uint32_t i = 0; i < arity; i++) {
        if (ok && i < shape.rule.head.nargs && shape.headers[i]) {
            cols[i] = strdup(shape.headers[i]);
        } else {
            char name[32];
            snprintf(name, sizeof name, "col%u", i);
            cols[i] = strdup(name);
        }
    }
    il_arena_destroy(&a);
    return cols;
}

/* The views of the queries' new families, computed on one pin of the session's graph
 * with the serializer released, and caught up with the live graph once it is retaken:
 * built[i] NULL when query i's family exists, or the graph cannot be pinned or the live
 * graph cannot take the view (the member then joins as usual). False, with *failed and
 * *why (malloc'ed), when a view cannot be opened: nothing is kept. */
static bool build_beside(il_session *s, size_t n, const char *const *queries, const size_t *lens,
                         const il_serializer *ser, view_t **built, size_t *failed, char **why) {
    bool *missing = calloc(n + 1, sizeof *missing), any = false;
    for (size_t i = 0; i < n; i++)
        any |= missing[i] =
            !view_family_exists(s->e->families, il_session_graph(s), queries[i], lens[i]);
    bool ok = true;
    if (any && il_session_pin(s)) {
        ser->release(ser->ctx);
        kg_pin_enter(s->kg);
        for (size_t i = 0; i < n && ok; i++) {
            if (!missing[i]) continue;
            const char *text = NULL;
            built[i] = view_family_build(s, queries[i], lens[i], &text);
            if (!built[i]) {
                ok = false;
                *failed = i;
                *why = strdup(text ? text : "the view cannot be opened");
            }
        }
        kg_pin_leave(s->kg);
        ser->retake(ser->ctx);
        for (size_t i = 0; i < n; i++) {
            if (built[i] && (!ok || !kg_pin_adopt_view(s, built[i]))) {
                view_close(built[i]); /* still the pinned copy's, which goes at the unpin */
                built[i] = NULL;
            }
        }
        il_session_unpin(s);
        kg_pins_collect(s->e);
    }
    free(missing);
    return ok;
}

il_sub *il_subscribe(il_session *s, const char *query, size_t len, void *ctx, char **err) {
    return il_subscribe_beside(s, query, len, ctx, NULL, err);
}

il_sub *il_subscribe_beside(il_session *s, const char *query, size_t len, void *ctx,
                            const il_serializer *ser, char **err) {
    il_sub *sub = NULL;
    size_t failed;
    return il_subscribe_all(s, 1, &query, &len, ctx, ser, &sub, &failed, err) ? sub : NULL;
}

bool il_subscribe_all(il_session *s, size_t n, const char *const *queries, const size_t *lens,
                      void *ctx, const il_serializer *ser, il_sub **subs, size_t *failed,
                      char **err) {
    if (err) *err = NULL;
    if (!s->pinned_live) kg_pins_collect(s->e); /* what an unpin left of s goes first */
    view_t **built = calloc(n + 1, sizeof *built);
    char *why = NULL;
    bool ok = !ser || s->pinned_live || build_beside(s, n, queries, lens, ser, built, failed, &why);
    for (size_t i = 0; i < n && ok; i++) {
        const char *text = NULL;
        /* a family opened by an earlier query of these closes a later one's view */
        subs[i] = view_member_join(s->e->families, s, il_session_graph(s), queries[i], lens[i],
                                   built[i], &text);
        built[i] = NULL;
        if (!subs[i]) {
            ok = false;
            *failed = i;
            if (text) why = strdup(text);
            for (size_t k = i + 1; k < n; k++) view_close(built[k]);
            while (i--) il_sub_close(subs[i]);
            break;
        }
        subs[i]->ctx = ctx;
        subs[i]->cols = headers(s, queries[i], lens[i], view_member_arity(subs[i]));
    }
    free(built);
    if (err)
        *err = why;
    else
        free(why);
    return ok;
}

void il_sub_close(il_sub *sub) {
    view_member_leave(sub);
}

void *il_sub_ctx(const il_sub *sub) {
    return sub->ctx;
}

uint32_t il_sub_arity(const il_sub *sub) {
    return view_member_arity(sub);
}

const char *il_sub_column(const il_sub *sub, uint32_t i) {
    return i < view_member_arity(sub) ? sub->cols[i] : NULL;
}

const char *il_sub_error(const il_sub *sub) {
    return view_member_error(sub);
}

size_t il_sub_rows(const il_sub *sub, il_value **rows) {
    return view_member_rows(sub, rows);
}

il_sub *il_subs_route(il_engine *e, bool *error_changed) {
    bool changed = false;
    il_sub *touched = view_families_route(e->families, &changed);
    if (error_changed && changed) *error_changed = true;
    return touched;
}

il_sub *il_sub_next_touched(const il_sub *sub) {
    return sub->touched_next;
}

il_sub_delta il_sub_changes(const il_sub *sub) {
    il_sub_delta d;
    view_member_changes(sub, &d.added, &d.nadded, &d.removed, &d.nremoved);
    return d;
}

void il_sub_clear(il_sub *sub) {
    view_member_clear(sub);
    view_member_drop_held(sub);
}

void il_sub_hold(il_sub *sub) {
    view_member_hold(sub);
}

size_t il_sub_held(const il_sub *sub) {
    return sub->nheld_add + sub->nheld_rem;
}

void il_engine_subscriptions(il_engine *e, uint64_t *views, uint64_t *subs) {
    if (views) *views = __atomic_load_n(&e->families->nviews, __ATOMIC_RELAXED);
    if (subs) *subs = __atomic_load_n(&e->families->nmembers, __ATOMIC_RELAXED);
}

/* *why = text followed by detail (may be NULL). */
static void refuse(char **why, const char *text, const char *detail) {
    size_t n = strlen(text) + (detail ? strlen(detail) : 0) + 1;
    *why = malloc(n);
    snprintf(*why, n, "%s%s", text, detail ? detail : "");
}

char *il_standing_query(const char *q, size_t len, char **why) {
    *why = NULL;
    iql_script sc;
    iql_script_init(&sc, q, len);
    iql_script_item it;
    char *text = NULL;
    if (!iql_script_next(&sc, &it) || it.len == 0 || it.text[0] != '?')
        refuse(why, "must start with '?'", NULL);
    else if (it.unterminated)
        refuse(why, "does not parse: unterminated statement (unbalanced delimiters)", NULL);
    else
        text = strndup(it.text, it.len);
    if (text && iql_script_next(&sc, &it)) {
        refuse(why, "must be a single query", NULL);
        free(text);
        text = NULL;
    }
    iql_script_free(&sc);
    if (!text) return NULL;
    il_arena a;
    il_arena_init(&a);
    iql_stmt st;
    const char *perr = NULL;
    if (!iql_parse(&a, text, strlen(text), &st, &perr) || st.kind != IQL_STMT_QUERY) {
        refuse(why, "does not parse: ", perr ? perr : "not a query");
    } else if (st.u.query.limit >= 0 || st.u.query.offset > 0 || st.u.query.nsort > 0) {
        refuse(why, "uses limit/offset or sort annotations, which a subscription cannot have",
               NULL);
    } else {
        il_arena_destroy(&a);
        return text;
    }
    il_arena_destroy(&a);
    free(text);
    return NULL;
}

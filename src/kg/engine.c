/* The embedding API (include/inputlayer.h): engines, sessions, statement execution. */
#include <stdlib.h>
#include <string.h>

#include "iql/parser.h"
#include "kg/kg.h"

il_engine *il_engine_open(const char *data_dir, char **err) {
    if (err) *err = NULL;
    (void)data_dir;
    il_engine *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->started = time(NULL);
    kg_graph_create(e, "default");
    return e;
}

void il_engine_close(il_engine *e) {
    if (!e) return;
    while (e->sessions.n) il_session_close(e->sessions.v[e->sessions.n - 1]);
    while (e->graphs.n) kg_graph_drop(e, e->graphs.v[e->graphs.n - 1]);
    il_vec_free(e->graphs);
    il_vec_free(e->sessions);
    free(e);
}

il_session *il_session_open(il_engine *e) {
    il_session *s = calloc(1, sizeof *s);
    s->e = e;
    s->kg = kg_graph_find(e, "default");
    il_arena_init(&s->rules_arena);
    il_vec_push(e->sessions, s);
    return s;
}

void il_session_close(il_session *s) {
    if (!s) return;
    il_engine *e = s->e;
    for (uint32_t i = 0; i < e->sessions.n; i++) {
        if (e->sessions.v[i] != s) continue;
        e->sessions.v[i] = e->sessions.v[--e->sessions.n];
        break;
    }
    sess_clear(s, NULL, NULL);
    il_arena_destroy(&s->rules_arena);
    free(s);
}

il_result *il_execute(il_session *s, const char *text, size_t len) {
    il_arena a;
    il_arena_init(&a);
    iql_stmt st;
    const char *err = NULL;
    il_result *r;
    if (!iql_parse(&a, text, len, &st, &err))
        r = res_parse_error(err ? err : "Parse error");
    else
        r = kg_exec_stmt(s, &st, &a);
    il_arena_destroy(&a);
    return r;
}

/* Session state: session facts (distinct, in insertion order) and session rules. */
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"

void sess_clear(il_session *s, size_t *nfacts, size_t *nrules) {
    if (nfacts) *nfacts = sess_fact_count(s);
    if (nrules) *nrules = s->rules.n;
    for (uint32_t i = 0; i < s->facts.n; i++) {
        sess_facts *f = s->facts.v[i];
        free(f->rel);
        il_vec_free(f->vals);
        rel_free(f->set);
        free(f);
    }
    il_vec_free(s->facts);
    il_vec_free(s->rules);
    il_vec_free(s->schemas);
    il_arena_destroy(&s->rules_arena);
    il_arena_init(&s->rules_arena);
}

sess_facts *sess_facts_find(il_session *s, const char *rel) {
    for (uint32_t i = 0; i < s->facts.n; i++)
        if (strcmp(s->facts.v[i]->rel, rel) == 0) return s->facts.v[i];
    return NULL;
}

bool sess_fact_add(il_session *s, const char *rel, const val_t *t, uint32_t arity) {
    sess_facts *f = NULL;
    for (uint32_t i = 0; i < s->facts.n; i++)
        if (strcmp(s->facts.v[i]->rel, rel) == 0 && s->facts.v[i]->arity == arity)
            f = s->facts.v[i];
    if (!f) {
        f = calloc(1, sizeof *f);
        f->rel = strdup(rel);
        f->arity = arity;
        f->set = rel_new(arity);
        il_vec_push(s->facts, f);
    }
    if (!rel_insert(f->set, t)) return false;
    for (uint32_t i = 0; i < arity; i++) il_vec_push(f->vals, t[i]);
    if (!arity) il_vec_push(f->vals, 0);
    return true;
}

size_t sess_fact_count(const il_session *s) {
    size_t n = 0;
    for (uint32_t i = 0; i < s->facts.n; i++) n += rel_count(s->facts.v[i]->set);
    return n;
}

const iql_schema *sess_schema_find(const il_session *s, const char *rel) {
    for (uint32_t i = s->schemas.n; i-- > 0;)
        if (strcmp(s->schemas.v[i]->rel, rel) == 0) return s->schemas.v[i];
    return NULL;
}

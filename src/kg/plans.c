/* The plan cache: compiled query programs by query text or shape (kg.h), per knowledge
 * graph. A program is reused while the graph's rules and the set of stored relations are
 * unchanged and the stored data has not grown or shrunk much (its join order was chosen
 * from sizes). Only the compiled program is kept: every run starts from empty derived
 * relations. */
#include <stdlib.h>
#include <string.h>

#include "kg/kg.h"
#include "plan/plan.h"

/* Sum of the stored facts a program reads: a change of more than 4x either way means
 * its join order may be stale. */
static size_t stored_tuples(const plan_program *p) {
    size_t n = 0;
    if (!p) return 0;
    for (uint32_t i = 0; i < p->preds.n; i++)
        if (p->preds.v[i].kind == PP_BASE && p->preds.v[i].stored)
            n += rel_count(p->preds.v[i].stored);
    return n;
}

static void program_free(kg_plan_entry *e) {
    if (e->prog) {
        plan_program_free(e->prog);
        free(e->prog);
        e->prog = NULL;
    }
    plan_params_free(&e->params);
    free(e->values);
    e->values = NULL;
}

static void entry_free(kg_plan_entry *e) {
    free(e->key);
    program_free(e);
    il_intern_scope_free(e->strings);
    memset(e, 0, sizeof *e);
}

kg_plan_entry *kg_plan_lookup(kg_graph *g, const char *key) {
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++) {
        kg_plan_entry *e = &g->plans[i];
        if (!e->key || strcmp(e->key, key) != 0) continue;
        /* the version first: after `.rel drop` the program's stored pointers dangle */
        size_t now = e->version == g->version ? stored_tuples(e->prog) : 0;
        size_t then = e->stored_tuples;
        if (e->version != g->version || now > then * 4 + 64 || then > now * 4 + 64) {
            entry_free(e);
            return NULL;
        }
        e->used = ++g->plan_clock;
        /* Its constants may be a query's own strings; only reads run inside a scope, and
           anything else may store what the program yields (keys keep query programs and
           others apart today: this holds whatever the keys become). */
        if (e->strings && !il_intern_in_scope()) {
            il_intern_scope_keep(e->strings);
            e->strings = NULL;
        }
        return e;
    }
    return NULL;
}

kg_plan_entry *kg_plan_store(kg_graph *g, const char *key, plan_program *p,
                             il_intern_scope *strings) {
    kg_plan_entry *slot = &g->plans[0];
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++) {
        kg_plan_entry *e = &g->plans[i];
        if (!e->key) {
            slot = e;
            break;
        }
        if (e->used < slot->used) slot = e;
    }
    entry_free(slot);
    slot->key = strdup(key);
    slot->version = g->version;
    slot->stored_tuples = stored_tuples(p);
    slot->used = ++g->plan_clock;
    slot->prog = p;
    slot->strings = strings;
    return slot;
}

void kg_plan_decide(kg_graph *g, kg_plan_entry *e, plan_program *p, plan_params *params) {
    program_free(e);
    e->prog = p;
    if (p) {
        e->params = *params;
        memset(params, 0, sizeof *params);
    } else {
        il_intern_scope_free(e->strings); /* a mark holds no constants */
        e->strings = NULL;
    }
    e->stored_tuples = stored_tuples(p);
    e->used = ++g->plan_clock;
}

void kg_plan_cache_free(kg_graph *g) {
    for (uint32_t i = 0; i < KG_PLAN_CACHE_SIZE; i++) entry_free(&g->plans[i]);
}

/* Stratification of a program: strongly connected components of the predicate
 * dependency graph (Tarjan), emitted dependencies first, so every stratum reads only
 * finished strata and itself. Clauses of a recursive stratum get one semi-naive variant
 * per body atom over the stratum (that atom reads the last round's delta). */
#include <stdlib.h>
#include <string.h>

#include "plan/clause.h"

typedef struct tarjan {
    const plan_program *p;
    uint32_t **adj; /* adjacency lists per predicate */
    uint32_t *nadj;
    uint32_t *index, *low, *stack;
    bool *on_stack;
    uint32_t next_index, sp;
    uint32_t *comp; /* predicate -> component, in emission order */
    uint32_t ncomp;
} tarjan;

#define UNVISITED UINT32_MAX

/* Iterative Tarjan: programs can have long dependency chains. */
static void strongconnect(tarjan *t, uint32_t root) {
    uint32_t n = t->p->preds.n;
    uint32_t *call_v = malloc((n + 1) * sizeof *call_v);
    uint32_t *call_e = malloc((n + 1) * sizeof *call_e);
    uint32_t depth = 0;
    call_v[0] = root;
    call_e[0] = 0;
    t->index[root] = t->low[root] = t->next_index++;
    t->stack[t->sp++] = root;
    t->on_stack[root] = true;
    depth = 1;
    while (depth) {
        uint32_t v = call_v[depth - 1];
        uint32_t *e = &call_e[depth - 1];
        if (*e < t->nadj[v]) {
            uint32_t w = t->adj[v][(*e)++];
            if (t->index[w] == UNVISITED) {
                t->index[w] = t->low[w] = t->next_index++;
                t->stack[t->sp++] = w;
                t->on_stack[w] = true;
                call_v[depth] = w;
                call_e[depth] = 0;
                depth++;
            } else if (t->on_stack[w] && t->index[w] < t->low[v]) {
                t->low[v] = t->index[w];
            }
            continue;
        }
        if (t->low[v] == t->index[v]) {
            uint32_t w;
            do {
                w = t->stack[--t->sp];
                t->on_stack[w] = false;
                t->comp[w] = t->ncomp;
            } while (w != v);
            t->ncomp++;
        }
        depth--;
        if (depth) {
            uint32_t parent = call_v[depth - 1];
            if (t->low[v] < t->low[parent]) t->low[parent] = t->low[v];
        }
    }
    free(call_v);
    free(call_e);
}

void plan_stratify(plan_program *p, const bclause *clauses, uint32_t nclauses) {
    uint32_t n = p->preds.n;
    tarjan t;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.adj = calloc(n + 1, sizeof *t.adj);
    t.nadj = calloc(n + 1, sizeof *t.nadj);
    uint32_t *cap = calloc(n + 1, sizeof *cap);
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t h = c->head_pred;
        for (uint32_t j = 0; j < c->nlits; j++) {
            if (c->lits[j].kind == IQL_LIT_CMP) continue;
            if (t.nadj[h] == cap[h]) {
                cap[h] = cap[h] ? cap[h] * 2 : 4;
                t.adj[h] = realloc(t.adj[h], cap[h] * sizeof *t.adj[h]);
            }
            t.adj[h][t.nadj[h]++] = c->lits[j].pred;
        }
    }
    t.index = malloc((n + 1) * sizeof *t.index);
    t.low = malloc((n + 1) * sizeof *t.low);
    t.stack = malloc((n + 1) * sizeof *t.stack);
    t.on_stack = calloc(n + 1, sizeof *t.on_stack);
    t.comp = malloc((n + 1) * sizeof *t.comp);
    for (uint32_t i = 0; i < n; i++) t.index[i] = UNVISITED;
    for (uint32_t i = 0; i < n; i++)
        if (t.index[i] == UNVISITED) strongconnect(&t, i);

    /* Components are emitted dependencies first: that is the evaluation order. */
    for (uint32_t s = 0; s < t.ncomp; s++) {
        plan_stratum st;
        memset(&st, 0, sizeof st);
        il_vec_push(p->strata, st);
    }
    for (uint32_t i = 0; i < n; i++) {
        plan_stratum *st = &p->strata.v[t.comp[i]];
        st->preds = realloc(st->preds, (st->npreds + 1) * sizeof *st->preds);
        st->preds[st->npreds++] = i;
        p->preds.v[i].stratum = t.comp[i];
    }
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t s = t.comp[c->head_pred];
        plan_stratum *st = &p->strata.v[s];
        for (uint32_t j = 0; j < c->nlits; j++) {
            const blit *l = &c->lits[j];
            if (l->kind == IQL_LIT_CMP || t.comp[l->pred] != s) continue;
            st->recursive = true;
            if (l->kind == IQL_LIT_NEG || c->is_agg) p->unstratified = true;
        }
    }
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t s = t.comp[c->head_pred];
        plan_stratum *st = &p->strata.v[s];
        uint32_t want = 1;
        if (st->recursive)
            for (uint32_t j = 0; j < c->nlits; j++)
                if (c->lits[j].kind == IQL_LIT_ATOM && t.comp[c->lits[j].pred] == s) want++;
        st->clauses = realloc(st->clauses, (st->nclauses + want) * sizeof *st->clauses);
        plan_clause pc;
        plan_compile_clause(p, c, -1, &pc);
        pc.recursive_base = want > 1;
        il_vec_push(p->clauses, pc);
        st->clauses[st->nclauses++] = p->clauses.n - 1;
        if (!st->recursive) continue;
        for (uint32_t j = 0; j < c->nlits; j++) {
            if (c->lits[j].kind != IQL_LIT_ATOM || t.comp[c->lits[j].pred] != s) continue;
            plan_compile_clause(p, c, (int32_t)j, &pc);
            for (uint32_t o = 0; o < pc.nops; o++) {
                const plan_op *op = &pc.ops[o];
                if ((op->kind == POP_SCAN || op->kind == POP_NEG) && op->version == PV_FULL &&
                    t.comp[op->pred] == s)
                    pc.reads_stratum_full = true;
            }
            il_vec_push(p->clauses, pc);
            st->clauses[st->nclauses++] = p->clauses.n - 1;
        }
    }
    /* clauses in program order within each stratum (a stable sort) */
    for (uint32_t s = 0; s < p->strata.n; s++) {
        plan_stratum *st = &p->strata.v[s];
        for (uint32_t i = 1; i < st->nclauses; i++) {
            uint32_t c = st->clauses[i], j = i;
            while (j > 0 && p->clauses.v[st->clauses[j - 1]].order > p->clauses.v[c].order) {
                st->clauses[j] = st->clauses[j - 1];
                j--;
            }
            st->clauses[j] = c;
        }
    }
    for (uint32_t i = 0; i < n; i++) free(t.adj[i]);
    free(t.adj);
    free(t.nadj);
    free(cap);
    free(t.index);
    free(t.low);
    free(t.stack);
    free(t.on_stack);
    free(t.comp);
}

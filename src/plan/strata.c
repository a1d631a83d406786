/* Stratification of a program: strongly connected components of the predicate
 * dependency graph (il_scc), dependencies first, so every stratum reads only
 * finished strata and itself. Clauses of a recursive stratum get one semi-naive variant
 * per body atom over the stratum (that atom reads the last round's delta). */
#include <stdlib.h>
#include <string.h>

#include "base/scc.h"
#include "plan/clause.h"

void plan_stratify(plan_program *p, const bclause *clauses, uint32_t nclauses) {
    uint32_t n = p->preds.n;
    uint32_t **adj = calloc(n + 1, sizeof *adj);
    uint32_t *nadj = calloc(n + 1, sizeof *nadj);
    uint32_t *cap = calloc(n + 1, sizeof *cap);
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t h = c->head_pred;
        for (uint32_t j = 0; j < c->nlits; j++) {
            if (c->lits[j].kind == IQL_LIT_CMP) continue;
            if (nadj[h] == cap[h]) {
                cap[h] = cap[h] ? cap[h] * 2 : 4;
                adj[h] = realloc(adj[h], cap[h] * sizeof *adj[h]);
            }
            adj[h][nadj[h]++] = c->lits[j].pred;
        }
    }
    uint32_t *comp = malloc((n + 1) * sizeof *comp);
    uint32_t ncomp = il_scc(n, adj, nadj, comp);

    /* Components are emitted dependencies first: that is the evaluation order. */
    for (uint32_t s = 0; s < ncomp; s++) {
        plan_stratum st;
        memset(&st, 0, sizeof st);
        il_vec_push(p->strata, st);
    }
    for (uint32_t i = 0; i < n; i++) {
        plan_stratum *st = &p->strata.v[comp[i]];
        st->preds = realloc(st->preds, (st->npreds + 1) * sizeof *st->preds);
        st->preds[st->npreds++] = i;
        p->preds.v[i].stratum = comp[i];
    }
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t s = comp[c->head_pred];
        plan_stratum *st = &p->strata.v[s];
        for (uint32_t j = 0; j < c->nlits; j++) {
            const blit *l = &c->lits[j];
            if (l->kind == IQL_LIT_CMP || comp[l->pred] != s) continue;
            st->recursive = true;
            if (l->kind == IQL_LIT_NEG || c->is_agg) p->unstratified = true;
        }
    }
    for (uint32_t i = 0; i < nclauses; i++) {
        const bclause *c = &clauses[i];
        uint32_t s = comp[c->head_pred];
        plan_stratum *st = &p->strata.v[s];
        uint32_t want = 1;
        if (st->recursive)
            for (uint32_t j = 0; j < c->nlits; j++)
                if (c->lits[j].kind == IQL_LIT_ATOM && comp[c->lits[j].pred] == s) want++;
        st->clauses = realloc(st->clauses, (st->nclauses + want) * sizeof *st->clauses);
        plan_clause pc;
        plan_compile_clause(p, c, -1, &pc);
        pc.recursive_base = want > 1;
        il_vec_push(p->clauses, pc);
        st->clauses[st->nclauses++] = p->clauses.n - 1;
        if (!st->recursive) continue;
        for (uint32_t j = 0; j < c->nlits; j++) {
            if (c->lits[j].kind != IQL_LIT_ATOM || comp[c->lits[j].pred] != s) continue;
            plan_compile_clause(p, c, (int32_t)j, &pc);
            for (uint32_t o = 0; o < pc.nops; o++) {
                const plan_op *op = &pc.ops[o];
                if ((op->kind == POP_SCAN || op->kind == POP_NEG) && op->version == PV_FULL &&
                    comp[op->pred] == s)
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
    for (uint32_t i = 0; i < n; i++) free(adj[i]);
    free(adj);
    free(nadj);
    free(cap);
    free(comp);
}

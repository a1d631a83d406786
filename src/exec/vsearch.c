/* Walking a vector search's hits over bound slots (vsearch.h). */
#include "exec/vsearch.h"

#include "base/meter.h"
#include "exec/expr.h"
#include "exec/hnsw.h"

void exec_vsearch_each(const plan_op *op, val_t *regs, const bool check[2],
                       bool (*each)(void *ctx, bool matched), void *ctx) {
    hnsw_hit stack_hits[16];
    hnsw_hit *hits = op->k <= 16 ? stack_hits : il_mem_alloc((size_t)op->k * sizeof *hits);
    size_t n = op->search(op->index, exec_eval(op->rhs, regs), op->k, op->ef, hits);
    val_t saved[2];
    for (uint32_t c = 0; c < 2; c++)
        saved[c] = op->act_slot[c] != UINT32_MAX ? regs[op->act_slot[c]] : VAL_NULL;
    bool go = true;
    for (size_t h = 0; h < n && go; h++) {
        val_t got[2] = {hits[h].key, val_float(hits[h].dist)};
        bool ok = true;
        for (uint32_t c = 0; c < 2 && ok; c++) {
            uint32_t slot = op->act_slot[c];
            if (op->act[c] == PCOL_CHECK_CONST)
                ok = exec_const_matches(got[c], op->act_const[c]);
            else if (check[c])
                ok = regs[slot] == got[c];
            if (ok && !check[c] && slot != UINT32_MAX) regs[slot] = got[c];
        }
        go = each(ctx, ok);
        for (uint32_t c = 0; c < 2; c++)
            if (op->act_slot[c] != UINT32_MAX) regs[op->act_slot[c]] = saved[c];
    }
    if (hits != stack_hits) il_mem_free(hits);
}

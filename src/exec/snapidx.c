/* Indexes for relations read through snapshots (see snapidx.h). */
#include "exec/snapidx.h"

_Thread_local const exec_snapidx *exec_snapidx_installed;

int exec_rel_index(rel_t **rel, const uint32_t *cols, uint32_t ncols) {
    if (!rel_is_snapshot(*rel)) return rel_index(*rel, cols, ncols);
    int found = rel_find_index(*rel, cols, ncols);
    const exec_snapidx *p = exec_snapidx_installed;
    if (found >= 0 || !p) return found;
    rel_t *copy = p->copy(p->ctx, *rel, cols, ncols);
    if (!copy) return -1;
    *rel = copy;
    return rel_find_index(copy, cols, ncols);
}

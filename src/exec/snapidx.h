/* Indexes for relations read through snapshots. A snapshot has the indexes its relation
 * had when it was taken and cannot gain one (exec/rel.h); an evaluation that needs another
 * asks the provider its thread installed (a pinned graph, kg/pin.c) for a private copy of
 * the tuples holding it. Without a provider, or off the thread that installed it, the
 * evaluation reads the snapshot by an index it has (a scan with a filter: slower, never
 * wrong). */
#ifndef IL_EXEC_SNAPIDX_H
#define IL_EXEC_SNAPIDX_H

#include <stdint.h>

#include "exec/rel.h"

typedef struct exec_snapidx {
    /* A relation with the tuples of snapshot snap and an index beginning with cols, owned
       by the provider until it is uninstalled; NULL when it cannot make one. */
    rel_t *(*copy)(void *ctx, const rel_t *snap, const uint32_t *cols, uint32_t ncols);
    void *ctx;
} exec_snapidx;

/* The calling thread's provider, or NULL. */
extern _Thread_local const exec_snapidx *exec_snapidx_installed;

/* rel_index for what an evaluation reads: on a relation, rel_index; on a snapshot, the
 * index it has beginning with cols, else *rel becomes the provider's copy and the copy's
 * index is returned; -1 when there is none (the caller reads another index). */
int exec_rel_index(rel_t **rel, const uint32_t *cols, uint32_t ncols);

#endif

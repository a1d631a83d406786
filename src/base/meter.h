/* Memory metering of a statement's working data, for the per-statement memory limit and
 * the memory budget shared by the statements running at the same time.
 *
 * A meter is installed on the thread that evaluates a statement (thread-local, so
 * statements on different threads never mix) and counts the live bytes of the blocks
 * allocated while it is installed: counted blocks from il_mem_*, and blocks whose owner
 * keeps their size and charges them itself (relation node chunks, the slots of tuple
 * sets). Only the big consumers do (relation nodes, tuple sets, delta lists, sort
 * buffers); everything else is not counted. Each counted block remembers which meter
 * counted it, so freeing it decrements that meter only while it is still installed;
 * whatever a meter still counts when it ends goes back to the budget then, and later
 * frees of its blocks change nothing.
 *
 * Going over a limit does not fail the allocation (a half-done insert cannot be undone):
 * the meter records it, and the stop checks of the evaluator (exec/guard.h) end the
 * statement at their next poll. */
#ifndef IL_BASE_METER_H
#define IL_BASE_METER_H

#include <stddef.h>
#include <stdint.h>

#include "inputlayer.h"

typedef struct il_meter {
    uint64_t id;           /* tags the blocks it counted; never 0 */
    uint64_t live;         /* bytes counted and not yet freed */
    uint64_t peak;         /* the highest `live` so far */
    uint64_t limit;        /* 0: no per-statement limit */
    il_mem_budget *budget; /* shared with other statements; may be NULL */
    il_stop over;          /* IL_STOP_MEMORY or IL_STOP_BUDGET once a limit was passed */
} il_meter;

void il_meter_begin(il_meter *m, uint64_t limit, il_mem_budget *budget);
/* Gives what the meter still counts back to its budget. */
void il_meter_end(il_meter *m);

/* The calling thread's meter, or NULL; set with il_meter_install. */
extern _Thread_local il_meter *il_meter_installed;

/* Makes m (may be NULL) the calling thread's meter; returns the one it replaces. Inline:
 * every evaluation installs one. */
static inline il_meter *il_meter_install(il_meter *m) {
    il_meter *prev = il_meter_installed;
    il_meter_installed = m;
    return prev;
}

/* Counts bytes to the calling thread's meter; returns the meter's id, to be handed back
 * to il_meter_release, or 0 when no meter is installed. */
uint64_t il_meter_charge(size_t bytes);
/* Uncounts bytes charged under `id`, if that meter is the one installed now. */
void il_meter_release(uint64_t id, size_t bytes);

/* Counted blocks (a header of IL_MEM_HEADER_BYTES in front records the size and the
 * meter); they must be resized and freed with these functions, never with realloc or
 * free. Abort when out of memory, like the rest of the engine. Growable arrays take the
 * header out of their room rather than add it to a power-of-two size: malloc then sees
 * the sizes it saw before counting, and small ones stay in its fast per-thread cache. */
#define IL_MEM_HEADER_BYTES 16
void *il_mem_alloc(size_t bytes);
void *il_mem_calloc(size_t n, size_t size);
void *il_mem_realloc(void *p, size_t bytes);
void il_mem_free(void *p);

/* IL_VEC arrays (base/vec.h) whose storage is a counted block: grown, pushed to and
 * freed only with these macros. Blocks have the sizes of IL_VEC's (8 elements, doubling),
 * the header included. */
void il_mvec_grow_(void **v, uint32_t *cap, uint32_t need, size_t elem);

#define il_mvec_reserve(vec, need)                                                                 \
    do {                                                                                           \
        if ((need) > (vec).cap)                                                                    \
            il_mvec_grow_((void **)&(vec).v, &(vec).cap, (need), sizeof *(vec).v);                 \
    } while (0)

#define il_mvec_push(vec, x)                                                                       \
    do {                                                                                           \
        il_mvec_reserve(vec, (vec).n + 1);                                                         \
        (vec).v[(vec).n++] = (x);                                                                  \
    } while (0)

#define il_mvec_free(vec)                                                                          \
    do {                                                                                           \
        il_mem_free((vec).v);                                                                      \
        (vec).v = NULL;                                                                            \
        (vec).n = (vec).cap = 0;                                                                   \
    } while (0)

#endif

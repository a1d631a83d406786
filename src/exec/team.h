/* One evaluation step shared out to several threads: numbered chunks of work taken in
 * turn by the calling thread and by helper threads it starts for the step, with the
 * statement's guard (exec/guard.h) watched by the calling thread alone. Helpers count no
 * memory of their own (no meter is installed on them): they report what their buffers
 * take, and the calling thread charges it to the statement's meter, checks the guard as
 * it works and while it waits, and raises a stop flag every thread polls. Strings a
 * helper makes (a computed head, base/intern.h) are held by the statement's scope, as
 * if the calling thread had made them. */
#ifndef IL_EXEC_TEAM_H
#define IL_EXEC_TEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/eval.h"

typedef struct exec_team exec_team;

/* Does chunk `chunk` on worker `worker` (0: the calling thread; helpers 1, 2, ...). */
typedef void (*exec_team_work)(void *ctx, exec_team *t, uint32_t worker, size_t chunk);

/* The threads a step of x may use: guard->threads, 1 without a guard. */
uint32_t exec_team_threads(const exec_ctx *x);

/* What the statement's meter counts of the workers' buffers (exec_team_bytes) at the end
 * of a step, for the caller to give back (il_meter_release) once it has freed them. */
typedef struct exec_team_charge {
    uint64_t bytes, meter_id;
} exec_team_charge;

/* Runs work on every chunk 0 .. nchunks-1 on up to `threads` threads, the calling one
 * among them, and returns once all have finished or stopped. Returns false when the step
 * stopped (x->error says why); x->threads_used is raised to the threads that ran. When no
 * helper can start, the calling thread does every chunk. The charge for the workers'
 * buffers goes to *keep when it is not NULL, else back to the meter at the end. */
bool exec_team_run(exec_ctx *x, uint32_t threads, size_t nchunks, exec_team_work work, void *ctx,
                   exec_team_charge *keep);

/* For the work, every few thousand units of it (`work` since the last call): true once it
 * must stop. On worker 0 this is also where the workers' memory is charged and the work
 * counted towards the guard's checks (exec_tick_n). */
bool exec_team_poll(exec_team *t, uint32_t worker, uint64_t work);

/* The work counted on a worker since the step began, which the worker keeps up to date
 * between its polls: chunk after chunk, the polls fall every few thousand tuples. */
uint64_t *exec_team_ticks(exec_team *t, uint32_t worker);

/* The buffers of a worker that no meter counts (all of a helper's, what the calling
 * thread mallocs) take `bytes` in all now. */
void exec_team_bytes(exec_team *t, uint32_t worker, uint64_t bytes);

#endif

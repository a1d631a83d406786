/* A connection's request pipeline: tickets in arrival order, the start rule (shared reads
 * together, exclusive requests alone), in-order release, backpressure, deadlines of
 * waiting requests, cancel and disconnect (srv_pipeline.c). Loop thread only, except the
 * capture functions, which jobs use. */
#ifndef IL_SERVER_SRV_PIPELINE_H
#define IL_SERVER_SRV_PIPELINE_H

#include "server/server.h"

/* A large computation's memory, and a large reply's, goes back to the system after a
 * quiet time. */
#define SRV_RELEASE_AFTER_PEAK  (64u * 1024 * 1024)
#define SRV_RELEASE_AFTER_REPLY (4u * 1024 * 1024)

uint64_t srv_mono_ns(void);
/* The calling thread's CPU time: a system call (about 1.5 us here), unlike srv_mono_ns. */
uint64_t srv_thread_cpu_ns(void);

/* A testing aid (docs/server.md): INPUTLAYER_TEST_REPLY_DELAY_NS, nanoseconds the loop
 * thread busy-waits before releasing each reply (0 when unset; at most one second), so
 * that a build can be made slower on purpose for the perf gate's own check. */
uint64_t srv_test_reply_delay_ns(void);
/* INPUTLAYER_TEST_INLINE_WRITE_STALL_NS: how long the I/O thread sleeps in each write it
 * runs inline, standing for a preemption there (docs/server.md, testing aids); 0 unset. */
uint64_t srv_test_inline_stall_ns(void);
/* INPUTLAYER_TEST_RELEASE_DELAY_NS: how long a job releasing a connection's held deltas
 * sleeps before it runs (docs/server.md, testing aids); 0 unset. */
uint64_t srv_test_release_delay_ns(void);
/* Sleeps ns (none when 0): a testing aid's stall, the thread away as when preempted. */
void srv_test_sleep(uint64_t ns);

/* Appends a frame for connection `to` to a capture. */
void srv_capture_frame(srv_capture *cap, srv_conn *to, const char *json, size_t len);

/* Before c is freed: out of the pipeline's bookkeeping. */
void srv_pipe_forget(srv_conn *c);
/* A new ticket at the end of the pipeline (pausing reading at the bound). */
srv_req *srv_pipe_new(srv_conn *c, enum srv_req_kind kind, const char *id);
/* Whether an unreleased request of c has this id. */
bool srv_pipe_id_in_use(const srv_conn *c, const char *id);
/* An immediate reply: frames sent between begin and end are its reply. */
srv_req *srv_pipe_reply_begin(srv_conn *c, const char *id);
void srv_pipe_reply_end(srv_req *r);
/* Starts what may start and releases what is finished, in order. */
void srv_pipe_pump(srv_conn *c);
/* The pool's `done` for requests. */
void srv_pipe_job_done(srv_job *j);
/* Cancels the unanswered request with that id: "cancelled", "too_late" or "not_found". */
const char *srv_pipe_cancel(srv_conn *c, const char *target);
/* The socket closed: reads stop, waiting requests go, a started write finishes. */
void srv_pipe_disconnect(srv_conn *c);
/* Keeps the deadline sweep running while requests wait. */
void srv_sweep_arm(srv_server *s);
void srv_release_memory_later(srv_server *s);

#endif

/* What the unit tests share (unit_fixture.c, compiled into every test): an in-memory
 * engine with a session (per test of a suite, or opened by hand), statements that must
 * succeed, builtins called as the evaluator calls them, a scratch directory, a query's
 * answer as one line of text for comparing states, and row sets for comparing views with
 * fresh evaluations. */
#ifndef IL_TESTS_UNIT_FIXTURE_H
#define IL_TESTS_UNIT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "value/value.h"
#include "views/view.h"

/* An engine without a data directory and a session on it; fails the test otherwise. */
il_engine *unit_engine_open(il_session **session);
/* The same on the data directory dir (opened, or created when empty). */
il_engine *unit_engine_open_dir(const char *dir, il_session **session);
/* Closes the engine (and its sessions) and frees the value tables. */
void unit_engine_close(il_engine *e);

/* A suite's engine and session: TestSuite(name, .init = unit_suite_open, .fini =
 * unit_suite_close) opens a fresh in-memory engine (unit_engine_open) into them before
 * each test and closes it after. */
extern il_engine *unit_engine;
extern il_session *unit_session;
void unit_suite_open(void);
void unit_suite_close(void);

/* Runs a statement that must not fail: an error or a parse error fails the test with the
 * statement and the result's first line. */
void unit_run(il_session *s, const char *stmt);

/* Calls builtin `name` through the builtin table as the evaluator calls it; fails the test
 * when there is no such builtin or its arity is not nargs. UNIT_CALL(name, a, b, ...)
 * passes its value arguments as the array. */
val_t unit_call(const char *name, uint32_t nargs, const val_t *args);
#define UNIT_CALL(name, ...)                                                                       \
    unit_call(name, sizeof((val_t[]){__VA_ARGS__}) / sizeof(val_t), (val_t[]){__VA_ARGS__})

/* A fresh directory /tmp/il_<tag>_XXXXXX into dir (at least 64 bytes), and its removal. */
void unit_mkdtemp(char *dir, size_t cap, const char *tag);
void unit_rm_tree(const char *dir);

/* Appends "QUERY -> line... (v, v) (v, v)\n": the result's message lines and rows, so
 * two states can be compared as text. */
void unit_answer(il_session *s, const char *q, il_buf *out);
/* Row i of r as "(v1, v2, ...)", appended to out. */
void unit_row_text(il_result *r, size_t i, il_buf *out);
/* The same as a malloc'ed string. */
char *unit_answer_str(il_session *s, const char *q);

/* The next number of a SplitMix64 sequence, uniform in [-1, 1): reproducible random data. */
double unit_random(uint64_t *state);

/* A set of rows in word order (malloc'ed words), for comparing a maintained view with a
 * fresh evaluation. */
typedef struct unit_rows {
    val_t *v;
    size_t n;
    uint32_t w;
} unit_rows;

/* The rows of `?query` evaluated from scratch: a session fact (of a relation nothing
 * reads) keeps the session's queries off maintained relations (read_policy.h), so the
 * reference is evaluation, not another maintained view. The fact stays in the session. */
unit_rows unit_rows_fresh(il_session *s, const char *query);
/* The rows of `?query` as the session answers it. */
unit_rows unit_rows_of(il_session *s, const char *query);
unit_rows unit_rows_of_view(view_t *v);
bool unit_rows_has(const unit_rows *r, const val_t *t);
/* Equal as sets (both in word order). */
bool unit_rows_same(const unit_rows *a, const unit_rows *b);

#endif

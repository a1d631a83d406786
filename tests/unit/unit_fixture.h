/* What the unit tests share (unit_fixture.c, compiled into every test): an in-memory
 * engine with a session, a scratch directory, and a query's answer as one line of text
 * for comparing states. */
#ifndef IL_TESTS_UNIT_FIXTURE_H
#define IL_TESTS_UNIT_FIXTURE_H

#include <stddef.h>

#include "base/buf.h"
#include "inputlayer.h"

/* An engine without a data directory and a session on it; fails the test otherwise. */
il_engine *unit_engine_open(il_session **session);
/* Closes the engine (and its sessions) and frees the value tables. */
void unit_engine_close(il_engine *e);

/* A fresh directory /tmp/il_<tag>_XXXXXX into dir (at least 64 bytes), and its removal. */
void unit_mkdtemp(char *dir, size_t cap, const char *tag);
void unit_rm_tree(const char *dir);

/* Appends "QUERY -> line... (v, v) (v, v)\n": the result's message lines and rows, so
 * two states can be compared as text. */
void unit_answer(il_session *s, const char *q, il_buf *out);

#endif

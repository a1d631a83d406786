/* What the unit tests of plans and their evaluation share (program_fixture.c): stored
 * relations by name, rules parsed into an arena, and the lookup plan_build takes to find
 * the stored relations. A suite's .init is pf_setup (or calls it), its .fini pf_teardown. */
#ifndef IL_TEST_PROGRAM_FIXTURE_H
#define IL_TEST_PROGRAM_FIXTURE_H

#include <stdint.h>

#include "base/arena.h"
#include "exec/guard.h"
#include "exec/rel.h"
#include "iql/ast.h"

#define PF_MAX_RELS  16
#define PF_MAX_RULES 64

extern il_arena pf_arena;                      /* the parsed rules' memory */
extern const iql_rule *pf_rules[PF_MAX_RULES]; /* the rules pf_rule added */
extern uint32_t pf_nrules;

/* A fresh arena, no relations, no rules. */
void pf_setup(void);
/* Frees the relations and the arena, and every interned value. */
void pf_teardown(void);

/* The stored relation `name`, or NULL (plan_build's lookup; ctx unused). */
const rel_t *pf_lookup(void *ctx, const char *name);
/* The stored relation `name`, made empty with that arity the first time. */
rel_t *pf_stored_rel(const char *name, uint32_t arity);
void pf_fact1(const char *name, int64_t a);
void pf_fact2(const char *name, int64_t a, int64_t b);

/* `text` parsed as one statement of kind `want` (asserted), its rule in the arena. */
iql_rule *pf_parse_rule(const char *text, iql_stmt_kind want);
/* Adds the persistent rule `text` to pf_rules. */
void pf_rule(const char *text);

/* What a run of a query gave: its rows as raw words in relation order (malloc'ed, the
 * caller frees them), or its error, and the threads a step of it ran on. */
typedef struct pf_outcome {
    val_t *words;
    size_t n, arity;
    const char *error;
    uint32_t used;
} pf_outcome;

/* Builds the program of `query` (a session rule `q(outputs) <- body`) over pf_rules and
 * the stored relations, and runs it under guard g (may be NULL). */
pf_outcome pf_run(const char *query, exec_guard *g);

#endif

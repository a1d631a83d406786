/* The IQL parser: statement text to syntax tree (ast.h), with the reference's exact
 * error texts. It never executes anything and never looks at stored state. */
#ifndef IL_IQL_PARSER_H
#define IL_IQL_PARSER_H

#include "base/arena.h"
#include "iql/ast.h"

/* Parses one complete statement (as grouped by the script reader or sent by a client).
 * Everything is allocated in `a`. On success returns true and fills *out. On failure
 * returns false and sets *err to the message without the "Parse error: " prefix,
 * e.g. "Expected parentheses: (1, 2)." (arena-allocated). */
bool iql_parse(il_arena *a, const char *text, size_t len, iql_stmt *out, const char **err);
/* How many times iql_parse has run in this process (any thread): the statements parsed. */
uint64_t iql_parse_count(void);
/* Of those, the statements read as ground facts, `+rel(1, "a")` (integers and plain
 * strings), without the general path. */
uint64_t iql_parse_fact_count(void);

/* True when `name` (any case) is a builtin function; *canon gets the lowercase name and
 * *arity its fixed argument count. */
bool iql_builtin_lookup(const char *name, size_t len, const char **canon, uint32_t *arity);
/* The i-th builtin function name (for completion), NULL past the last. */
const char *iql_builtin_name(size_t i);

/* Deep copies, for rules and queries that outlive the statement's arena. */
iql_term *iql_term_clone(il_arena *a, const iql_term *t);
void iql_atom_clone(il_arena *a, iql_atom *dst, const iql_atom *src);
void iql_rule_clone(il_arena *a, iql_rule *dst, const iql_rule *src);

#endif

/* Display of syntax trees: the text the reference prints for rules in `.rule def`,
 * `.session`, `.why_not` and messages (iql-language.md 2.9 and 3.2). Float constants
 * print in Rust `{}` form (2.0 as 2), arithmetic without spaces and with the minimal
 * parentheses, strings quoted with escapes re-encoded, functions in lowercase. */
#ifndef IL_IQL_PRINT_H
#define IL_IQL_PRINT_H

#include "base/buf.h"
#include "iql/ast.h"

void iql_fmt_term(const iql_term *t, il_buf *out);
void iql_fmt_atom(const iql_atom *a, il_buf *out);
void iql_fmt_literal(const iql_literal *l, il_buf *out);
/* "head(X, Y) <- body1, body2" (just the head when the body is empty). */
void iql_fmt_rule(const iql_rule *r, il_buf *out);
/* A text that identifies the rule exactly (plan cache keys): iql_fmt_rule's, except that
 * vector literals print as the bits of their elements. */
void iql_fmt_rule_key(const iql_rule *r, il_buf *out);
/* Aggregate name as used in "Conflicting aggregation" messages: `sum`, `count`, ... for
 * simple aggregates; the full form `top_k<2, Name, Score:asc>` for ranking ones (the
 * annotation omitted for a single variable with the default direction). */
void iql_fmt_agg_name(const iql_term *agg, il_buf *out);
/* An aggregate's name as written: `count`, `top_k`, ... */
const char *iql_agg_kind_name(iql_agg_kind k);

#endif

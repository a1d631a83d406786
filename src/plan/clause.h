/* Clauses between the syntax tree and compiled plans: variables numbered per clause,
 * every `_` a fresh variable, atoms resolved to program predicates. The builder
 * (build.c) produces them, adorned for demand; the compiler (compile.c) orders each
 * one and turns it into plan operations. Private to src/plan. */
#ifndef IL_PLAN_CLAUSE_H
#define IL_PLAN_CLAUSE_H

#include "plan/plan.h"

typedef enum bterm_kind {
    BT_VAR,   /* a variable slot */
    BT_CONST, /* a constant value (numeric constants match numerically, see compile.c) */
    BT_EXPR,  /* arithmetic, a call or an aggregate, kept as syntax (heads only) */
    BT_WILD,  /* matches anything, binds nothing */
} bterm_kind;

typedef struct bterm {
    bterm_kind kind;
    uint32_t var;        /* BT_VAR */
    val_t c;             /* BT_CONST */
    int32_t bind;        /* BT_CONST: a variable that takes the matched value, or -1 */
    const iql_term *ast; /* BT_EXPR, and BT_CONST (its literal) */
} bterm;

typedef struct bvars {
    const char **names; /* slot -> variable name (`_ph_<rel>_<i>` for placeholders) */
    uint32_t n;
    uint32_t cap;
} bvars;

typedef struct blit {
    iql_lit_kind kind;
    uint32_t pred;   /* ATOM, NEG: program predicate */
    const char *rel; /* ATOM, NEG: relation name as written */
    bterm *args;     /* ATOM, NEG */
    uint32_t nargs;
    iql_cmp_op op;       /* CMP */
    const iql_term *lhs; /* CMP */
    const iql_term *rhs; /* CMP */
    bool magic;          /* ATOM over a demand (magic) predicate: small, preferred first */
} blit;

typedef struct bclause {
    uint32_t head_pred;
    bterm *head; /* output columns (non-aggregating heads) */
    uint32_t nhead;
    const iql_atom *head_ast; /* the head as written (aggregating heads) */
    bool is_agg;
    const char *error; /* raised when the clause runs */
    uint32_t order;    /* position of its source rule in the program (the query last) */
    bool session;      /* made from a session rule (plan_source.nsession) */
    blit *lits;
    uint32_t nlits;
    bvars *vars;
} bclause;

/* Compiles one clause; delta_lit >= 0 makes the semi-naive variant in which that
 * literal reads the predicate's delta. The result lives in p's arena. */
void plan_compile_clause(plan_program *p, const bclause *c, int32_t delta_lit, plan_clause *out);

/* Splits the program's predicates into strata (strongly connected components in
 * dependency order) and creates the semi-naive variants of recursive clauses. */
void plan_stratify(plan_program *p, const bclause *clauses, uint32_t nclauses);

/* Variable lookup by name; returns -1 when absent. */
int32_t bvars_find(const bvars *v, const char *name);

/* If a comparison can run with the variables bound so far, returns true and marks what
 * it binds (an `=` with one unbound plain variable side is an assignment). */
bool plan_cmp_ready(const blit *l, const bvars *v, bool *bound);

/* Whether lits[i], an `=` that would now bind variable var, must wait: an earlier `=`
 * not placed yet (done) defines var from an expression or another variable (`W = X * 2`,
 * `W = abs(X)`, `W = X`). The language binds a variable no atom binds at its first
 * defining `=` in the text, so that one computes it and a later `W = 3` compares with it
 * (3.0 passes) rather than binding W and making the first a test of its own. */
bool plan_cmp_waits(const blit *lits, uint32_t i, const bool *done, const char *var);

#endif

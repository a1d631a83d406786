/* Evaluation programs: what a query, a rule read or a conditional delete becomes before
 * it runs. A program is a set of predicates (stored relations, derived relations and the
 * demand ("magic") relations of the demand transformation), clauses compiled to
 * relational operations (index seek, filter, compute, antijoin), and the strata in which
 * they run. Built by plan_build (program.c), ordered by plan_compile (compile.c),
 * stratified by plan_stratify (strata.c), run by exec_run (exec/eval.c).
 *
 * A program never owns stored data: it reads the catalog's relations and owns only the
 * derived ones it computes, all freed with the program. */
#ifndef IL_PLAN_PLAN_H
#define IL_PLAN_PLAN_H

#include "base/arena.h"
#include "base/vec.h"
#include "exec/rel.h"
#include "exec/tupleset.h"
#include "iql/ast.h"
#include "value/value.h"

/* ---- expressions over a clause's variable slots ---- */

typedef enum plan_expr_kind {
    PX_SLOT,  /* the value bound to a variable slot */
    PX_CONST, /* a constant value */
    PX_ARITH, /* binary arithmetic (computed-value rules of iql-language.md 3.7) */
    PX_CALL,  /* builtin function call */
} plan_expr_kind;

typedef struct exec_builtin exec_builtin;
typedef struct plan_expr plan_expr;
struct plan_expr {
    plan_expr_kind kind;
    uint32_t slot;          /* PX_SLOT */
    val_t c;                /* PX_CONST */
    char op;                /* PX_ARITH: + - * / % */
    plan_expr *l, *r;       /* PX_ARITH */
    const exec_builtin *fn; /* PX_CALL */
    plan_expr **args;       /* PX_CALL */
    uint32_t nargs;         /* PX_CALL */
};

/* How a comparison is decided (3.4 step 4), fixed when the clause is compiled from the
 * kinds of its two sides. */
typedef enum plan_cmp_mode {
    PCMP_VALUES,      /* two computed values: strict equality, numeric or string order */
    PCMP_CONST_INT,   /* value against an int constant: numeric, 1e-10 tolerance for floats */
    PCMP_CONST_FLOAT, /* value against a float constant: numeric, 1e-10 tolerance */
    PCMP_CONST_STR,   /* value against a string constant: strings only */
    PCMP_CONST_BOOL,  /* value against a bool constant: = and != only */
    PCMP_INT_ARITH,   /* value against integer arithmetic (i64-only evaluation) */
    PCMP_CONST_CONST, /* decided when compiled; `result` holds the answer */
} plan_cmp_mode;

/* ---- operations of a compiled clause body ---- */

typedef enum plan_op_kind {
    POP_SCAN,   /* for each tuple of a relation matching the bound prefix */
    POP_NEG,    /* continue only if no tuple matches */
    POP_FILTER, /* continue only if a comparison holds */
    POP_ASSIGN, /* bind a slot to a computed value */
    POP_HNSW,   /* for each of the k nearest vectors of an index (hnsw_nearest) */
} plan_op_kind;

typedef struct hnsw_hit hnsw_hit;
/* The k nearest of a vector index to q (kg_index_search): fills out, returns the count. */
typedef size_t (*plan_index_search_fn)(void *index, val_t q, uint32_t k, uint32_t ef,
                                       hnsw_hit *out);

/* What to do with a scanned column that is not part of the seek prefix. */
typedef enum plan_col_action {
    PCOL_BIND,        /* bind it to a slot */
    PCOL_CHECK_SLOT,  /* must equal an already bound slot (a variable repeated in the atom) */
    PCOL_CHECK_CONST, /* must equal a constant */
    PCOL_IGNORE,      /* a placeholder */
} plan_col_action;

/* Which relation of a predicate an operation reads. */
typedef enum plan_version {
    PV_FULL,  /* everything derived so far (and the stored facts of a base predicate) */
    PV_DELTA, /* what the last round of a recursive stratum added */
} plan_version;

typedef struct plan_op {
    plan_op_kind kind;
    /* SCAN and NEG */
    uint32_t pred; /* predicate id */
    plan_version version;
    uint32_t arity; /* the atom's arity; a predicate of another arity matches nothing */
    uint32_t order[REL_MAX_ARITY]; /* index column order: bound columns first */
    uint32_t nprefix; /* leading columns of `order` given by prefix_slot / prefix_const */
    int32_t prefix_slot[REL_MAX_ARITY]; /* slot of prefix column i, or -1 for a constant */
    val_t prefix_const[REL_MAX_ARITY];
    int32_t prefix_bind[REL_MAX_ARITY]; /* constant prefix column: slot taking the stored value, or
                                           -1 */
    /* constant prefix column whose folded variable (`V = c`, build.c) is bound before the
       atom: the slot the stored value must equal strictly, as a join on V would; or -1 */
    int32_t prefix_check[REL_MAX_ARITY];
    plan_col_action act[REL_MAX_ARITY]; /* for index positions >= nprefix */
    uint32_t act_slot[REL_MAX_ARITY];
    val_t act_const[REL_MAX_ARITY];
    /* FILTER */
    iql_cmp_op cmp;
    plan_cmp_mode mode;
    plan_expr *lhs, *rhs; /* FILTER; ASSIGN uses rhs */
    bool result;          /* PCMP_CONST_CONST */
    /* ASSIGN */
    uint32_t slot;
    /* ASSIGN of a builtin with cheap bounds (exec_builtin_find_bounds) whose slot a later
       FILTER compares with a number, only filters and assignments in between: that
       filter's op index (0: none). A row the bounds already fail skips the exact value. */
    uint32_t bound_filter;
    void (*bounds)(const val_t *args, uint32_t arg, const val_t *rows, size_t stride, size_t n,
                   double *lo, double *hi);
    /* HNSW: the query vector is rhs; the key and the distance go to slot act_slot[0] and
       act_slot[1] as act[0] and act[1] say (BIND, or CHECK_SLOT when already bound, or
       CHECK_CONST against act_const with act_slot UINT32_MAX or a slot that takes it) */
    void *index;
    plan_index_search_fn search;
    uint32_t k, ef; /* ef 0: the index's own */
} plan_op;

/* One aggregate of an aggregating clause head. */
typedef struct plan_agg {
    iql_agg_kind kind;
    uint32_t slot;       /* simple aggregates: the aggregated variable */
    uint64_t k;          /* ranking: K */
    double param;        /* TOP_K_THRESHOLD threshold, WITHIN_RADIUS radius */
    uint32_t *out_slots; /* ranking: output variables in order */
    uint32_t nout;
    uint32_t order_out; /* ranking: which output is the score */
    bool desc;          /* ranking: direction */
} plan_agg;

/* Remembered seek starts of one scan over stored facts (which do not change during a
 * query): a scan repeated for the same bound value skips the tree descent. Allocated
 * only once a scan has sought often; lives as long as the program. */
typedef struct plan_seek_entry {
    val_t key;        /* the one prefix value */
    const void *leaf; /* where rel_seek started, for rel_seek_resume */
    const val_t *cur;
    bool used;
} plan_seek_entry;

typedef struct plan_seek_cache {
    uint32_t seeks;     /* seeks so far */
    plan_seek_entry *e; /* PLAN_SEEK_CACHE_SIZE entries, direct-mapped; NULL until used;
                           a counted block (base/meter.h) */
} plan_seek_cache;

enum { PLAN_SEEK_CACHE_SIZE = 4096, PLAN_SEEK_CACHE_AFTER = 512 };

typedef struct plan_clause {
    uint32_t head_pred;
    plan_seek_cache *seek_caches; /* per op; filled while the program runs */
    uint32_t nslots;              /* variable slots used by the body */
    const char **slot_names;      /* for error messages: variable names, `_ph_<rel>_<i>` for `_` */
    plan_op *ops;
    uint32_t nops;
    plan_expr **head; /* non-aggregating heads: one expression per output column */
    uint32_t nhead;
    /* aggregating heads: output = group slots, then each aggregate's outputs */
    bool is_agg;
    uint32_t *group_slots;
    uint32_t ngroup;
    plan_agg *aggs;
    uint32_t naggs;
    /* semi-naive: the op that reads the delta in this variant, or -1 */
    int32_t delta_op;
    /* a clause of a recursive stratum with atoms over the stratum: only its delta
       variants run (its base variant would find nothing new) */
    bool recursive_base;
    /* the variant scans the full relation of a predicate of its own stratum, so its
       results must wait in `next` instead of going into `full` while it runs */
    bool reads_stratum_full;
    /* an error found when compiling, raised if the clause is ever run */
    const char *error;
    /* position of its source rule in the program; a stratum runs its clauses in this
       order, which decides what an unstratified cycle of session rules sees */
    uint32_t order;
    /* made from a session rule: a run with exec_ctx.skip_session leaves it out */
    bool session;
} plan_clause;

typedef enum plan_pred_kind {
    PP_BASE,    /* stored facts only (catalog relation, session facts) */
    PP_DERIVED, /* computed by clauses (rule heads, magic relations, the query) */
} plan_pred_kind;

/* A flat list of tuples of one arity (a recursive predicate's delta and additions). */
typedef IL_VEC(val_t) plan_tuples;

typedef struct plan_pred {
    const char *name; /* display name: `edge`, `reach^bf`, `m_reach^bf`, `__query__` */
    plan_pred_kind kind;
    uint32_t arity;
    const rel_t *stored; /* PP_BASE: the facts (may be NULL: empty) */
    rel_t *full;         /* PP_DERIVED: result so far, owned */
    /* delta and added are counted (base/meter.h): grown and freed with il_mvec_* */
    plan_tuples delta; /* recursive stratum: last round's additions, arity words each */
    plan_tuples added; /* recursive stratum: this round's additions already in `full` */
    rel_t *next;       /* recursive stratum: additions of variants that read `full` */
    uint32_t stratum;
    tupleset rows; /* the query predicate: its rows, deduplicated, unordered */
} plan_pred;

typedef struct plan_stratum {
    uint32_t *preds;
    uint32_t npreds;
    uint32_t *clauses; /* clause ids whose head is in this stratum */
    uint32_t nclauses;
    bool recursive;
} plan_stratum;

typedef struct plan_source plan_source;

typedef struct plan_program {
    il_arena arena;
    const plan_source *src; /* while it is being built (resolves hnsw_nearest's index) */
    IL_VEC(plan_pred) preds;
    IL_VEC(plan_clause) clauses;
    IL_VEC(plan_stratum) strata;
    uint32_t query_pred; /* the predicate whose rows answer the query */
    bool unstratified;   /* a negation or an aggregate reads its own stratum */
    const char *error;   /* a build error (reported instead of running) */
} plan_program;

void plan_program_init(plan_program *p);
void plan_program_free(plan_program *p);
/* Drops everything a run computed (derived relations, deltas, the query's rows, seek
 * caches), keeping the compiled program for the next run. */
void plan_program_reset(plan_program *p);

#endif

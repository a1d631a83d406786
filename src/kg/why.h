/* Proof trees of `.why ?query` (docs/engine.md, "Proof trees"), shared by the prover
 * (why.c: indexed backward chaining, tabled, ranks) and the JSON writer (why_json.c).
 *
 * Every conclusion met while proving is one node, tabled by (relation, tuple): it is
 * proved once however many rows and derivations reach it. A derivation is one instance
 * of a clause (its variable bindings) whose head is the node; its positive atoms point
 * at child nodes. The instances are found by running, through the ordinary planner and
 * evaluator, a clause rewritten as a query seeded with the tuples to prove: every body
 * atom is read through an index seek and derived atoms are restricted by demand. */
#ifndef IL_KG_WHY_H
#define IL_KG_WHY_H

#include "base/buf.h"
#include "base/vec.h"
#include "iql/ast.h"
#include "value/value.h"

/* The bounds of one `.why`. */
enum {
    WHY_MAX_DEPTH = 50,         /* rule applications below a row's goal */
    WHY_MAX_PROOFS = 5,         /* derivations kept per conclusion */
    WHY_MAX_PROOFS_FULL = 50,   /* the same for `.why full` */
    WHY_AGG_SAMPLE = 10,        /* aggregate inputs shown */
    WHY_AGG_SAMPLE_FULL = 1000, /* the same for `.why full` */
    WHY_MAX_ROWS = 1000,        /* rows of the result that get a proof tree */
    WHY_MAX_NODES = 200000,     /* conclusions tabled; past this nothing more is expanded */
    /* Bytes of proof-tree JSON (they travel in one frame): past them, a conclusion not yet
       written out is a `truncated` leaf. */
    WHY_MAX_JSON_BYTES = 8 << 20,
};

typedef enum why_node_kind {
    WN_QUERY,     /* a row of the query */
    WN_FACT,      /* a stored fact */
    WN_DERIVED,   /* a conclusion of persistent rules, expanded */
    WN_TRUNCATED, /* a conclusion past the depth bound, not expanded */
} why_node_kind;

typedef struct why_node {
    uint32_t rel; /* index into why_ctx.rels */
    uint32_t arity;
    uint32_t vals; /* offset of its tuple in why_ctx.vals */
    why_node_kind kind;
    uint32_t level;       /* rule applications from the nearest row that reached it */
    int32_t rank;         /* height of its shortest proof (facts 0); -1 while unproved */
    uint32_t first, last; /* its derivations, linked through why_deriv.next */
    uint32_t ncollected;  /* derivations collected */
    uint32_t nkept;       /* derivations kept */
    bool more;            /* it had derivations beyond those kept */
} why_node;

enum { WHY_NONE = UINT32_MAX };

typedef struct why_deriv {
    uint32_t node;   /* the conclusion; for an aggregate input, its aggregate derivation */
    uint32_t clause; /* index into why_ctx.clauses */
    uint32_t vals;   /* offset of its bindings (the clause's output row) in why_ctx.vals */
    uint32_t child_off, nchild; /* nodes of its positive atoms, in why_ctx.children */
    uint32_t next;              /* the node's next derivation (or the next input) */
    int32_t rank;               /* 1 + the highest rank of its children; -1 unproved */
    bool kept;
    bool is_input;        /* one body instance of an aggregate derivation */
    uint32_t first_input; /* aggregate: its sampled inputs, linked through next */
    uint64_t ninputs;     /* aggregate: body instances of its group */
} why_deriv;

/* How the columns of a clause's proving query give back its literals. */
typedef struct why_lit {
    int32_t *arg_col; /* ATOM, NEG: output column of each argument, -1 for `_` or a constant */
    int32_t lhs_col, rhs_col; /* CMP: output column of each side, -1 for a constant */
    bool derived;             /* ATOM: the relation has persistent rules */
    uint32_t rel;             /* ATOM: index into why_ctx.rels */
    bool vector;              /* ATOM: an hnsw_nearest search, not a relation */
    const char *metric;       /* vector: its index's metric, NULL when there is no such index */
} why_lit;

typedef struct why_clause {
    const iql_rule *src; /* as registered */
    uint32_t rel;        /* its head relation */
    uint32_t number;     /* 1-based position among the clauses of its rule */
    bool is_agg;
    bool is_query; /* the query itself */
    iql_rule q;    /* the proving query: #why(outputs) <- #seed(head columns), body */
    uint32_t nseed;
    uint32_t *seed_cols; /* the tuple column each seed column takes */
    uint32_t nout;
    const char **out_names;
    why_lit *lits;     /* one per src body literal */
    const char *error; /* why it cannot be proved through (then it gives no derivation) */
} why_clause;

typedef struct why_ctx {
    IL_VEC(const char *) rels; /* relation names, interned per `.why` */
    IL_VEC(why_node) nodes;
    IL_VEC(why_deriv) derivs;
    IL_VEC(uint32_t) children;
    IL_VEC(val_t) vals;
    IL_VEC(why_clause) clauses;
    IL_VEC(uint32_t) roots; /* per row: its goal's node, or its WN_QUERY node */
    const char *query;      /* the query's text, as the trees carry it */
    uint32_t max_depth, max_proofs, agg_sample;
    bool simple_query; /* the query is its goal alone: a row's proof is the goal's node */
    bool capped;       /* WHY_MAX_NODES was reached */
} why_ctx;

/* Writes the proof trees of the rows (why_ctx.roots) as a JSON array, one DAG per row
 * (protocol-later.md 1.13). */
void why_json(const why_ctx *w, il_buf *out);

#endif

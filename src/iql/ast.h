/* The IQL syntax tree: what the parser produces and everything after it consumes.
 * All nodes and strings of one statement live in one arena (base/arena.h) and are
 * freed with it. Names are NUL-terminated arena strings. String literal contents are
 * stored with escapes already processed (\n \t \r \\ \" \0 and \u{...} are decoded;
 * an unknown escape keeps its backslash), the same way everywhere. */
#ifndef IL_IQL_AST_H
#define IL_IQL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum iql_term_kind {
    IQL_T_VAR,         /* X, Foo, _Y: a named variable */
    IQL_T_PLACEHOLDER, /* _ : a fresh "don't care" at each occurrence */
    IQL_T_INT,
    IQL_T_FLOAT,
    IQL_T_STRING,
    IQL_T_BOOL,
    IQL_T_VECTOR, /* [1, 2.5]: elements as parsed (f64); stored as f32 */
    IQL_T_CALL,   /* builtin function call, canonical lowercase name */
    IQL_T_ARITH,  /* binary arithmetic; leaves are VAR, INT, FLOAT or ARITH */
    IQL_T_AGG,    /* aggregate, heads only */
} iql_term_kind;

typedef enum iql_agg_kind {
    IQL_AGG_COUNT,
    IQL_AGG_COUNT_DISTINCT,
    IQL_AGG_SUM,
    IQL_AGG_MIN,
    IQL_AGG_MAX,
    IQL_AGG_AVG,
    IQL_AGG_TOP_K,
    IQL_AGG_TOP_K_THRESHOLD,
    IQL_AGG_WITHIN_RADIUS,
} iql_agg_kind;

typedef enum iql_sort_dir { IQL_SORT_NONE, IQL_SORT_ASC, IQL_SORT_DESC } iql_sort_dir;

/* One variable of a ranking aggregate, with its optional direction. */
typedef struct iql_agg_spec {
    const char *var;
    iql_sort_dir dir; /* NONE when not annotated */
} iql_agg_spec;

typedef struct iql_term iql_term;
struct iql_term {
    iql_term_kind kind;
    union {
        const char *var; /* IQL_T_VAR */
        int64_t ival;    /* IQL_T_INT */
        double fval;     /* IQL_T_FLOAT (finite) */
        bool bval;       /* IQL_T_BOOL */
        struct {
            const char *ptr; /* decoded bytes, NUL-terminated for convenience */
            size_t len;
        } str; /* IQL_T_STRING */
        struct {
            double *elems;
            uint32_t n;
        } vec; /* IQL_T_VECTOR */
        struct {
            const char *name; /* canonical lowercase builtin name */
            iql_term **args;
            uint32_t nargs;
        } call; /* IQL_T_CALL */
        struct {
            char op; /* one of + - * / % */
            iql_term *lhs, *rhs;
        } arith; /* IQL_T_ARITH */
        struct {
            iql_agg_kind kind;
            const char *var;     /* simple aggregates: the aggregated variable */
            uint64_t k;          /* TOP_K, TOP_K_THRESHOLD: K */
            double param;        /* TOP_K_THRESHOLD: threshold T; WITHIN_RADIUS: radius D */
            iql_agg_spec *specs; /* ranking aggregates: output variables in order */
            uint32_t nspecs;
            uint32_t order_spec; /* ranking aggregates: index of the score variable */
            iql_sort_dir order;  /* ranking aggregates: effective direction (defaults applied) */
        } agg;                   /* IQL_T_AGG */
    } u;
};

typedef struct iql_atom {
    const char *rel;
    iql_term **args;
    uint32_t nargs;
} iql_atom;

typedef enum iql_cmp_op {
    IQL_CMP_EQ,
    IQL_CMP_NE,
    IQL_CMP_LT,
    IQL_CMP_LE,
    IQL_CMP_GT,
    IQL_CMP_GE
} iql_cmp_op;

typedef enum iql_lit_kind { IQL_LIT_ATOM, IQL_LIT_NEG, IQL_LIT_CMP } iql_lit_kind;

typedef struct iql_literal {
    iql_lit_kind kind;
    iql_atom atom;       /* ATOM and NEG */
    iql_cmp_op op;       /* CMP */
    iql_term *lhs, *rhs; /* CMP */
} iql_literal;

typedef struct iql_rule {
    iql_atom head; /* head args may hold VAR, constants, ARITH, AGG, PLACEHOLDER, CALL, VECTOR
                      as written; the planner rejects what it cannot run */
    iql_literal *body;
    uint32_t nbody;
} iql_rule;

typedef struct iql_sort_key {
    const char *var;
    iql_sort_dir dir;
} iql_sort_key;

typedef struct iql_query {
    iql_atom goal;      /* the first positive atom, sort annotations removed */
    iql_literal *extra; /* every other literal, in order; limit(...) removed */
    uint32_t nextra;
    iql_sort_key *sort; /* `Var:asc` / `Var:desc` annotations of the goal, in order */
    uint32_t nsort;
    int64_t limit;  /* -1 when absent */
    int64_t offset; /* 0 when absent */
} iql_query;

/* A tuple of an insert or delete, terms as written (the executor converts them to
 * values and reports `Cannot insert variable ...`). */
typedef struct iql_tuple {
    iql_term **terms;
    uint32_t n;
} iql_tuple;

typedef struct iql_facts {
    const char *rel;
    iql_tuple *tuples;
    uint32_t ntuples;
    bool bulk; /* written as rel[...] */
} iql_facts;

typedef enum iql_type_kind {
    IQL_TY_INT,
    IQL_TY_FLOAT,
    IQL_TY_STRING,
    IQL_TY_BOOL,
    IQL_TY_VECTOR, /* dim 0 = any length */
    IQL_TY_LIST,   /* list[T]: accepts anything, prints as any */
    IQL_TY_RECORD, /* { f: T, ... }: accepts anything, prints as any */
    IQL_TY_NAMED,  /* an Uppercase type name: accepts anything */
} iql_type_kind;

typedef struct iql_type {
    iql_type_kind kind;
    uint32_t dim;     /* IQL_TY_VECTOR */
    const char *name; /* IQL_TY_NAMED */
} iql_type;

typedef struct iql_column {
    const char *name;
    iql_type type;
} iql_column;

typedef struct iql_schema {
    const char *rel;
    iql_column *cols;
    uint32_t ncols;
} iql_schema;

typedef struct iql_type_decl {
    const char *name;
    iql_type type;
} iql_type_decl;

/* -a(..), +b(..) <- body: every `-` atom is deleted and every `+` atom inserted for each
 * body result. */
typedef struct iql_update {
    iql_atom *dels;
    uint32_t ndels;
    iql_atom *ins;
    uint32_t nins;
    iql_literal *body;
    uint32_t nbody;
} iql_update;

typedef enum iql_meta_kind {
    IQL_META_KG_SHOW,            /* .kg */
    IQL_META_KG_LIST,            /* .kg list */
    IQL_META_KG_CREATE,          /* .kg create <arg> */
    IQL_META_KG_USE,             /* .kg use <arg> */
    IQL_META_KG_DROP,            /* .kg drop <arg> */
    IQL_META_KG_ACL_LIST,        /* .kg acl list [arg] */
    IQL_META_KG_ACL_GRANT,       /* .kg acl grant <arg> <arg2> <arg3> */
    IQL_META_KG_ACL_REVOKE,      /* .kg acl revoke <arg> <arg2> */
    IQL_META_REL_LIST,           /* .rel */
    IQL_META_REL_SHOW,           /* .rel <arg> */
    IQL_META_REL_DROP,           /* .rel drop <arg> */
    IQL_META_RULE_LIST,          /* .rule, .rule list */
    IQL_META_RULE_SHOW,          /* .rule <arg> */
    IQL_META_RULE_DEF,           /* .rule def <arg> */
    IQL_META_RULE_DROP,          /* .rule drop <arg> */
    IQL_META_RULE_DROP_PREFIX,   /* .rule drop prefix <arg> */
    IQL_META_RULE_REMOVE,        /* .rule remove <arg> <index> */
    IQL_META_RULE_CLEAR,         /* .rule clear <arg> */
    IQL_META_RULE_EDIT,          /* .rule edit <arg> <index> <text> */
    IQL_META_SESSION_LIST,       /* .session, .rules */
    IQL_META_SESSION_CLEAR,      /* .session clear */
    IQL_META_SESSION_DROP_INDEX, /* .session drop <index> */
    IQL_META_SESSION_DROP_NAME,  /* .session drop <arg> */
    IQL_META_CLEAR_PREFIX,       /* .clear prefix <arg> */
    IQL_META_COMPACT,            /* .compact */
    IQL_META_BACKUP,             /* .backup [arg] */
    IQL_META_BACKUP_STATUS,      /* .backup status */
    IQL_META_STATUS,             /* .status */
    IQL_META_DEBUG,              /* .debug <text> */
    IQL_META_WHY,                /* .why <text> */
    IQL_META_WHY_FULL,           /* .why full <text> */
    IQL_META_WHY_NOT,            /* .why_not <text> */
    IQL_META_INDEX_LIST,         /* .index, .index list */
    IQL_META_INDEX_CREATE,  /* .index create ...: arg name, arg2 relation, arg3 column, text options
                             */
    IQL_META_INDEX_DROP,    /* .index drop <arg> */
    IQL_META_INDEX_STATS,   /* .index stats <arg> */
    IQL_META_INDEX_REBUILD, /* .index rebuild <arg> */
    IQL_META_HELP,          /* .help, .? (client only) */
    IQL_META_QUIT,          /* .quit, .exit, .q (client only) */
    IQL_META_LOAD,          /* .load <arg> [mode] (client only) */
    IQL_META_USER,          /* .user ...: text holds the words after .user */
    IQL_META_APIKEY,        /* .apikey ...: text holds the words after .apikey */
    IQL_META_AGENT,         /* .agent ...: text holds the words after .agent */
} iql_meta_kind;

typedef struct iql_meta {
    iql_meta_kind kind;
    const char *arg, *arg2, *arg3; /* arguments as typed (NULL when absent) */
    int64_t index; /* 1-based index for RULE_REMOVE, RULE_EDIT, SESSION_DROP_INDEX */
    const char
        *text; /* rest of the line for DEBUG, WHY, WHY_NOT, RULE_EDIT, INDEX_CREATE options */
    /* DEBUG, WHY, WHY_FULL: the query in `text`; WHY_NOT: `?` and the target in `text`.
       Parsed with the statement, so that running it parses nothing (NULL and inner_err
       when it does not parse). */
    const struct iql_stmt *inner;
    const char *inner_err;
} iql_meta;

typedef enum iql_stmt_kind {
    IQL_STMT_META,
    IQL_STMT_TYPE_DECL,
    IQL_STMT_UPDATE,
    IQL_STMT_PERSIST_RULE,   /* +head <- body */
    IQL_STMT_SCHEMA,         /* +name(col: type, ...) */
    IQL_STMT_SESSION_SCHEMA, /* name(col: type, ...) */
    IQL_STMT_INSERT,         /* +rel(...) or +rel[...] */
    IQL_STMT_DROP_RULE,      /* -name */
    IQL_STMT_DELETE,         /* -rel(...) or -rel[...] */
    IQL_STMT_COND_DELETE,    /* -rel(args) <- body */
    IQL_STMT_QUERY,          /* ?goal, ... */
    IQL_STMT_SESSION_RULE,   /* head <- body */
    IQL_STMT_SESSION_FACT,   /* rel(constants) */
} iql_stmt_kind;

typedef struct iql_stmt {
    iql_stmt_kind kind;
    union {
        iql_meta meta;           /* META */
        iql_type_decl type_decl; /* TYPE_DECL */
        iql_update update;       /* UPDATE */
        iql_rule rule;           /* PERSIST_RULE, SESSION_RULE, COND_DELETE (head = target) */
        iql_schema schema;       /* SCHEMA, SESSION_SCHEMA */
        iql_facts facts;         /* INSERT, DELETE, SESSION_FACT (one tuple) */
        const char *drop_name;   /* DROP_RULE */
        iql_query query;         /* QUERY */
    } u;
} iql_stmt;

#endif

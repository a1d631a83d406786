/* The IQL parser (parser.h): statement text to syntax tree.
 *
 * The statement is classified with the reference's decision order (iql-language.md
 * 2.1), then cut into spans (rule head and body, literals, arguments) by quote- and
 * bracket-aware splitting (lexer.h), and each argument span is parsed as a term. The
 * error texts are a contract and quote the exact span the reference quotes (`Invalid
 * term: 'Y).'`, `Expected parentheses: (1, 2).`), which is why the parser is organised
 * around spans of the statement text rather than a token stream. Unlike the reference,
 * splitting never cuts inside a string or vector literal, and `<-`, `==`, `:=` and
 * comparison operators inside strings are not operators.
 *
 * Everything is allocated in the caller's arena; recursion is bounded (MAX_DEPTH) so no
 * input can exhaust the stack. */
#include "iql/parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "iql/lexer.h"
#include "iql/print.h"

enum { MAX_DEPTH = 128 };

/* A byte range [b, e) of the statement text. */
typedef struct span {
    size_t b, e;
} span;

typedef struct pctx {
    il_arena *a;
    const char *s;   /* the statement text */
    const char *err; /* the first error, arena-allocated */
    unsigned depth;  /* current nesting of terms, arithmetic and types */
} pctx;

/* Sort annotations collected from a query's goal atom. */
typedef struct sort_acc {
    iql_sort_key *v;
    uint32_t n, cap;
} sort_acc;

/* ---- spans and errors ---------------------------------------------------------------- */

static inline span sp(size_t b, size_t e) {
    return (span){b, e};
}
static inline size_t slen(span t) {
    return t.e - t.b;
}
static inline bool sempty(span t) {
    return t.e <= t.b;
}

static span trim(const pctx *p, span t) {
    while (t.b < t.e && iql_lex_space((unsigned char)p->s[t.b])) t.b++;
    while (t.e > t.b && iql_lex_space((unsigned char)p->s[t.e - 1])) t.e--;
    return t;
}

static bool starts_with(const pctx *p, span t, const char *lit) {
    size_t n = strlen(lit);
    return slen(t) >= n && memcmp(p->s + t.b, lit, n) == 0;
}

static bool ends_with(const pctx *p, span t, const char *lit) {
    size_t n = strlen(lit);
    return slen(t) >= n && memcmp(p->s + t.e - n, lit, n) == 0;
}

static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive (ASCII) comparison of a span with a lowercase literal. */
static bool ieq(const pctx *p, span t, const char *lit) {
    size_t n = strlen(lit);
    if (slen(t) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (lower(p->s[t.b + i]) != lit[i]) return false;
    return true;
}

static bool all_ident(const pctx *p, span t) {
    if (sempty(t)) return false;
    for (size_t i = t.b; i < t.e; i++)
        if (!iql_lex_ident((unsigned char)p->s[i])) return false;
    return true;
}

/* A variable name: identifier characters, the first uppercase or `_`. */
static bool is_var_name(const pctx *p, span t) {
    if (!all_ident(p, t)) return false;
    unsigned char c = (unsigned char)p->s[t.b];
    return iql_lex_upper(c) || c == '_';
}

static const char *sdup(pctx *p, span t) {
    return il_arena_strndup(p->a, p->s + t.b, slen(t));
}

static bool fail(pctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(pctx *p, const char *fmt, ...) {
    if (p->err) return false;
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof small) {
        p->err = il_arena_strndup(p->a, small, (size_t)n);
        return false;
    }
    char *m = il_arena_alloc(p->a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(m, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->err = m;
    return false;
}

/* The same for an error text that no reference transcript fixes: the message ends with
 * where in the statement the offending text starts, ` (line L, column C)` (1-based;
 * columns count characters, not bytes). */
static bool fail_at(pctx *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_at(pctx *p, size_t pos, const char *fmt, ...) {
    if (p->err) return false;
    il_buf b;
    il_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    il_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) {
        unsigned char c = (unsigned char)p->s[i];
        if (c == '\n') {
            line++;
            col = 1;
        } else if ((c & 0xC0) != 0x80) {
            col++;
        }
    }
    il_buf_printf(&b, " (line %zu, column %zu)", line, col);
    p->err = il_arena_strdup(p->a, il_buf_str(&b));
    il_buf_free(&b);
    return false;
}

/* printf arguments for quoting a span. */
#define SPAN_ARG(p, t) (int)slen(t), (p)->s + (t).b

static bool enter(pctx *p) {
    if (p->depth >= MAX_DEPTH) return fail(p, "Expression nested too deeply");
    p->depth++;
    return true;
}

/* The position of the last `c` in [b, e), or e (strings are not skipped: the reference
 * takes the last parenthesis of the raw text). */
static size_t find_last(const pctx *p, span t, char c) {
    for (size_t i = t.e; i > t.b; i--)
        if (p->s[i - 1] == c) return i - 1;
    return t.e;
}

/* ---- builtin functions and aggregates -------------------------------------------------- */

static const struct builtin {
    const char *name;
    uint32_t arity;
} BUILTINS[] = {
    {"abs", 1},
    {"abs_float64", 1},
    {"abs_int64", 1},
    {"ceil", 1},
    {"concat", 3},
    {"cos", 1},
    {"cosine", 2},
    {"cosine_int8", 2},
    {"dequantize", 1},
    {"dequantize_scaled", 2},
    {"dot", 2},
    {"dot_int8", 2},
    {"euclidean", 2},
    {"euclidean_int8", 2},
    {"exp", 1},
    {"floor", 1},
    {"interval_contains", 4},
    {"interval_duration", 2},
    {"intervals_overlap", 4},
    {"len", 1},
    {"log", 1},
    {"lower", 1},
    {"lsh_bucket", 3},
    {"lsh_multi_probe", 4},
    {"lsh_probes", 3},
    {"manhattan", 2},
    {"manhattan_int8", 2},
    {"max_val", 2},
    {"min_val", 2},
    {"normalize", 1},
    {"point_in_interval", 3},
    {"pow", 2},
    {"quantize_linear", 1},
    {"quantize_symmetric", 1},
    {"replace", 3},
    {"sign", 1},
    {"sin", 1},
    {"sqrt", 1},
    {"substr", 3},
    {"tan", 1},
    {"time_add", 2},
    {"time_after", 2},
    {"time_before", 2},
    {"time_between", 3},
    {"time_decay", 3},
    {"time_decay_linear", 3},
    {"time_diff", 2},
    {"time_now", 0},
    {"time_sub", 2},
    {"to_float", 1},
    {"to_int", 1},
    {"trim", 1},
    {"upper", 1},
    {"vec_add", 2},
    {"vec_dim", 1},
    {"vec_scale", 2},
    {"within_last", 3},
};

const char *iql_builtin_name(size_t i) {
    return i < sizeof BUILTINS / sizeof BUILTINS[0] ? BUILTINS[i].name : NULL;
}

bool iql_builtin_lookup(const char *name, size_t len, const char **canon, uint32_t *arity) {
    char low[24];
    if (len == 0 || len >= sizeof low) return false;
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)name[i] >= 0x80 || name[i] == 0) return false;
        low[i] = lower(name[i]);
    }
    low[len] = 0;
    size_t lo = 0, hi = sizeof BUILTINS / sizeof BUILTINS[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(low, BUILTINS[mid].name);
        if (c == 0) {
            if (canon) *canon = BUILTINS[mid].name;
            if (arity) *arity = BUILTINS[mid].arity;
            return true;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

static bool agg_lookup(const pctx *p, span name, iql_agg_kind *kind) {
    static const struct {
        const char *name;
        iql_agg_kind kind;
    } aggs[] = {
        {"count", IQL_AGG_COUNT},
        {"count_distinct", IQL_AGG_COUNT_DISTINCT},
        {"countdistinct", IQL_AGG_COUNT_DISTINCT},
        {"sum", IQL_AGG_SUM},
        {"min", IQL_AGG_MIN},
        {"max", IQL_AGG_MAX},
        {"avg", IQL_AGG_AVG},
        {"top_k", IQL_AGG_TOP_K},
        {"top_k_threshold", IQL_AGG_TOP_K_THRESHOLD},
        {"within_radius", IQL_AGG_WITHIN_RADIUS},
    };
    for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++) {
        if (ieq(p, name, aggs[i].name)) {
            *kind = aggs[i].kind;
            return true;
        }
    }
    return false;
}

/* ---- terms ------------------------------------------------------------------------------ */

static iql_term *parse_term(pctx *p, span t);

static iql_term *mk(pctx *p, iql_term_kind kind) {
    iql_term *t = il_arena_calloc(p->a, sizeof *t);
    t->kind = kind;
    return t;
}

/* A number constant: Rust i64 syntax gives an int (a float when it overflows), Rust f64
 * syntax a finite float. NULL (without error) when the text is not a number. */
static iql_term *number_term(pctx *p, span t, bool negate) {
    const char *s = p->s + t.b;
    int64_t iv;
    bool overflow;
    double fv;
    if (iql_lex_int(s, slen(t), &iv, &overflow) && !overflow) {
        iql_term *r = mk(p, IQL_T_INT);
        r->u.ival = negate ? -iv : iv;
        return r;
    }
    if (iql_lex_float(s, slen(t), &fv)) {
        iql_term *r = mk(p, IQL_T_FLOAT);
        r->u.fval = negate ? -fv : fv;
        return r;
    }
    return NULL;
}

/* `- 5`: a minus sign, spaces, then an unsigned number. */
static iql_term *negative_number(pctx *p, span t) {
    if (slen(t) < 2 || p->s[t.b] != '-') return NULL;
    span rest = trim(p, sp(t.b + 1, t.e));
    if (sempty(rest)) return NULL;
    char c = p->s[rest.b];
    if (!iql_lex_digit((unsigned char)c) && c != '.') return NULL;
    return number_term(p, rest, true);
}

static iql_term *parse_string(pctx *p, span t) {
    size_t n = slen(t) - 2;
    char *buf = il_arena_alloc(p->a, n + 1);
    iql_term *r = mk(p, IQL_T_STRING);
    r->u.str.len = iql_lex_unescape(p->s + t.b + 1, n, buf);
    r->u.str.ptr = buf;
    return r;
}

/* `[e1, e2]`: every element a number, read as f64. */
static iql_term *parse_vector(pctx *p, span t) {
    span inner = trim(p, sp(t.b + 1, t.e - 1));
    iql_term *r = mk(p, IQL_T_VECTOR);
    if (sempty(inner)) return r;
    uint32_t n = 1;
    for (size_t i = inner.b; i < inner.e; i++) n += p->s[i] == ',';
    r->u.vec.elems = il_arena_alloc(p->a, n * sizeof(double));
    size_t b = inner.b;
    for (uint32_t k = 0; k < n; k++) {
        size_t e = b;
        while (e < inner.e && p->s[e] != ',') e++;
        span el = trim(p, sp(b, e));
        if (!iql_lex_float(p->s + el.b, slen(el), &r->u.vec.elems[k])) {
            fail_at(p, el.b, "Invalid vector element: '%.*s'", SPAN_ARG(p, el));
            return NULL;
        }
        b = e + 1;
    }
    r->u.vec.n = n;
    return r;
}

/* Rust `usize::from_str`. */
static bool parse_usize(const pctx *p, span t, uint64_t *v) {
    int64_t iv;
    bool overflow;
    if (sempty(t) || p->s[t.b] == '-') return false;
    if (!iql_lex_int(p->s + t.b, slen(t), &iv, &overflow) || overflow) return false;
    *v = (uint64_t)iv;
    return true;
}

/* The specs of a ranking aggregate, `V`, `V:asc` or `V:desc` each, from position b of
 * params. Exactly one may be annotated; without annotation there must be one variable. */
static bool parse_agg_specs(pctx *p, span params, size_t b, iql_term *r, iql_sort_dir dflt) {
    uint32_t n = 1;
    for (size_t i = b; i < params.e; i++) n += p->s[i] == ',';
    iql_agg_spec *specs = il_arena_alloc(p->a, n * sizeof *specs);
    uint32_t k = 0, annotated = 0, order = 0;
    while (b <= params.e) {
        size_t e = iql_lex_split(p->s, b, params.e, 0);
        span part = trim(p, sp(b, e));
        iql_sort_dir dir = IQL_SORT_NONE;
        if (ends_with(p, part, ":asc")) {
            dir = IQL_SORT_ASC;
            part = trim(p, sp(part.b, part.e - 4));
        } else if (ends_with(p, part, ":desc")) {
            dir = IQL_SORT_DESC;
            part = trim(p, sp(part.b, part.e - 5));
        }
        if (!is_var_name(p, part)) return false;
        if (dir != IQL_SORT_NONE) {
            annotated++;
            order = k;
        }
        specs[k].var = sdup(p, part);
        specs[k].dir = dir;
        k++;
        b = e + 1;
    }
    if (annotated > 1 || (annotated == 0 && k != 1)) return false;
    r->u.agg.specs = specs;
    r->u.agg.nspecs = k;
    r->u.agg.order_spec = order;
    r->u.agg.order = specs[order].dir != IQL_SORT_NONE ? specs[order].dir : dflt;
    return true;
}

/* `name<params>`: simple aggregates take one variable, ranking ones a parameter list. */
static iql_term *parse_agg(pctx *p, span t) {
    size_t lt = iql_lex_find(p->s, t.b, t.e, '<');
    span name = trim(p, sp(t.b, lt));
    span params = trim(p, sp(lt + 1, t.e - 1));
    iql_agg_kind kind;
    if (!agg_lookup(p, name, &kind)) {
        fail(p, "Unknown aggregate function: %.*s", SPAN_ARG(p, name));
        return NULL;
    }
    iql_term *r = mk(p, IQL_T_AGG);
    r->u.agg.kind = kind;
    const char *what;
    switch (kind) {
    case IQL_AGG_TOP_K:
        what = "top_k";
        break;
    case IQL_AGG_TOP_K_THRESHOLD:
        what = "top_k_threshold";
        break;
    case IQL_AGG_WITHIN_RADIUS:
        what = "within_radius";
        break;
    default:
        /* Taken verbatim like the reference: a malformed variable (`X, Y`) is reported by
         * the planner as a variable missing from the schema. */
        r->u.agg.var = sdup(p, params);
        return r;
    }
    size_t e0 = iql_lex_split(p->s, params.b, params.e, 0);
    span first = trim(p, sp(params.b, e0));
    bool ok = e0 < params.e;
    size_t b = e0 + 1;
    if (ok && kind == IQL_AGG_WITHIN_RADIUS) {
        ok = iql_lex_float(p->s + first.b, slen(first), &r->u.agg.param);
    } else if (ok) {
        ok = parse_usize(p, first, &r->u.agg.k);
        if (ok && kind == IQL_AGG_TOP_K_THRESHOLD) {
            size_t e1 = iql_lex_split(p->s, b, params.e, 0);
            span second = trim(p, sp(b, e1));
            ok = e1 < params.e && iql_lex_float(p->s + second.b, slen(second), &r->u.agg.param);
            b = e1 + 1;
        }
    }
    iql_sort_dir dflt = kind == IQL_AGG_WITHIN_RADIUS ? IQL_SORT_ASC : IQL_SORT_DESC;
    if (!ok || !parse_agg_specs(p, params, b, r, dflt)) {
        fail(p, "Invalid %s parameters: %.*s", what, SPAN_ARG(p, params));
        return NULL;
    }
    /* within_radius always ranks ascending; a written direction is kept for Display. */
    if (kind == IQL_AGG_WITHIN_RADIUS) r->u.agg.order = IQL_SORT_ASC;
    return r;
}

/* Parses the comma-separated terms of [inner] (a trailing empty piece is dropped, so
 * `(1,)` is `(1)`). With `sort`, a piece ending in `:asc`/`:desc` is recorded there and
 * parsed without the annotation. */
static bool parse_terms(pctx *p, span inner, unsigned flags, iql_term ***out, uint32_t *nout,
                        sort_acc *sort) {
    uint32_t n = 0;
    size_t last_b = inner.b;
    for (size_t b = inner.b;;) {
        size_t e = iql_lex_split(p->s, b, inner.e, flags);
        n++;
        last_b = b;
        if (e >= inner.e) break;
        b = e + 1;
    }
    if (sempty(trim(p, sp(last_b, inner.e)))) n--;
    *nout = n;
    *out = NULL;
    if (n == 0) return true;
    iql_term **terms = il_arena_alloc(p->a, n * sizeof *terms);
    size_t b = inner.b;
    for (uint32_t k = 0; k < n; k++) {
        size_t e = iql_lex_split(p->s, b, inner.e, flags);
        span piece = trim(p, sp(b, e));
        iql_sort_dir dir = IQL_SORT_NONE;
        if (sort && ends_with(p, piece, ":asc")) {
            dir = IQL_SORT_ASC;
            piece = trim(p, sp(piece.b, piece.e - 4));
        } else if (sort && ends_with(p, piece, ":desc")) {
            dir = IQL_SORT_DESC;
            piece = trim(p, sp(piece.b, piece.e - 5));
        }
        terms[k] = parse_term(p, piece);
        if (!terms[k]) return false;
        if (dir != IQL_SORT_NONE && terms[k]->kind == IQL_T_VAR) {
            if (sort->n == sort->cap) {
                uint32_t cap = sort->cap ? sort->cap * 2 : 4;
                iql_sort_key *v = il_arena_alloc(p->a, cap * sizeof *v);
                if (sort->n) memcpy(v, sort->v, sort->n * sizeof *v);
                sort->v = v;
                sort->cap = cap;
            }
            sort->v[sort->n++] = (iql_sort_key){terms[k]->u.var, dir};
        }
        b = e + 1;
    }
    *out = terms;
    return true;
}

/* `name(args)` where name is a builtin and the first `(` closes at the very end. Returns
 * false when t is not such a call; otherwise true with *out the call (NULL on error). */
static bool try_call(pctx *p, span t, iql_term **out) {
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    if (lp >= t.e || p->s[t.e - 1] != ')' || iql_lex_match_paren(p->s, lp, t.e) != t.e - 1)
        return false;
    span name = trim(p, sp(t.b, lp));
    const char *canon;
    if (!all_ident(p, name) || !iql_builtin_lookup(p->s + name.b, slen(name), &canon, NULL))
        return false;
    iql_term *r = mk(p, IQL_T_CALL);
    r->u.call.name = canon;
    *out = parse_terms(p, sp(lp + 1, t.e - 1), IQL_SPLIT_ANGLE, &r->u.call.args, &r->u.call.nargs,
                       NULL)
               ? r
               : NULL;
    return true;
}

/* ---- arithmetic --------------------------------------------------------------------------
 * The reference splits at the rightmost top-level operator of the lowest precedence
 * (left-associative, * / % binding tighter than + -). The same tree is built here in one
 * left-to-right pass; an operand that is not a primary is quoted in the error exactly as
 * the reference's split would quote it. */

static bool is_arith_op(char c) {
    return c == '+' || c == '-' || c == '*' || c == '/' || c == '%';
}

/* s[i] is `+` or `-` of a scientific exponent like `1e-5` or `2.E+3`. */
static bool exponent_sign(const char *s, size_t b, size_t i) {
    return i >= b + 2 && (s[i - 1] == 'e' || s[i - 1] == 'E') &&
           (iql_lex_digit((unsigned char)s[i - 2]) || s[i - 2] == '.');
}

/* s[i] is `-`: binary when the previous non-space byte ends an operand. */
static bool minus_is_binary(const char *s, size_t b, size_t i) {
    while (i > b && iql_lex_space((unsigned char)s[i - 1])) i--;
    if (i == b) return false;
    unsigned char c = (unsigned char)s[i - 1];
    return iql_lex_ident(c) || c == ')';
}

/* The reference's test for "this term is an arithmetic expression". */
static bool has_arith_op(const pctx *p, span t) {
    const char *s = p->s;
    size_t angle = 0;
    for (size_t i = t.b; i < t.e; i++) {
        char c = s[i];
        if (c == '"') {
            i = iql_lex_string_end(s, i, t.e);
        } else if (c == '<') {
            angle++;
        } else if (c == '>') {
            if (angle) angle--;
        } else if (angle == 0) {
            if (c == '*' || c == '/' || c == '%') return true;
            if (c == '+' && !exponent_sign(s, t.b, i)) return true;
            if (c == '-' && i > t.b && !exponent_sign(s, t.b, i) && minus_is_binary(s, t.b, i))
                return true;
        }
    }
    return false;
}

/* The next binary operator at nesting depth 0 of an operand starting at b, or e. An
 * operator with nothing before it in the operand is a sign, not an operator. */
static size_t next_binop(const char *s, size_t b, size_t e, char *op) {
    size_t depth = 0;
    bool seen = false;
    for (size_t i = b; i < e; i++) {
        char c = s[i];
        if (c == '"') {
            i = iql_lex_string_end(s, i, e);
        } else if (c == '(' || c == '[') {
            depth++;
        } else if (c == ')' || c == ']') {
            if (depth) depth--;
        } else if (depth == 0 && seen && is_arith_op(c)) {
            bool binary = true;
            if ((c == '+' || c == '-') && exponent_sign(s, b, i)) binary = false;
            if (c == '-' && !minus_is_binary(s, b, i)) binary = false;
            if (binary) {
                *op = c;
                return i;
            }
        }
        if (!iql_lex_space((unsigned char)c)) seen = true;
    }
    *op = 0;
    return e;
}

static iql_term *parse_arith(pctx *p, span t, unsigned *height);

/* *height gets the height of the operand's tree (0 for a leaf). */
static iql_term *arith_primary(pctx *p, span t, unsigned *height) {
    t = trim(p, t);
    *height = 0;
    if (slen(t) >= 2 && p->s[t.b] == '(' && iql_lex_match_paren(p->s, t.b, t.e) == t.e - 1)
        return parse_arith(p, sp(t.b + 1, t.e - 1), height);
    iql_term *r = number_term(p, t, false);
    if (!r) r = negative_number(p, t);
    if (r) return r;
    /* Like the reference, any identifier is a variable here, whatever its case. */
    if (all_ident(p, t)) {
        r = mk(p, IQL_T_VAR);
        r->u.var = sdup(p, t);
        return r;
    }
    fail_at(p, t.b, "Invalid arithmetic expression: '%.*s'", SPAN_ARG(p, t));
    return NULL;
}

/* A chain like `X + 1 + 1 + ...` is read iteratively but makes a tree as deep as it is
 * long, and everything after the parser walks trees recursively: so the height of an
 * expression tree is bounded, not just the nesting of the text. */
static iql_term *arith_node(pctx *p, char op, iql_term *lhs, unsigned hl, iql_term *rhs,
                            unsigned hr, unsigned *height) {
    *height = 1 + (hl > hr ? hl : hr);
    if (*height > MAX_DEPTH) {
        fail(p, "Expression nested too deeply");
        return NULL;
    }
    iql_term *r = mk(p, IQL_T_ARITH);
    r->u.arith.op = op;
    r->u.arith.lhs = lhs;
    r->u.arith.rhs = rhs;
    return r;
}

static iql_term *parse_arith(pctx *p, span t, unsigned *height) {
    if (!enter(p)) return NULL;
    iql_term *sum = NULL, *prod = NULL;
    unsigned hsum = 0, hprod = 0;
    char sum_op = 0, prod_op = 0;
    for (size_t b = t.b;;) {
        char op;
        size_t e = next_binop(p->s, b, t.e, &op);
        /* A trailing operator has no right operand: the reference then fails on the
         * operand with the operator attached (`X +`). */
        if (op && sempty(trim(p, sp(e + 1, t.e)))) {
            e = t.e;
            op = 0;
        }
        unsigned hx;
        iql_term *x = arith_primary(p, sp(b, e), &hx);
        if (!x) return NULL;
        if (prod_op) {
            if (!(prod = arith_node(p, prod_op, prod, hprod, x, hx, &hprod))) return NULL;
        } else {
            prod = x;
            hprod = hx;
        }
        if (op == '*' || op == '/' || op == '%') {
            prod_op = op;
        } else {
            if (sum) {
                if (!(sum = arith_node(p, sum_op, sum, hsum, prod, hprod, &hsum))) return NULL;
            } else {
                sum = prod;
                hsum = hprod;
            }
            sum_op = op;
            prod = NULL;
            prod_op = 0;
        }
        if (!op) break;
        b = e + 1;
    }
    p->depth--;
    *height = hsum;
    return sum;
}

/* ---- the term dispatcher ------------------------------------------------------------------ */

/* The reference's parse_term order: placeholder, vector, string, aggregate, builtin call,
 * integer, float, arithmetic, `- number`, identifier; anything else is invalid. */
static iql_term *term_body(pctx *p, span t) {
    const char *s = p->s + t.b;
    size_t n = slen(t);
    if (n == 1 && s[0] == '_') return mk(p, IQL_T_PLACEHOLDER);
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') return parse_vector(p, t);
    if (n >= 2 && s[0] == '"' && iql_lex_string_end(p->s, t.b, t.e) == t.e - 1)
        return parse_string(p, t);
    if (n >= 2 && s[n - 1] == '>' && iql_lex_find(p->s, t.b, t.e, '<') < t.e)
        return parse_agg(p, t);
    iql_term *r;
    if (n && try_call(p, t, &r)) return r;
    if ((r = number_term(p, t, false))) return r;
    unsigned height;
    if (has_arith_op(p, t)) return parse_arith(p, t, &height);
    if ((r = negative_number(p, t))) return r;
    if (all_ident(p, t)) {
        unsigned char c = (unsigned char)s[0];
        if (iql_lex_upper(c) || c == '_') {
            r = mk(p, IQL_T_VAR);
            r->u.var = sdup(p, t);
            return r;
        }
        if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0)) {
            r = mk(p, IQL_T_BOOL);
            r->u.bval = n == 4;
            return r;
        }
        if (iql_lex_lower(c)) {
            fail_at(p, t.b,
                    "Unquoted atom '%.*s' is not allowed. Use \"%.*s\" (quoted string) instead.",
                    (int)n, s, (int)n, s);
            return NULL;
        }
    }
    fail(p, "Invalid term: '%.*s'", (int)n, s);
    return NULL;
}

static iql_term *parse_term(pctx *p, span t) {
    if (!enter(p)) return NULL;
    iql_term *r = term_body(p, trim(p, t));
    p->depth--;
    return r;
}

/* ---- atoms, literals, bodies, rules --------------------------------------------------------- */

/* `rel(args)`. The relation is the text before the first `(`. When that parenthesis
 * does not close at the very end (`edge(X, Y).`), the arguments are, as in the
 * reference, the rest of the text with trailing `)` removed, which puts the stray text
 * into the last argument and its error (`Invalid term: 'Y).'`). */
/* A bracket or quote in the text before an atom's or fact's `(` (or `[`) is a stray one,
 * not part of a name: an error, never a relation called `pe)rson`. */
static bool no_stray_in_name(pctx *p, span t, size_t open) {
    for (size_t i = t.b; i < open; i++)
        if (strchr("()[]\"", p->s[i]))
            return fail_at(p, i, "Unexpected '%c' before the arguments: %.*s", p->s[i],
                           SPAN_ARG(p, t));
    return true;
}

static bool parse_atom(pctx *p, span t, iql_atom *out, sort_acc *sort) {
    t = trim(p, t);
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    if (lp >= t.e) return fail(p, "Invalid atom: %.*s", SPAN_ARG(p, t));
    /* The atom's `(` must close at its end: a missing `)` or a stray one is an error,
       never an atom read from what is there. */
    size_t rp = iql_lex_match_paren(p->s, lp, t.e);
    if (rp >= t.e) return fail_at(p, lp, "Unclosed '(' in atom: %.*s", SPAN_ARG(p, t));
    if (!no_stray_in_name(p, t, lp)) return false;
    span inner = sp(lp + 1, t.e - 1);
    if (rp != t.e - 1) {
        /* The terms are read as the reference read them, so that its errors (`Invalid
           term: 'Y).'` for a rule ended by a period) keep their text. */
        inner.e = t.e;
        while (inner.e > inner.b && p->s[inner.e - 1] == ')') inner.e--;
    }
    out->rel = sdup(p, trim(p, sp(t.b, lp)));
    if (!parse_terms(p, inner, IQL_SPLIT_ANGLE, &out->args, &out->nargs, sort)) return false;
    if (rp != t.e - 1)
        return fail_at(p, rp + 1, "Unexpected text after the atom's ')': %.*s", SPAN_ARG(p, t));
    return true;
}

/* Our answer to the reference's silent "function-literal" defect: a body literal that
 * looks exactly like a builtin call (its name and argument count) is rejected. Relations
 * may still be named like builtins (the transcripts define `min_val(M)` and query
 * `?time_diff(A, B, D)`), so other argument counts, and a query's goal, stay atoms. */
static bool reject_call_literal(pctx *p, const iql_atom *a) {
    const char *canon;
    uint32_t arity;
    if (!iql_builtin_lookup(a->rel, strlen(a->rel), &canon, &arity) || a->nargs != arity)
        return true;
    return fail(p,
                "Function call '%s' cannot be used as a body literal; compare its result, e.g. "
                "B = %s(...), B = true",
                canon, canon);
}

/* Fails with `hnsw_nearest: <what>, got '<term>'`. */
static bool fail_hnsw_term(pctx *p, const char *what, const iql_term *t) {
    il_buf b;
    il_buf_init(&b);
    iql_fmt_term(t, &b);
    fail(p, "hnsw_nearest: %s, got '%s'", what, il_buf_str(&b));
    il_buf_free(&b);
    return false;
}

static bool is_upper_var(const iql_term *t) {
    return t->kind == IQL_T_VAR && t->u.var[0] >= 'A' && t->u.var[0] <= 'Z';
}

/* `hnsw_nearest("index", Query, K, IdVar, DistVar[, EfSearch])` (iql-language.md 2.10):
 * an atom by its syntax, checked here so that a malformed one never reaches a plan. */
static bool check_hnsw_literal(pctx *p, const iql_atom *a, bool negated) {
    if (strcmp(a->rel, "hnsw_nearest") != 0) return true;
    if (negated) return fail(p, "hnsw_nearest cannot be negated");
    if (a->nargs < 5 || a->nargs > 6)
        return fail(p,
                    "hnsw_nearest requires 5-6 arguments (index, query, k, id_var, dist_var [, "
                    "ef_search]), got %u",
                    a->nargs);
    if (a->args[0]->kind != IQL_T_STRING)
        return fail(p, "hnsw_nearest: first argument must be a string literal (index name)");
    const iql_term *q = a->args[1];
    if (q->kind != IQL_T_VECTOR && q->kind != IQL_T_VAR)
        return fail_hnsw_term(p, "query must be a vector literal or a variable", q);
    const iql_term *k = a->args[2];
    if (k->kind != IQL_T_INT || k->u.ival < 0)
        return fail_hnsw_term(p, "k must be a positive integer", k);
    if (k->u.ival < 1) return fail(p, "hnsw_nearest: k must be >= 1");
    if (!is_upper_var(a->args[3]))
        return fail_hnsw_term(p, "id_var must be a variable (uppercase)", a->args[3]);
    if (!is_upper_var(a->args[4]))
        return fail_hnsw_term(p, "distance_var must be a variable (uppercase)", a->args[4]);
    if (a->nargs == 6 && (a->args[5]->kind != IQL_T_INT || a->args[5]->u.ival < 1))
        return fail_hnsw_term(p, "ef_search must be a positive integer", a->args[5]);
    if (k->u.ival > 100000) return fail(p, "hnsw_nearest: k must be <= 100000");
    if (a->nargs == 6 && a->args[5]->u.ival > 100000)
        return fail(p, "hnsw_nearest: ef_search must be <= 100000");
    return true;
}

/* The first comparison operator at depth 0 outside strings, searched like the reference:
 * the first operator in the order != <= >= < > = that occurs at all wins, at its first
 * position. Returns false when there is none. */
static bool find_comparison(const pctx *p, span t, size_t *pos, size_t *oplen, iql_cmp_op *op) {
    static const iql_cmp_op order[6] = {IQL_CMP_NE, IQL_CMP_LE, IQL_CMP_GE,
                                        IQL_CMP_LT, IQL_CMP_GT, IQL_CMP_EQ};
    size_t first[6];
    for (int k = 0; k < 6; k++) first[k] = t.e;
    size_t depth = 0;
    for (size_t i = t.b; i < t.e; i++) {
        char c = p->s[i], d = i + 1 < t.e ? p->s[i + 1] : 0;
        if (c == '"') {
            i = iql_lex_string_end(p->s, i, t.e);
            continue;
        }
        if (c == '(' || c == '[') depth++;
        if ((c == ')' || c == ']') && depth) depth--;
        if (depth) continue;
        int k = -1;
        if (c == '!' && d == '=') k = 0;
        if (c == '<' && d == '=' && first[1] == t.e) first[1] = i;
        if (c == '>' && d == '=' && first[2] == t.e) first[2] = i;
        if (c == '<') k = 3;
        if (c == '>') k = 4;
        if (c == '=') k = 5;
        if (k >= 0 && first[k] == t.e) first[k] = i;
    }
    for (int k = 0; k < 6; k++) {
        if (first[k] < t.e) {
            *pos = first[k];
            *oplen = k < 3 ? 2 : 1;
            *op = order[k];
            return true;
        }
    }
    return false;
}

/* One body literal: `!atom`, `lhs op rhs`, or an atom. `goal` is set for a query's
 * goal candidate: its sort annotations go to `goal`, and it may be named like a builtin. */
static bool parse_literal(pctx *p, span t, iql_literal *lit, sort_acc *goal) {
    t = trim(p, t);
    memset(lit, 0, sizeof *lit);
    if (p->s[t.b] == '!') {
        size_t b = t.b;
        while (b < t.e && p->s[b] == '!') b++;
        lit->kind = IQL_LIT_NEG;
        return parse_atom(p, sp(b, t.e), &lit->atom, NULL) && reject_call_literal(p, &lit->atom) &&
               check_hnsw_literal(p, &lit->atom, true);
    }
    if (iql_lex_find2(p->s, t.b, t.e, "==") < t.e) return fail(p, "Use '=' for equality, not '=='");
    size_t pos, oplen;
    iql_cmp_op op;
    if (find_comparison(p, t, &pos, &oplen, &op)) {
        lit->kind = IQL_LIT_CMP;
        lit->op = op;
        lit->lhs = parse_term(p, sp(t.b, pos));
        lit->rhs = lit->lhs ? parse_term(p, sp(pos + oplen, t.e)) : NULL;
        return lit->rhs != NULL;
    }
    lit->kind = IQL_LIT_ATOM;
    return parse_atom(p, t, &lit->atom, goal) && (goal || reject_call_literal(p, &lit->atom)) &&
           check_hnsw_literal(p, &lit->atom, false);
}

/* A rule body: literals separated by top-level commas; empty pieces are dropped, so a
 * trailing comma is harmless. With `sort` (a query), the first positive atom is the
 * goal and its sort annotations are collected there. */
static bool parse_body(pctx *p, span t, iql_literal **out, uint32_t *nout, sort_acc *sort) {
    uint32_t n = 0;
    for (size_t b = t.b;;) {
        size_t e = iql_lex_split(p->s, b, t.e, 0);
        if (!sempty(trim(p, sp(b, e)))) n++;
        if (e >= t.e) break;
        b = e + 1;
    }
    *nout = 0;
    *out = n ? il_arena_alloc(p->a, n * sizeof **out) : NULL;
    bool have_goal = false;
    for (size_t b = t.b; *nout < n;) {
        size_t e = iql_lex_split(p->s, b, t.e, 0);
        span piece = trim(p, sp(b, e));
        b = e + 1;
        if (sempty(piece)) continue;
        iql_literal *lit = &(*out)[*nout];
        if (!parse_literal(p, piece, lit, have_goal ? NULL : sort)) return false;
        have_goal = have_goal || lit->kind == IQL_LIT_ATOM;
        ++*nout;
    }
    return true;
}

static bool term_has_var(const iql_term *t) {
    switch (t->kind) {
    case IQL_T_VAR:
    case IQL_T_AGG:
        return true;
    case IQL_T_ARITH:
        return term_has_var(t->u.arith.lhs) || term_has_var(t->u.arith.rhs);
    case IQL_T_CALL:
        for (uint32_t i = 0; i < t->u.call.nargs; i++)
            if (term_has_var(t->u.call.args[i])) return true;
        return false;
    default:
        return false;
    }
}

/* `head <- body`. */
static bool parse_rule(pctx *p, span t, iql_rule *r) {
    t = trim(p, t);
    size_t arrow = iql_lex_find2(p->s, t.b, t.e, "<-");
    size_t body_b = arrow < t.e ? arrow + 2 : t.e;
    if (arrow < t.e && iql_lex_find2(p->s, body_b, t.e, "<-") < t.e)
        return fail_at(p, t.b, "Invalid rule: %.*s", SPAN_ARG(p, t));
    if (!parse_atom(p, sp(t.b, arrow), &r->head, NULL)) return false;
    if (!parse_body(p, sp(body_b, t.e), &r->body, &r->nbody, NULL)) return false;
    if (r->nbody == 0) {
        for (uint32_t i = 0; i < r->head.nargs; i++) {
            if (term_has_var(r->head.args[i]))
                return fail(p, "Empty rule body with head variables is not allowed. Use "
                               "'foo(constant).' for facts, or add body predicates.");
        }
    }
    return true;
}

/* ---- queries ------------------------------------------------------------------------------- */

static bool apply_limit(pctx *p, const iql_atom *a, iql_query *q) {
    if (a->nargs < 1 || a->nargs > 2 || a->args[0]->kind != IQL_T_INT ||
        (a->nargs == 2 && a->args[1]->kind != IQL_T_INT))
        return fail(p, "limit() expects 1 or 2 integer arguments: limit(N) or limit(N, Offset)");
    if (a->args[0]->u.ival < 0) return fail(p, "limit must be non-negative");
    if (a->nargs == 2 && a->args[1]->u.ival < 0) return fail(p, "offset must be non-negative");
    q->limit = a->args[0]->u.ival;
    q->offset = a->nargs == 2 ? a->args[1]->u.ival : 0;
    return true;
}

/* `?goal, lit, ...` (t is the text after `?`). The goal is the first positive atom;
 * every other literal is kept in order, except `limit(N[, O])`. */
static bool parse_query(pctx *p, span t, iql_query *q) {
    if (iql_lex_find2(p->s, t.b, t.e, "<-") < t.e)
        return fail(p, "Query cannot contain a rule definition (<-). Register the rule first "
                       "with + then query it with ?");
    sort_acc sort = {0};
    iql_literal *lits;
    uint32_t n;
    if (!parse_body(p, t, &lits, &n, &sort)) return false;
    uint32_t goal = n;
    for (uint32_t i = 0; i < n && goal == n; i++)
        if (lits[i].kind == IQL_LIT_ATOM) goal = i;
    if (goal == n) return fail(p, "Query must have at least one positive goal");
    q->goal = lits[goal].atom;
    q->sort = sort.v;
    q->nsort = sort.n;
    q->limit = -1;
    q->offset = 0;
    q->extra = n > 1 ? il_arena_alloc(p->a, (n - 1) * sizeof *q->extra) : NULL;
    q->nextra = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i == goal) continue;
        if (lits[i].kind == IQL_LIT_ATOM && strcmp(lits[i].atom.rel, "limit") == 0) {
            if (!apply_limit(p, &lits[i].atom, q)) return false;
            continue;
        }
        q->extra[q->nextra++] = lits[i];
    }
    return true;
}

/* ---- facts: inserts, deletes, session facts ------------------------------------------------- */

/* The tuple of `rel(args)`; t starts at the `(` and must end with `)`. */
static bool parse_tuple_args(pctx *p, span t, iql_tuple *tu) {
    t = trim(p, t);
    if (slen(t) < 2 || p->s[t.e - 1] != ')')
        return fail(p, "Expected parentheses: %.*s", SPAN_ARG(p, t));
    return parse_terms(p, sp(t.b + 1, t.e - 1), IQL_SPLIT_ANGLE, &tu->terms, &tu->n, NULL);
}

/* `rel[(..), (..), term]`: pieces in parentheses are tuples, others 1-tuples. Empty
 * tuples are dropped (the reference skips them). */
static bool parse_bulk(pctx *p, span t, iql_facts *f, bool insert) {
    if (slen(t) < 2 || p->s[t.b] != '[' || p->s[t.e - 1] != ']')
        return fail(p, "Bulk %s must be in format: relation[(t1), (t2), ...]",
                    insert ? "insert" : "delete");
    span inner = sp(t.b + 1, t.e - 1);
    /* One pass over the pieces (a bulk insert can be long), the array doubling in the
       arena. */
    uint32_t cap = 16;
    f->tuples = il_arena_alloc(p->a, cap * sizeof *f->tuples);
    f->ntuples = 0;
    for (size_t b = inner.b;;) {
        size_t e = iql_lex_split(p->s, b, inner.e, 0);
        span piece = trim(p, sp(b, e));
        bool last = e >= inner.e;
        b = e + 1;
        if (f->ntuples == cap) {
            iql_tuple *grown = il_arena_alloc(p->a, 2 * cap * sizeof *grown);
            memcpy(grown, f->tuples, cap * sizeof *grown);
            f->tuples = grown;
            cap *= 2;
        }
        iql_tuple *tu = &f->tuples[f->ntuples];
        if (sempty(piece)) {
            if (last) break;
            return fail(p, "Invalid term: ''");
        }
        if (slen(piece) >= 2 && p->s[piece.b] == '(' && p->s[piece.e - 1] == ')') {
            if (!parse_terms(p, sp(piece.b + 1, piece.e - 1), IQL_SPLIT_ANGLE, &tu->terms, &tu->n,
                             NULL))
                return false;
            if (tu->n == 0) { /* dropped, as the reference does */
                if (last) break;
                continue;
            }
        } else {
            tu->terms = il_arena_alloc(p->a, sizeof *tu->terms);
            tu->n = 1;
            if (!(tu->terms[0] = parse_term(p, piece))) return false;
        }
        f->ntuples++;
        if (last) break;
    }
    return true;
}

/* A fact of no columns, `flag()`, names a relation outright: anything else before `()`
 * (`?!p()`, a typo) keeps the error that empty parentheses always had. */
static bool check_empty_fact(pctx *p, span name, const iql_tuple *t) {
    if (t->n) return true;
    if (!sempty(name) && iql_lex_lower((unsigned char)p->s[name.b]) && all_ident(p, name))
        return true;
    return fail(p, "Fact must have at least one argument");
}

/* The text after `+` or `-` of an insert or delete (2.3, 2.5). */
static bool parse_facts(pctx *p, span t, iql_facts *f, bool insert) {
    size_t lb = iql_lex_find(p->s, t.b, t.e, '[');
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    if (!no_stray_in_name(p, t, lb < lp ? lb : lp)) return false;
    if (lb < t.e && lb < lp) {
        f->rel = sdup(p, trim(p, sp(t.b, lb)));
        f->bulk = true;
        return parse_bulk(p, trim(p, sp(lb, t.e)), f, insert);
    }
    if (lp >= t.e) return fail_at(p, t.b, "Invalid insert syntax: +%.*s", SPAN_ARG(p, t));
    f->rel = sdup(p, trim(p, sp(t.b, lp)));
    f->tuples = il_arena_calloc(p->a, sizeof *f->tuples);
    f->ntuples = 1;
    /* `+flag()` is a fact of no columns: a proposition that holds */
    return parse_tuple_args(p, sp(lp, t.e), &f->tuples[0]) &&
           check_empty_fact(p, trim(p, sp(t.b, lp)), &f->tuples[0]);
}

/* ---- schemas and types ----------------------------------------------------------------------- */

static bool validate_relation_name(pctx *p, span n) {
    if (sempty(n)) return fail(p, "Relation name cannot be empty");
    unsigned char c = (unsigned char)p->s[n.b];
    if (!iql_lex_lower(c) && c < 0x80)
        return fail(p,
                    "Relation name '%.*s' must start with lowercase letter.\n(Uppercase names are "
                    "for type declarations.)",
                    SPAN_ARG(p, n));
    if (!all_ident(p, n)) return fail_at(p, n.b, "Invalid relation name: '%.*s'", SPAN_ARG(p, n));
    return true;
}

/* The reference's has_typed_arguments: some argument holds `name: type` where name is
 * not a number or string and type starts like a base type or an Uppercase name. */
static bool has_typed_arguments(const pctx *p, span args) {
    static const char *const bases[] = {"int", "string", "bool", "float", "list"};
    /* No colon at all: no typed argument (most facts; one memchr over a bulk insert). */
    if (args.b >= args.e || !memchr(p->s + args.b, ':', args.e - args.b)) return false;
    for (size_t b = args.b;;) {
        size_t e = iql_lex_split(p->s, b, args.e, IQL_SPLIT_BRACE);
        for (size_t c = b; c < e; c++) {
            if (p->s[c] == '"') {
                c = iql_lex_string_end(p->s, c, e);
                continue;
            }
            if (p->s[c] != ':') continue;
            span before = trim(p, sp(b, c));
            if (sempty(before) || iql_lex_digit((unsigned char)p->s[before.b]) ||
                p->s[before.b] == '"')
                continue;
            span after = trim(p, sp(c + 1, e));
            if (!sempty(after) && iql_lex_upper((unsigned char)p->s[after.b])) return true;
            for (size_t k = 0; k < sizeof bases / sizeof bases[0]; k++)
                if (starts_with(p, after, bases[k])) return true;
        }
        if (e >= args.e) return false;
        b = e + 1;
    }
}

static bool parse_type(pctx *p, span t, iql_type *ty);

static bool parse_column(pctx *p, span part, iql_column *col) {
    size_t colon = iql_lex_find(p->s, part.b, part.e, ':');
    if (colon >= part.e)
        return fail(p, "Column definition '%.*s' must have type: 'name: type'", SPAN_ARG(p, part));
    span name = trim(p, sp(part.b, colon));
    if (sempty(name)) return fail(p, "Column name cannot be empty");
    for (size_t i = name.b; i < name.e; i++) {
        /* The reference also admits aggregate- and expression-shaped names. */
        if (!iql_lex_ident((unsigned char)p->s[i]) && !strchr("<>+-*/%", p->s[i]))
            return fail(p, "Invalid column name: '%.*s'", SPAN_ARG(p, name));
    }
    col->name = sdup(p, name);
    return parse_type(p, sp(colon + 1, part.e), &col->type);
}

/* Comma-separated `name: type` columns of [inner]; empty parts are skipped. */
static bool parse_columns(pctx *p, span inner, iql_column **out, uint32_t *nout) {
    uint32_t n = 0;
    for (size_t b = inner.b;;) {
        size_t e = iql_lex_split(p->s, b, inner.e, IQL_SPLIT_BRACE);
        n += !sempty(trim(p, sp(b, e)));
        if (e >= inner.e) break;
        b = e + 1;
    }
    *out = n ? il_arena_calloc(p->a, n * sizeof **out) : NULL;
    *nout = 0;
    for (size_t b = inner.b; *nout < n;) {
        size_t e = iql_lex_split(p->s, b, inner.e, IQL_SPLIT_BRACE);
        span part = trim(p, sp(b, e));
        b = e + 1;
        if (sempty(part)) continue;
        if (!parse_column(p, part, &(*out)[*nout])) return false;
        ++*nout;
    }
    return true;
}

static bool unknown_type(pctx *p, span t) {
    return fail(p, "Unknown base type: '%.*s'. Use int, string, bool, float, or a type name.",
                SPAN_ARG(p, t));
}

/* Type expressions (2.11): base keywords (any case), vector[N] / vector(N), list[T],
 * records { f: T, ... }, Base(refinements...) and Uppercase named types. */
static bool type_body(pctx *p, span t, iql_type *ty) {
    size_t n = slen(t);
    const char *s = p->s + t.b;
    memset(ty, 0, sizeof *ty);
    if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
        iql_column *fields;
        uint32_t nfields;
        ty->kind = IQL_TY_RECORD;
        return parse_columns(p, sp(t.b + 1, t.e - 1), &fields, &nfields);
    }
    size_t w = t.b;
    while (w < t.e && iql_lex_ident((unsigned char)p->s[w])) w++;
    span word = sp(t.b, w), rest = trim(p, sp(w, t.e));
    if (ieq(p, word, "list") && slen(rest) >= 2 && p->s[rest.b] == '[' && p->s[rest.e - 1] == ']') {
        iql_type elem;
        ty->kind = IQL_TY_LIST;
        return parse_type(p, sp(rest.b + 1, rest.e - 1), &elem);
    }
    /* Refinements `(...)` (or a vector's `[N]`) must close at the end; they carry no
     * checks of ours beyond a vector dimension. */
    span refine = sp(rest.e, rest.e);
    if (!sempty(rest)) {
        char open = p->s[rest.b], close = p->s[rest.e - 1];
        if (!((open == '(' && close == ')') || (open == '[' && close == ']')))
            return unknown_type(p, t);
        refine = trim(p, sp(rest.b + 1, rest.e - 1));
    }
    if (ieq(p, word, "int")) {
        ty->kind = IQL_TY_INT;
    } else if (ieq(p, word, "string")) {
        ty->kind = IQL_TY_STRING;
    } else if (ieq(p, word, "bool")) {
        ty->kind = IQL_TY_BOOL;
    } else if (ieq(p, word, "float")) {
        ty->kind = IQL_TY_FLOAT;
    } else if (ieq(p, word, "vector") || ieq(p, word, "vec") || ieq(p, word, "embedding")) {
        uint64_t dim;
        ty->kind = IQL_TY_VECTOR;
        if (parse_usize(p, refine, &dim) && dim <= UINT32_MAX) ty->dim = (uint32_t)dim;
    } else if (!sempty(word) && iql_lex_upper((unsigned char)p->s[word.b])) {
        ty->kind = IQL_TY_NAMED;
        ty->name = sdup(p, word);
    } else {
        return unknown_type(p, t);
    }
    return true;
}

static bool parse_type(pctx *p, span t, iql_type *ty) {
    if (!enter(p)) return false;
    bool ok = type_body(p, trim(p, t), ty);
    p->depth--;
    return ok;
}

/* `name(col: type, ...)`, the name validated (t is the text without `+`). */
static bool parse_schema(pctx *p, span t, iql_schema *sc) {
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    span name = trim(p, sp(t.b, lp));
    if (!validate_relation_name(p, name)) return false;
    span rest = trim(p, sp(lp, t.e));
    if (slen(rest) < 2 || p->s[rest.e - 1] != ')')
        return fail(p, "Missing closing parenthesis in schema declaration");
    sc->rel = sdup(p, name);
    /* has_typed_arguments found a typed column, so there is at least one. */
    return parse_columns(p, sp(rest.b + 1, rest.e - 1), &sc->cols, &sc->ncols);
}

/* `type Name: expr` (2.12). */
static bool parse_type_decl(pctx *p, span t, iql_type_decl *d) {
    while (starts_with(p, t, "type ")) t = trim(p, sp(t.b + 5, t.e));
    size_t colon = iql_lex_find(p->s, t.b, t.e, ':');
    if (colon >= t.e)
        return fail(p, "Type declaration must contain ':' (e.g., 'type Email: string.')");
    span name = trim(p, sp(t.b, colon));
    if (sempty(name)) return fail(p, "Type name cannot be empty");
    if (!iql_lex_upper((unsigned char)p->s[name.b]))
        return fail(p, "Type name '%.*s' must start with uppercase letter", SPAN_ARG(p, name));
    d->name = sdup(p, name);
    return parse_type(p, sp(colon + 1, t.e), &d->type);
}

/* ---- atomic updates ---------------------------------------------------------------------------
 */

/* `-a(..), +b(..) <- body`: returns 0 when t is not an update (the head is not made only
 * of `-`/`+` items with at least one of each), 1 when parsed, -1 on error. */
static int try_update(pctx *p, span t, iql_update *u) {
    size_t arrow = iql_lex_find2(p->s, t.b, t.e, "<-");
    if (arrow >= t.e) return 0;
    uint32_t ndel = 0, nins = 0;
    for (size_t b = t.b;;) {
        size_t e = iql_lex_split(p->s, b, arrow, 0);
        span item = trim(p, sp(b, e));
        if (!sempty(item)) {
            char c = p->s[item.b];
            if (c == '-')
                ndel++;
            else if (c == '+')
                nins++;
            else
                return 0;
        }
        if (e >= arrow) break;
        b = e + 1;
    }
    if (!ndel || !nins) return 0;
    if (iql_lex_find2(p->s, arrow + 2, t.e, "<-") < t.e) {
        fail_at(p, t.b, "Invalid rule: %.*s", SPAN_ARG(p, t));
        return -1;
    }
    u->dels = il_arena_calloc(p->a, ndel * sizeof *u->dels);
    u->ins = il_arena_calloc(p->a, nins * sizeof *u->ins);
    for (size_t b = t.b;;) {
        size_t e = iql_lex_split(p->s, b, arrow, 0);
        span item = trim(p, sp(b, e));
        if (!sempty(item)) {
            iql_atom *a = p->s[item.b] == '-' ? &u->dels[u->ndels++] : &u->ins[u->nins++];
            if (!parse_atom(p, sp(item.b + 1, item.e), a, NULL)) return -1;
        }
        if (e >= arrow) break;
        b = e + 1;
    }
    return parse_body(p, sp(arrow + 2, t.e), &u->body, &u->nbody, NULL) ? 1 : -1;
}

/* ---- meta commands ------------------------------------------------------------------------------
 */

enum { MAX_WORDS = 16 };

typedef struct words {
    span w[MAX_WORDS]; /* the first whitespace-separated words */
    uint32_t n;        /* how many of w are set */
    size_t end;        /* end of the command text */
} words;

static const char *word(pctx *p, const words *ws, uint32_t i) {
    return i < ws->n ? sdup(p, ws->w[i]) : NULL;
}

/* The text after word i, trimmed (empty when there is none). */
static span rest_after(const pctx *p, const words *ws, uint32_t i) {
    return trim(p, sp(i < ws->n ? ws->w[i].e : ws->end, ws->end));
}

static bool is_word(const pctx *p, const words *ws, uint32_t i, const char *lit) {
    return i < ws->n && ieq(p, ws->w[i], lit);
}

/* A 1-based index argument; *numeric false when the word is not a number. */
static bool parse_index(pctx *p, span w, int64_t *out, bool *numeric) {
    uint64_t v;
    *numeric = parse_usize(p, w, &v);
    if (!*numeric) return false;
    if (v == 0) return fail(p, "Index must be 1 or greater (1-based indexing)");
    *out = (int64_t)v;
    return true;
}

static bool meta_kg(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1) {
        m->kind = IQL_META_KG_SHOW;
        return true;
    }
    static const struct {
        const char *sub;
        iql_meta_kind kind;
        const char *usage;
    } simple[] = {
        {"create", IQL_META_KG_CREATE, "Usage: .kg create <name>"},
        {"use", IQL_META_KG_USE, "Usage: .kg use <name>"},
        {"drop", IQL_META_KG_DROP, "Usage: .kg drop <name>"},
    };
    if (is_word(p, ws, 1, "list")) {
        m->kind = IQL_META_KG_LIST;
        return true;
    }
    for (size_t i = 0; i < 3; i++) {
        if (!is_word(p, ws, 1, simple[i].sub)) continue;
        if (ws->n < 3) return fail(p, "%s", simple[i].usage);
        m->kind = simple[i].kind;
        m->arg = word(p, ws, 2);
        return true;
    }
    if (!is_word(p, ws, 1, "acl"))
        return fail(p, "Unknown kg subcommand: %.*s", SPAN_ARG(p, ws->w[1]));
    if (ws->n == 2)
        return fail(p, "Usage: .kg acl list [kg_name] | .kg acl grant <kg> <user> <role> | .kg "
                       "acl revoke <kg> <user>");
    if (is_word(p, ws, 2, "list")) {
        m->kind = IQL_META_KG_ACL_LIST;
        m->arg = word(p, ws, 3);
        return true;
    }
    if (is_word(p, ws, 2, "grant")) {
        if (ws->n < 6) return fail(p, "Usage: .kg acl grant <kg_name> <username> <role>");
        m->kind = IQL_META_KG_ACL_GRANT;
        m->arg3 = word(p, ws, 5);
    } else if (is_word(p, ws, 2, "revoke")) {
        if (ws->n < 5) return fail(p, "Usage: .kg acl revoke <kg_name> <username>");
        m->kind = IQL_META_KG_ACL_REVOKE;
    } else {
        return fail(p, "Unknown acl subcommand: %.*s. Use: list, grant, revoke",
                    SPAN_ARG(p, ws->w[2]));
    }
    m->arg = word(p, ws, 3);
    m->arg2 = word(p, ws, 4);
    return true;
}

static bool meta_rel(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1) {
        m->kind = IQL_META_REL_LIST;
    } else if (is_word(p, ws, 1, "drop")) {
        if (ws->n < 3) return fail(p, "Usage: .rel drop <name>");
        m->kind = IQL_META_REL_DROP;
        m->arg = word(p, ws, 2);
    } else {
        m->kind = IQL_META_REL_SHOW;
        m->arg = word(p, ws, 1);
    }
    return true;
}

static bool meta_rule_index(pctx *p, const words *ws, uint32_t i, iql_meta *m) {
    bool numeric;
    if (parse_index(p, ws->w[i], &m->index, &numeric)) return true;
    if (!numeric)
        fail(p, "Invalid index '%.*s': must be a number (1-based)", SPAN_ARG(p, ws->w[i]));
    return false;
}

static bool meta_rule(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1 || is_word(p, ws, 1, "list")) {
        m->kind = IQL_META_RULE_LIST;
        return true;
    }
    if (is_word(p, ws, 1, "def") || is_word(p, ws, 1, "clear")) {
        bool def = is_word(p, ws, 1, "def");
        if (ws->n < 3)
            return fail(p, def ? "Usage: .rule def <name>" : "Usage: .rule clear <name>");
        m->kind = def ? IQL_META_RULE_DEF : IQL_META_RULE_CLEAR;
        m->arg = word(p, ws, 2);
        return true;
    }
    if (is_word(p, ws, 1, "drop")) {
        if (ws->n < 3) return fail(p, "Usage: .rule drop <name> | .rule drop prefix <prefix>");
        if (is_word(p, ws, 2, "prefix")) {
            if (ws->n < 4) return fail(p, "Usage: .rule drop prefix <prefix>");
            m->kind = IQL_META_RULE_DROP_PREFIX;
            m->arg = word(p, ws, 3);
        } else {
            m->kind = IQL_META_RULE_DROP;
            m->arg = word(p, ws, 2);
        }
        return true;
    }
    if (is_word(p, ws, 1, "remove")) {
        if (ws->n < 4) return fail(p, "Usage: .rule remove <name> <index>");
        m->kind = IQL_META_RULE_REMOVE;
        m->arg = word(p, ws, 2);
        return meta_rule_index(p, ws, 3, m);
    }
    if (is_word(p, ws, 1, "edit")) {
        if (ws->n < 4)
            return fail(p, "Usage: .rule edit <name> <index> <rule>\nExample: .rule edit connected "
                           "2 rule connected(x: int, z: int) <- edge(x, y), connected(y, z)");
        m->kind = IQL_META_RULE_EDIT;
        m->arg = word(p, ws, 2);
        if (!meta_rule_index(p, ws, 3, m)) return false;
        span text = rest_after(p, ws, 3);
        if (sempty(text)) return fail(p, "Missing rule definition");
        m->text = sdup(p, text);
        return true;
    }
    m->kind = IQL_META_RULE_SHOW;
    m->arg = word(p, ws, 1);
    return true;
}

static bool meta_session(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1) {
        m->kind = IQL_META_SESSION_LIST;
    } else if (is_word(p, ws, 1, "clear")) {
        m->kind = IQL_META_SESSION_CLEAR;
    } else if (is_word(p, ws, 1, "drop")) {
        if (ws->n < 3) return fail(p, "Usage: .session drop <n|name>");
        bool numeric;
        if (parse_index(p, ws->w[2], &m->index, &numeric)) {
            m->kind = IQL_META_SESSION_DROP_INDEX;
        } else {
            if (numeric) return false;
            m->kind = IQL_META_SESSION_DROP_NAME;
            m->arg = word(p, ws, 2);
        }
    } else {
        return fail(p, "Unknown session subcommand: %.*s. Use: clear, drop <n|name>",
                    SPAN_ARG(p, ws->w[1]));
    }
    return true;
}

static bool meta_clear(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1 || (is_word(p, ws, 1, "prefix") && ws->n < 3))
        return fail(p, "Usage: .clear prefix <prefix>");
    if (!is_word(p, ws, 1, "prefix"))
        return fail(p, "Unknown clear subcommand: '%.*s'. Use: .clear prefix <prefix>",
                    SPAN_ARG(p, ws->w[1]));
    m->kind = IQL_META_CLEAR_PREFIX;
    m->arg = word(p, ws, 2);
    return true;
}

/* `.backup [name]` and `.backup status`: the name is checked by the engine, which knows
 * what a directory name may hold. */
static bool meta_backup(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n > 2) return fail(p, "Usage: .backup [name] | .backup status");
    if (ws->n == 2 && is_word(p, ws, 1, "status")) {
        m->kind = IQL_META_BACKUP_STATUS;
        return true;
    }
    m->kind = IQL_META_BACKUP;
    if (ws->n == 2) m->arg = word(p, ws, 1);
    return true;
}

/* `.debug`, `.why [full]` and `.why_not` take the rest of the line. */
static bool parse_stmt(il_arena *a, const char *text, size_t len, iql_stmt *out, const char **err);

/* The statement a `.why`, `.why full`, `.debug` or `.why_not` runs, parsed now; a parse
 * error is the command's to report when it runs. `.why_not`'s target must have the form
 * of a query's goal, checked on the target as the command trims it. */
static void meta_inner(pctx *p, iql_meta *m) {
    const char *text = m->text;
    size_t len = strlen(text);
    bool why_not = m->kind == IQL_META_WHY_NOT;
    if (why_not)
        while (len && (text[len - 1] == ' ' || text[len - 1] == '\t')) len--;
    /* in the arena: the tree may point into its source */
    char *q = il_arena_alloc(p->a, len + 2);
    q[0] = '?';
    memcpy(q + why_not, text, len);
    q[len + why_not] = 0;
    iql_stmt *st = il_arena_alloc(p->a, sizeof *st);
    const char *err = NULL;
    if (parse_stmt(p->a, q, len + why_not, st, &err))
        m->inner = st;
    else
        m->inner_err = err;
}

static bool meta_text(pctx *p, const words *ws, uint32_t after, iql_meta_kind kind,
                      const char *usage, iql_meta *m) {
    span text = rest_after(p, ws, after);
    if (sempty(text)) return fail(p, "%s", usage);
    m->kind = kind;
    m->text = sdup(p, text);
    if (kind == IQL_META_DEBUG || kind == IQL_META_WHY || kind == IQL_META_WHY_FULL ||
        kind == IQL_META_WHY_NOT)
        meta_inner(p, m);
    return true;
}

/* `.index create <name> on <rel>(<col>) [key value]...`: the options are validated here
 * and handed on as text. */
static bool meta_index_create(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n < 3)
        return fail(p, "Usage: .index create <name> on <relation>(<column>) [type hnsw] [metric "
                       "cosine] [m 16]");
    if (!is_word(p, ws, 3, "on"))
        return fail(p, "Missing 'on' keyword. Usage: .index create <name> on <relation>(<column>)");
    span spec = rest_after(p, ws, 3);
    if (sempty(spec)) return fail(p, "Missing relation specification after 'on'");
    span first = ws->w[4];
    size_t lp = iql_lex_find(p->s, first.b, first.e, '(');
    if (lp >= first.e)
        return fail(p, "Expected relation(column) format, got '%.*s'", SPAN_ARG(p, first));
    size_t rp = iql_lex_find(p->s, lp, spec.e, ')');
    if (rp >= spec.e) return fail(p, "Missing closing parenthesis in '%.*s'", SPAN_ARG(p, first));
    span col = trim(p, sp(lp + 1, rp));
    if (sempty(col)) return fail(p, "Empty column name in relation specification");
    m->kind = IQL_META_INDEX_CREATE;
    m->arg = word(p, ws, 2);
    m->arg2 = sdup(p, trim(p, sp(spec.b, lp)));
    m->arg3 = sdup(p, col);
    span opts = trim(p, sp(rp + 1, spec.e));
    if (!sempty(opts)) m->text = sdup(p, opts);
    for (size_t b = opts.b; b < opts.e;) {
        span key = sp(b, b);
        while (key.e < opts.e && !iql_lex_space((unsigned char)p->s[key.e])) key.e++;
        size_t v = key.e;
        while (v < opts.e && iql_lex_space((unsigned char)p->s[v])) v++;
        span val = sp(v, v);
        while (val.e < opts.e && !iql_lex_space((unsigned char)p->s[val.e])) val.e++;
        bool integer;
        const char *canon;
        if (ieq(p, key, "type") || ieq(p, key, "metric")) {
            integer = false;
            canon = NULL;
        } else if (ieq(p, key, "m")) {
            integer = true;
            canon = "m";
        } else if (ieq(p, key, "ef_construction") || ieq(p, key, "efc")) {
            integer = true;
            canon = "ef_construction";
        } else if (ieq(p, key, "ef_search") || ieq(p, key, "efs")) {
            integer = true;
            canon = "ef_search";
        } else {
            return fail(p,
                        "Unknown option: '%.*s'. Valid options: type, metric, m, "
                        "ef_construction, ef_search",
                        SPAN_ARG(p, key));
        }
        if (sempty(val)) return fail(p, "Missing value for '%.*s'", SPAN_ARG(p, key));
        uint64_t num;
        if (integer && !parse_usize(p, val, &num))
            return fail(p, "Invalid value for '%s': expected integer, got '%.*s'", canon,
                        SPAN_ARG(p, val));
        b = val.e;
        while (b < opts.e && iql_lex_space((unsigned char)p->s[b])) b++;
    }
    return true;
}

static bool meta_index(pctx *p, const words *ws, iql_meta *m) {
    if (ws->n == 1 || is_word(p, ws, 1, "list")) {
        m->kind = IQL_META_INDEX_LIST;
        return true;
    }
    if (is_word(p, ws, 1, "create")) return meta_index_create(p, ws, m);
    static const struct {
        const char *sub;
        iql_meta_kind kind;
    } subs[] = {{"drop", IQL_META_INDEX_DROP},
                {"stats", IQL_META_INDEX_STATS},
                {"rebuild", IQL_META_INDEX_REBUILD}};
    for (size_t i = 0; i < 3; i++) {
        if (!is_word(p, ws, 1, subs[i].sub)) continue;
        if (ws->n < 3) return fail(p, "Usage: .index %s <name>", subs[i].sub);
        m->kind = subs[i].kind;
        m->arg = word(p, ws, 2);
        return true;
    }
    return fail(p, "Unknown index subcommand: %.*s. Use: list, create, drop, stats, rebuild",
                SPAN_ARG(p, ws->w[1]));
}

static bool meta_load(pctx *p, const words *ws, iql_meta *m) {
    static const char *const modes[] = {"--replace", "-r", "replace", "--merge", "-m", "merge"};
    if (ws->n < 2) return fail(p, "Usage: .load <file> [--replace|--merge]");
    m->kind = IQL_META_LOAD;
    m->arg = word(p, ws, 1);
    if (ws->n < 3) return true;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (slen(ws->w[2]) == strlen(modes[i]) && starts_with(p, ws->w[2], modes[i])) {
            m->arg2 = word(p, ws, 2);
            return true;
        }
    }
    return fail(p, "Unknown load mode: %.*s. Use --replace or --merge", SPAN_ARG(p, ws->w[2]));
}

/* A statement starting with `.` (section 4): every leading dot is stripped, the first
 * word is matched case-insensitively, and arguments keep their case. */
static bool parse_meta(pctx *p, span t, iql_meta *m) {
    words ws = {.n = 0, .end = t.e};
    size_t i = t.b;
    while (i < t.e && p->s[i] == '.') i++;
    while (ws.n < MAX_WORDS) {
        while (i < t.e && iql_lex_space((unsigned char)p->s[i])) i++;
        if (i >= t.e) break;
        size_t b = i;
        while (i < t.e && !iql_lex_space((unsigned char)p->s[i])) i++;
        ws.w[ws.n++] = sp(b, i);
    }
    if (ws.n == 0) return fail(p, "Unknown meta command: .");
    if (is_word(p, &ws, 0, "kg")) return meta_kg(p, &ws, m);
    if (is_word(p, &ws, 0, "rel") || is_word(p, &ws, 0, "relation")) return meta_rel(p, &ws, m);
    if (is_word(p, &ws, 0, "rule")) return meta_rule(p, &ws, m);
    if (is_word(p, &ws, 0, "session") || is_word(p, &ws, 0, "rules"))
        return meta_session(p, &ws, m);
    if (is_word(p, &ws, 0, "clear")) return meta_clear(p, &ws, m);
    if (is_word(p, &ws, 0, "index") || is_word(p, &ws, 0, "idx")) return meta_index(p, &ws, m);
    if (is_word(p, &ws, 0, "load")) return meta_load(p, &ws, m);
    if (is_word(p, &ws, 0, "backup")) return meta_backup(p, &ws, m);
    if (is_word(p, &ws, 0, "debug"))
        return meta_text(p, &ws, 0, IQL_META_DEBUG, "Usage: .debug <query>", m);
    if (is_word(p, &ws, 0, "why_not"))
        return meta_text(p, &ws, 0, IQL_META_WHY_NOT, "Usage: .why_not <relation>(<values>)", m);
    if (is_word(p, &ws, 0, "why")) {
        if (is_word(p, &ws, 1, "full"))
            return meta_text(p, &ws, 1, IQL_META_WHY_FULL, "Usage: .why full <query>", m);
        return meta_text(p, &ws, 0, IQL_META_WHY, "Usage: .why <query>", m);
    }
    static const struct {
        const char *name;
        iql_meta_kind kind;
    } plain[] = {
        {"compact", IQL_META_COMPACT}, {"status", IQL_META_STATUS}, {"help", IQL_META_HELP},
        {"?", IQL_META_HELP},          {"quit", IQL_META_QUIT},     {"exit", IQL_META_QUIT},
        {"q", IQL_META_QUIT},          {"user", IQL_META_USER},     {"apikey", IQL_META_APIKEY},
        {"agent", IQL_META_AGENT},
    };
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++) {
        if (!is_word(p, &ws, 0, plain[k].name)) continue;
        m->kind = plain[k].kind;
        if (m->kind == IQL_META_USER || m->kind == IQL_META_APIKEY || m->kind == IQL_META_AGENT)
            m->text = sdup(p, rest_after(p, &ws, 0));
        return true;
    }
    return fail(p, "Unknown meta command: .%.*s", SPAN_ARG(p, ws.w[0]));
}

/* ---- the statement classifier ------------------------------------------------------------------
 */

/* Cuts an inline `//` comment (outside strings). */
static span strip_comment(const pctx *p, span t) {
    return sp(t.b, iql_lex_find2(p->s, t.b, t.e, "//"));
}

/* The text between the first `(` and the last `)` of t, when both exist in that order. */
static bool paren_args(const pctx *p, span t, span *args) {
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    size_t rp = find_last(p, t, ')');
    if (lp >= t.e || rp >= t.e || rp < lp) return false;
    *args = sp(lp + 1, rp);
    return true;
}

static bool contains2(const pctx *p, span t, const char *tok) {
    return iql_lex_find2(p->s, t.b, t.e, tok) < t.e;
}

static bool classify_plus(pctx *p, span t, iql_stmt *out) {
    span rest = sp(t.b + 1, t.e), args;
    if (contains2(p, rest, "<-")) {
        out->kind = IQL_STMT_PERSIST_RULE;
        return parse_rule(p, rest, &out->u.rule);
    }
    if (paren_args(p, rest, &args) && has_typed_arguments(p, args)) {
        out->kind = IQL_STMT_SCHEMA;
        return parse_schema(p, rest, &out->u.schema);
    }
    out->kind = IQL_STMT_INSERT;
    return parse_facts(p, rest, &out->u.facts, true);
}

static bool classify_minus(pctx *p, span t, iql_stmt *out) {
    span rest = sp(t.b + 1, t.e);
    bool arrow = contains2(p, rest, "<-");
    if (!arrow && iql_lex_find(p->s, rest.b, rest.e, '(') >= rest.e) {
        span name = trim(p, rest);
        out->kind = IQL_STMT_DROP_RULE;
        out->u.drop_name = sdup(p, name);
        return validate_relation_name(p, name);
    }
    if (arrow) {
        out->kind = IQL_STMT_COND_DELETE;
        return parse_rule(p, rest, &out->u.rule);
    }
    out->kind = IQL_STMT_DELETE;
    return parse_facts(p, rest, &out->u.facts, false);
}

static bool classify(pctx *p, span t, iql_stmt *out) {
    const char *s = p->s;
    if (sempty(t)) return fail(p, "Empty input");
    char c = s[t.b];
    if (c == '.') {
        out->kind = IQL_STMT_META;
        return parse_meta(p, t, &out->u.meta);
    }
    if (contains2(p, t, ":=")) return fail(p, "Invalid syntax: ':=' is not a valid operator");
    if (starts_with(p, t, "type ")) {
        out->kind = IQL_STMT_TYPE_DECL;
        return parse_type_decl(p, t, &out->u.type_decl);
    }
    if (c == '+' || c == '-') {
        int r = try_update(p, t, &out->u.update);
        if (r) {
            out->kind = IQL_STMT_UPDATE;
            return r > 0;
        }
        return c == '+' ? classify_plus(p, t, out) : classify_minus(p, t, out);
    }
    if (c == '?' && slen(t) >= 2) {
        unsigned char d = (unsigned char)s[t.b + 1];
        if (iql_lex_upper(d) || iql_lex_lower(d) || d >= 0x80) {
            out->kind = IQL_STMT_QUERY;
            return parse_query(p, sp(t.b + 1, t.e), &out->u.query);
        }
    }
    if (contains2(p, t, "<-")) {
        out->kind = IQL_STMT_SESSION_RULE;
        return parse_rule(p, t, &out->u.rule);
    }
    size_t lp = iql_lex_find(p->s, t.b, t.e, '(');
    if (lp < t.e) {
        span args;
        if (paren_args(p, t, &args) && has_typed_arguments(p, args)) {
            out->kind = IQL_STMT_SESSION_SCHEMA;
            return parse_schema(p, t, &out->u.schema);
        }
        if (!no_stray_in_name(p, t, lp)) return false;
        out->kind = IQL_STMT_SESSION_FACT;
        iql_facts *f = &out->u.facts;
        f->rel = sdup(p, trim(p, sp(t.b, lp)));
        f->tuples = il_arena_calloc(p->a, sizeof *f->tuples);
        f->ntuples = 1;
        return parse_tuple_args(p, sp(lp, t.e), &f->tuples[0]) &&
               check_empty_fact(p, trim(p, sp(t.b, lp)), &f->tuples[0]);
    }
    return fail(p, "Unrecognized statement: %.*s", SPAN_ARG(p, t));
}

/* Statements parsed by this process (iql_parse_count), and of them those read as ground
 * facts (iql_parse_fact_count). */
static uint64_t parsed_total, parsed_facts;

uint64_t iql_parse_count(void) {
    return __atomic_load_n(&parsed_total, __ATOMIC_RELAXED);
}

uint64_t iql_parse_fact_count(void) {
    return __atomic_load_n(&parsed_facts, __ATOMIC_RELAXED);
}

/* ---- ground facts, read directly -------------------------------------------------------- */

/* The identifier characters of ASCII: a name with others goes the general way. */
static bool fact_name_char(unsigned char c) {
    return c < 0x80 && iql_lex_ident(c);
}

/* What a string of a ground fact may hold: no escape, quote, bracket, comma, colon, `<`
 * or `/`, so that no search of the general path (for `<-`, `:=`, `//`, a typed argument,
 * the end of an argument) could read it otherwise. */
static bool fact_string_char(unsigned char c) {
    return fact_name_char(c) || c == ' ' || c == '-' || c == '.';
}

/* The end of one argument of a ground fact at s[i] (an integer of at most 18 digits, no
 * leading zero, or a plain string), or 0 when it is not one. */
static size_t fact_term_end(const char *s, size_t i, size_t e) {
    if (i >= e) return 0;
    if (s[i] == '"') {
        for (i++; i < e && fact_string_char((unsigned char)s[i]); i++) {
        }
        return i < e && s[i] == '"' ? i + 1 : 0;
    }
    if (s[i] == '-') i++;
    size_t d = i;
    while (i < e && iql_lex_digit((unsigned char)s[i])) i++;
    size_t digits = i - d;
    return digits && digits <= 18 && (digits == 1 || s[d] != '0') ? i : 0;
}

/* `+rel(a, b, ...)` or `-rel(a, b, ...)` on one line, each argument an integer or a plain
 * string (fact_term_end), arguments apart by a comma and spaces: the statement a server
 * receives most (one per write), read without the general path's searches for rules,
 * updates, schemas and comments. The tree is the one the general path builds (the parser's
 * tests compare the two); false, with nothing built, for anything else. */
static bool parse_ground_fact(il_arena *a, const char *s, size_t len, iql_stmt *out) {
    size_t b = 0, e = len;
    while (b < e && iql_lex_space((unsigned char)s[b])) b++;
    while (e > b && iql_lex_space((unsigned char)s[e - 1])) e--;
    if (e - b < 5 || (s[b] != '+' && s[b] != '-') || s[e - 1] != ')') return false;
    size_t name_b = b + 1, i = name_b;
    if (!iql_lex_lower((unsigned char)s[i])) return false;
    while (i < e && fact_name_char((unsigned char)s[i])) i++;
    if (i >= e || s[i] != '(') return false;
    size_t name_e = i++;
    uint32_t n = 0;
    for (size_t k = i;; n++) {
        while (k < e && s[k] == ' ') k++;
        if (!(k = fact_term_end(s, k, e))) return false;
        while (k < e && s[k] == ' ') k++;
        if (k == e - 1) { /* the closing parenthesis */
            n++;
            break;
        }
        if (k >= e || s[k++] != ',') return false;
    }
    memset(out, 0, sizeof *out);
    out->kind = s[b] == '+' ? IQL_STMT_INSERT : IQL_STMT_DELETE;
    iql_facts *f = &out->u.facts;
    f->rel = il_arena_strndup(a, s + name_b, name_e - name_b);
    f->tuples = il_arena_calloc(a, sizeof *f->tuples);
    f->ntuples = 1;
    iql_tuple *tu = &f->tuples[0];
    tu->terms = il_arena_alloc(a, n * sizeof *tu->terms);
    tu->n = n;
    for (uint32_t k = 0; k < n; k++) {
        while (s[i] == ' ') i++;
        size_t end = fact_term_end(s, i, e);
        iql_term *t = il_arena_calloc(a, sizeof *t);
        if (s[i] == '"') {
            t->kind = IQL_T_STRING;
            t->u.str.ptr = il_arena_strndup(a, s + i + 1, end - i - 2);
            t->u.str.len = end - i - 2;
        } else {
            bool overflow; /* never, at 18 digits */
            t->kind = IQL_T_INT;
            iql_lex_int(s + i, end - i, &t->u.ival, &overflow);
        }
        tu->terms[k] = t;
        i = end;
        while (s[i] == ' ') i++;
        i++; /* the comma, or the closing parenthesis */
    }
    return true;
}

bool iql_parse(il_arena *a, const char *text, size_t len, iql_stmt *out, const char **err) {
    __atomic_fetch_add(&parsed_total, 1, __ATOMIC_RELAXED);
    if (parse_ground_fact(a, text, len, out)) {
        __atomic_fetch_add(&parsed_facts, 1, __ATOMIC_RELAXED);
        return true;
    }
    return parse_stmt(a, text, len, out, err);
}

static bool parse_stmt(il_arena *a, const char *text, size_t len, iql_stmt *out, const char **err) {
    pctx p = {.a = a, .s = text, .err = NULL, .depth = 0};
    memset(out, 0, sizeof *out);
    span t = trim(&p, sp(0, len));
    t = trim(&p, strip_comment(&p, t));
    if (classify(&p, t, out)) return true;
    *err = p.err ? p.err : "Invalid statement";
    return false;
}

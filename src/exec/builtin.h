/* Builtin functions callable from rule bodies (`V = f(...)`), by family: math.c,
 * string.c, vector.c, quantize.c, lsh.c, time.c. A type mismatch gives Null, never an
 * error. */
#ifndef IL_EXEC_BUILTIN_H
#define IL_EXEC_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

typedef val_t (*exec_builtin_fn)(const val_t *args);

struct exec_builtin {
    const char *name; /* canonical lowercase name */
    uint32_t arity;   /* exact argument count */
    exec_builtin_fn fn;
};
typedef struct exec_builtin exec_builtin;

/* NULL when the engine has no implementation of that name. */
const exec_builtin *exec_builtin_find(const char *name);

/* Cheap bounds of a builtin's result over many rows at once: the arguments are args[],
 * except argument `arg`, which takes in turn the values rows[0], rows[stride], ... (n of
 * them). For row i, lo[i] <= result <= hi[i], or both are NaN when no bound is known
 * (evaluate it): NaN fails every comparison, so nothing is rejected from it. A filter on
 * the result can reject a row from its bounds alone; a scan asks for a run of rows per
 * call, so what depends on the other arguments is worked out once per run. */
typedef void (*exec_builtin_bounds_fn)(const val_t *args, uint32_t arg, const val_t *rows,
                                       size_t stride, size_t n, double *lo, double *hi);

typedef struct exec_builtin_bounds {
    const char *name;
    exec_builtin_bounds_fn bounds;
} exec_builtin_bounds;

/* The bounds function of a builtin, NULL when it has none. */
exec_builtin_bounds_fn exec_builtin_find_bounds(const exec_builtin *b);

#endif

/* Builtin functions callable from rule bodies (`V = f(...)`), by family: math.c,
 * string.c, vector.c, quantize.c, lsh.c, time.c. A type mismatch gives Null, never an
 * error. */
#ifndef IL_EXEC_BUILTIN_H
#define IL_EXEC_BUILTIN_H

#include <stdbool.h>
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

/* Cheap bounds [*lo, *hi] of a builtin's result for some arguments (false: none known;
 * evaluate it). A filter on the result can reject a row from them alone. */
typedef bool (*exec_builtin_bounds_fn)(const val_t *args, double *lo, double *hi);

typedef struct exec_builtin_bounds {
    const char *name;
    exec_builtin_bounds_fn bounds;
} exec_builtin_bounds;

/* The bounds function of a builtin, NULL when it has none. */
exec_builtin_bounds_fn exec_builtin_find_bounds(const exec_builtin *b);

#endif

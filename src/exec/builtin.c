/* Builtin lookup by canonical name across the families (math.c, string.c, ...). */
#include "exec/builtin.h"

#include <string.h>

#include "exec/builtin_impl.h"

static const exec_builtin *const families[] = {
    exec_math_builtins,     exec_string_builtins, exec_vector_builtins,
    exec_quantize_builtins, exec_lsh_builtins,    exec_time_builtins,
};

const exec_builtin *exec_builtin_find(const char *name) {
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const exec_builtin *b = families[f]; b->name; b++)
            if (strcmp(b->name, name) == 0) return b;
    return NULL;
}

exec_builtin_bounds_fn exec_builtin_find_bounds(const exec_builtin *b) {
    for (const exec_builtin_bounds *e = exec_vector_bounds; b && e->name; e++)
        if (strcmp(e->name, b->name) == 0) return e->bounds;
    return NULL;
}

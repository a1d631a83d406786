/* The builtin families' function tables, gathered by builtin.c. Private to src/exec. */
#ifndef IL_EXEC_BUILTIN_IMPL_H
#define IL_EXEC_BUILTIN_IMPL_H

#include "exec/builtin.h"

extern const exec_builtin exec_math_builtins[];
extern const exec_builtin exec_string_builtins[];
extern const exec_builtin exec_vector_builtins[];
extern const exec_builtin exec_quantize_builtins[];
extern const exec_builtin exec_lsh_builtins[];
extern const exec_builtin exec_time_builtins[];
extern const exec_builtin_bounds exec_vector_bounds[];

#endif

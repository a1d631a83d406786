/* Typed growable arrays as macros: IL_VEC(T) declares {T *v; uint32_t n, cap;}.
 * Elements live in one malloc'ed block; il_vec_push may move them, so pointers into
 * a vector are only valid until the next push. */
#ifndef IL_BASE_VEC_H
#define IL_BASE_VEC_H

#include <stdint.h>
#include <stdlib.h>

#define IL_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *v;                                                                                      \
        uint32_t n, cap;                                                                           \
    }

void il_vec_grow_(void **v, uint32_t *cap, uint32_t need, size_t elem);

#define il_vec_reserve(vec, need)                                                                  \
    do {                                                                                           \
        if ((need) > (vec).cap)                                                                    \
            il_vec_grow_((void **)&(vec).v, &(vec).cap, (need), sizeof *(vec).v);                  \
    } while (0)

#define il_vec_push(vec, x)                                                                        \
    do {                                                                                           \
        il_vec_reserve(vec, (vec).n + 1);                                                          \
        (vec).v[(vec).n++] = (x);                                                                  \
    } while (0)

#define il_vec_free(vec)                                                                           \
    do {                                                                                           \
        free((vec).v);                                                                             \
        (vec).v = NULL;                                                                            \
        (vec).n = (vec).cap = 0;                                                                   \
    } while (0)

#endif

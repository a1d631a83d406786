/* Growth policy for IL_VEC arrays (see vec.h). */
#include "base/vec.h"

void il_vec_grow_(void **v, uint32_t *cap, uint32_t need, size_t elem) {
    uint32_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    void *p = realloc(*v, (size_t)c * elem);
    if (!p) abort();
    *v = p;
    *cap = c;
}

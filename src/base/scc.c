/* Tarjan's strongly connected components with an explicit stack of (node, next edge)
 * frames instead of recursion. */
#include "base/scc.h"

#include <stdbool.h>
#include <stdlib.h>

#define UNVISITED UINT32_MAX

uint32_t il_scc(uint32_t n, uint32_t *const *adj, const uint32_t *nadj, uint32_t *comp) {
    uint32_t *index = malloc((n + 1) * sizeof *index);
    uint32_t *low = malloc((n + 1) * sizeof *low);
    uint32_t *stack = malloc((n + 1) * sizeof *stack);
    uint32_t *call_v = malloc((n + 1) * sizeof *call_v);
    uint32_t *call_e = malloc((n + 1) * sizeof *call_e);
    bool *on_stack = calloc(n + 1, sizeof *on_stack);
    uint32_t next = 0, sp = 0, ncomp = 0;
    for (uint32_t i = 0; i < n; i++) index[i] = UNVISITED;
    for (uint32_t root = 0; root < n; root++) {
        if (index[root] != UNVISITED) continue;
        uint32_t depth = 1;
        call_v[0] = root;
        call_e[0] = 0;
        index[root] = low[root] = next++;
        stack[sp++] = root;
        on_stack[root] = true;
        while (depth) {
            uint32_t v = call_v[depth - 1];
            uint32_t *e = &call_e[depth - 1];
            if (*e < nadj[v]) {
                uint32_t w = adj[v][(*e)++];
                if (index[w] == UNVISITED) {
                    index[w] = low[w] = next++;
                    stack[sp++] = w;
                    on_stack[w] = true;
                    call_v[depth] = w;
                    call_e[depth] = 0;
                    depth++;
                } else if (on_stack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                uint32_t w;
                do {
                    w = stack[--sp];
                    on_stack[w] = false;
                    comp[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
            depth--;
            if (depth && low[v] < low[call_v[depth - 1]]) low[call_v[depth - 1]] = low[v];
        }
    }
    free(index);
    free(low);
    free(stack);
    free(call_v);
    free(call_e);
    free(on_stack);
    return ncomp;
}

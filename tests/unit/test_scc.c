/* Unit tests of il_scc (base/scc.h): components and their order on a small graph, and
 * dependency chains long enough that a recursive walk would exhaust the stack. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "base/scc.h"

Test(scc, components_dependencies_first) {
    /* 0 -> 1 -> 2 -> 0, 2 -> 3, 3 <-> 4, 5 alone, 6 -> 6 */
    uint32_t e0[] = {1}, e1[] = {2}, e2[] = {0, 3}, e3[] = {4}, e4[] = {3}, e6[] = {6};
    uint32_t *adj[] = {e0, e1, e2, e3, e4, NULL, e6};
    uint32_t nadj[] = {1, 1, 2, 1, 1, 0, 1};
    uint32_t comp[7];
    cr_assert_eq(il_scc(7, adj, nadj, comp), 4);
    cr_expect(comp[0] == comp[1] && comp[1] == comp[2]);
    cr_expect(comp[3] == comp[4]);
    cr_expect(comp[3] != comp[0] && comp[5] != comp[0] && comp[5] != comp[3]);
    cr_expect(comp[6] != comp[0] && comp[6] != comp[3] && comp[6] != comp[5]);
    /* {3, 4} is read by {0, 1, 2}: it completes first */
    cr_expect_lt(comp[3], comp[0]);
}

/* A chain of a million links, then the same closed into one cycle. */
Test(scc, long_chain) {
    enum { N = 1000000 };
    uint32_t *next = malloc(N * sizeof *next), **adj = malloc(N * sizeof *adj);
    uint32_t *nadj = malloc(N * sizeof *nadj), *comp = malloc(N * sizeof *comp);
    for (uint32_t i = 0; i < N; i++) {
        next[i] = i + 1;
        adj[i] = &next[i];
        nadj[i] = i + 1 < N;
    }
    cr_assert_eq(il_scc(N, adj, nadj, comp), N);
    for (uint32_t i = 0; i + 1 < N; i++)
        if (comp[i] <= comp[i + 1]) cr_assert_fail("node %u completes before %u", i, i + 1);
    next[N - 1] = 0;
    nadj[N - 1] = 1;
    cr_assert_eq(il_scc(N, adj, nadj, comp), 1);
    free(next);
    free(adj);
    free(nadj);
    free(comp);
}

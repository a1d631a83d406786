/* Strongly connected components of a directed graph (Tarjan's algorithm, without
 * recursion: rule dependency chains can be as long as there are rules). */
#ifndef IL_BASE_SCC_H
#define IL_BASE_SCC_H

#include <stdint.h>

/* Nodes 0..n-1; adj[v][0..nadj[v]) are v's successors. Sets comp[v] to v's component
 * and returns how many there are. Components are numbered in the order they complete, so
 * every edge leads to a component numbered no higher than its source's: dependencies
 * first. */
uint32_t il_scc(uint32_t n, uint32_t *const *adj, const uint32_t *nadj, uint32_t *comp);

#endif

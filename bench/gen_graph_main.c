/* gen_graph_main: prints the benchmark datasets of docs/performance.md 3.2.
 *   gen_graph_main [--iql] random NODES EDGES   the SplitMix64 seed-42 random graph
 *   gen_graph_main [--iql] chains EDGES         the hot-chain graph
 * Without --iql it prints "src dst" lines, byte for byte like shared/tools/gen-graph.py;
 * with --iql it prints `+edge[(s, d), ...]` statements of 5,000 tuples (and, for chains,
 * `+label[(400i, "hot"), ...]` for the hot heads), one statement per line. */
#include "gen_graph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
    fprintf(stderr, "usage: gen_graph_main [--iql] random NODES EDGES\n"
                    "       gen_graph_main [--iql] chains EDGES\n");
    exit(2);
}

static uint64_t parse_count(const char *s) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') usage();
    return (uint64_t)v;
}

int main(int argc, char **argv) {
    int iql = 0;
    const char *args[3];
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iql") == 0)
            iql = 1;
        else if (nargs < 3)
            args[nargs++] = argv[i];
        else
            usage();
    }
    gg_edge *edges;
    size_t n, hot = 0;
    if (nargs == 3 && strcmp(args[0], "random") == 0) {
        n = (size_t)parse_count(args[2]);
        edges = gg_random_graph(parse_count(args[1]), n, 42);
    } else if (nargs == 2 && strcmp(args[0], "chains") == 0) {
        size_t requested = (size_t)parse_count(args[1]);
        edges = gg_chains(requested, &n);
        hot = gg_hot_count(gg_chain_count(requested));
    } else {
        usage();
        return 2;
    }
    if (!edges) {
        fprintf(stderr, "gen_graph_main: cannot make that graph (too many edges, or out of "
                        "memory)\n");
        return 1;
    }
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    int rc = 0;
    if (iql) {
        rc = gg_emit_edges("edge", edges, n, GG_CHUNK, gg_write_stmt, stdout);
        if (rc == 0 && hot > 0)
            rc = gg_emit_hot_labels("label", "hot", hot, GG_CHUNK, gg_write_stmt, stdout);
    } else {
        for (size_t i = 0; i < n && rc == 0; i++)
            if (printf("%" PRId64 " %" PRId64 "\n", edges[i].src, edges[i].dst) < 0) rc = -1;
    }
    free(edges);
    if (fflush(stdout) != 0) rc = -1;
    if (rc != 0) {
        fprintf(stderr, "gen_graph_main: write failed\n");
        return 1;
    }
    return 0;
}

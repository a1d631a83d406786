/* The child of the crash test: opens an engine on a data directory and writes numbered
 * statements until it is killed. Statement i inserts n(i, 0), n(i, 1), n(i, 2) at once;
 * every fifth also deletes the three tuples of i - 3. After il_execute returns it
 * writes "i\n" (or "d j\n" for a delete) to stdout with one write(2), unbuffered, so the
 * parent sees exactly the acknowledged statements.
 *
 * After LIMIT statements it waits to be killed, so a round's numbers stay in range.
 *
 * usage: crash_driver DATA_DIR FIRST LIMIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inputlayer.h"

static void ack(const char *line) {
    size_t n = strlen(line);
    if (write(1, line, n) != (ssize_t)n) exit(3); /* the parent is gone */
}

static void must(il_session *s, const char *text) {
    il_result *r = il_execute(s, text, strlen(text));
    if (il_result_kind_of(r) != IL_RESULT_MESSAGE) {
        fprintf(stderr, "crash_driver: %s: %s\n", text,
                il_result_nlines(r) ? il_result_line(r, 0) : "?");
        exit(2);
    }
    il_result_free(r);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fputs("usage: crash_driver DATA_DIR FIRST LIMIT\n", stderr);
        return 2;
    }
    char *err = NULL;
    il_engine *e = il_engine_open(argv[1], &err);
    if (!e) {
        fprintf(stderr, "crash_driver: %s\n", err ? err : "cannot open");
        return 1;
    }
    il_session *s = il_session_open(e);
    long first = atol(argv[2]), limit = atol(argv[3]);
    char text[256], line[64];
    for (long i = first;; i++) {
        if (i - first >= limit) pause();
        snprintf(text, sizeof text, "+n[(%ld, 0), (%ld, 1), (%ld, 2)]", i, i, i);
        must(s, text);
        snprintf(line, sizeof line, "%ld\n", i);
        ack(line);
        if (i % 5 == 0 && i - 3 >= first) {
            long j = i - 3;
            snprintf(text, sizeof text, "-n[(%ld, 0), (%ld, 1), (%ld, 2)]", j, j, j);
            must(s, text);
            snprintf(line, sizeof line, "d %ld\n", j);
            ack(line);
        }
    }
}

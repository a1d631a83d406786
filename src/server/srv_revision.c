/* Per-graph revisions (srv_revision.h): a list of counters by graph name. A dropped graph
 * keeps its counter, so that a graph created again under the name goes on from there and
 * a client never sees a revision go back. The list grows with the graphs ever changed,
 * which are few next to what each one holds. */
#include "server/srv_revision.h"

#include <stdlib.h>
#include <string.h>

typedef struct srv_kgrev {
    struct srv_kgrev *next;
    uint64_t revision;
    uint64_t statement; /* the statement that last moved it (srv_server.revision_stmt) */
    char kg[];
} srv_kgrev;

static srv_kgrev *find(srv_server *s, const char *kg, bool create) {
    for (srv_kgrev *r = s->kgrevs; r; r = r->next)
        if (strcmp(r->kg, kg) == 0) return r;
    if (!create) return NULL;
    size_t n = strlen(kg) + 1;
    srv_kgrev *r = calloc(1, sizeof *r + n);
    memcpy(r->kg, kg, n);
    r->next = s->kgrevs;
    s->kgrevs = r;
    return r;
}

void srv_revision_note(srv_server *s, const il_change *changes, size_t n) {
    uint64_t statement = ++s->revision_stmt;
    for (size_t i = 0; i < n; i++) {
        srv_kgrev *r = find(s, changes[i].graph, true);
        if (r->statement == statement) continue;
        r->statement = statement;
        r->revision++;
        s->revision_last = r->kg;
    }
}

void srv_revision_put_if_changed(srv_server *s, uint64_t statements_before, il_buf *b) {
    if (s->revision_stmt == statements_before || !s->revision_last) return;
    il_buf_printf(b, ",\"revision\":%llu", (unsigned long long)srv_revision(s, s->revision_last));
}

uint64_t srv_revision(srv_server *s, const char *kg) {
    srv_kgrev *r = find(s, kg, false);
    return r ? r->revision : 0;
}

void srv_revisions_free(srv_server *s) {
    while (s->kgrevs) {
        srv_kgrev *r = s->kgrevs;
        s->kgrevs = r->next;
        free(r);
    }
}

/* Per-graph revisions (srv_revision.h): a list of counters by graph name, each with the
 * revision at which each relation and the persistent rules last changed. Every counter
 * starts at the log position the server opened at (srv_server.revision_base), and so does
 * every "last changed" not seen in this run: what changed before the start is taken to
 * have changed at the start, so an expectation from an earlier run never passes over a
 * change it did not see. A dropped graph
 * keeps its counter, so that a graph created again under the name goes on from there and
 * a client never sees a revision go back. The list grows with the graphs ever changed,
 * which are few next to what each one holds.
 *
 * Changed only where statements are serialized; srv_revision may also be asked by a
 * reader that pinned a published revision without the engine lock (srv_exec.c): the list
 * only grows at its head and a graph's revision is stored atomically, with release, after
 * the engine counted the commit (il_session_pin_current). */
#include "server/srv_revision.h"

#include <stdlib.h>
#include <string.h>

/* When a relation of a graph last changed (its facts or its schema). */
typedef struct srv_relrev {
    struct srv_relrev *next;
    uint64_t revision;
    char name[];
} srv_relrev;

typedef struct srv_kgrev {
    struct srv_kgrev *next;
    uint64_t revision;
    uint64_t statement;     /* the program that last moved it (srv_server.revision_stmt) */
    uint64_t rules_changed; /* the revision at which a persistent rule last changed */
    uint64_t graph_changed; /* ... at which the graph was last created or dropped */
    srv_relrev *rels;       /* a list: expect_relations scopes are checked rarely */
    char kg[];
} srv_kgrev;

static srv_kgrev *find(srv_server *s, const char *kg, bool create) {
    for (srv_kgrev *r = __atomic_load_n(&s->kgrevs, __ATOMIC_ACQUIRE); r; r = r->next)
        if (strcmp(r->kg, kg) == 0) return r;
    if (!create) return NULL;
    size_t n = strlen(kg) + 1;
    srv_kgrev *r = calloc(1, sizeof *r + n);
    memcpy(r->kg, kg, n);
    r->revision = r->rules_changed = r->graph_changed = s->revision_base;
    r->next = s->kgrevs;
    __atomic_store_n(&s->kgrevs, r, __ATOMIC_RELEASE);
    return r;
}

static srv_relrev *find_rel(srv_kgrev *k, const char *rel, bool create) {
    for (srv_relrev *r = k->rels; r; r = r->next)
        if (strcmp(r->name, rel) == 0) return r;
    if (!create) return NULL;
    size_t n = strlen(rel) + 1;
    srv_relrev *r = calloc(1, sizeof *r + n);
    memcpy(r->name, rel, n);
    r->next = k->rels;
    k->rels = r;
    return r;
}

void srv_revision_note(srv_server *s, const il_change *changes, size_t n) {
    uint64_t statement = ++s->revision_stmt;
    for (size_t i = 0; i < n; i++) {
        srv_kgrev *r = find(s, changes[i].graph, true);
        if (r->statement != statement) {
            r->statement = statement;
            __atomic_store_n(&r->revision, r->revision + 1, __ATOMIC_RELEASE);
            s->revision_last = r->kg;
        }
        switch (changes[i].kind) {
        case IL_CHANGE_FACTS:
        case IL_CHANGE_SCHEMA:
            find_rel(r, changes[i].name, true)->revision = r->revision;
            break;
        case IL_CHANGE_RULE:
            r->rules_changed = r->revision;
            break;
        case IL_CHANGE_GRAPH:
            r->graph_changed = r->revision;
            break;
        }
    }
}

uint64_t srv_revision_of_rel(srv_server *s, const char *kg, const char *rel) {
    srv_kgrev *r = find(s, kg, false);
    if (!r) return s->revision_base;
    srv_relrev *rr = find_rel(r, rel, false);
    uint64_t at = rr ? rr->revision : 0;
    return at > r->graph_changed ? at : r->graph_changed;
}

uint64_t srv_revision_of_rules(srv_server *s, const char *kg) {
    srv_kgrev *r = find(s, kg, false);
    if (!r) return s->revision_base;
    return r->rules_changed > r->graph_changed ? r->rules_changed : r->graph_changed;
}

void srv_revision_put_if_changed(srv_server *s, uint64_t statements_before, il_buf *b) {
    if (s->revision_stmt == statements_before || !s->revision_last) return;
    il_buf_puts(b, ",\"revision\":");
    il_buf_put_u64(b, (unsigned long long)srv_revision(s, s->revision_last));
}

uint64_t srv_revision(srv_server *s, const char *kg) {
    srv_kgrev *r = find(s, kg, false);
    return r ? __atomic_load_n(&r->revision, __ATOMIC_ACQUIRE) : s->revision_base;
}

void srv_revisions_free(srv_server *s) {
    while (s->kgrevs) {
        srv_kgrev *r = s->kgrevs;
        s->kgrevs = r->next;
        while (r->rels) {
            srv_relrev *rr = r->rels;
            r->rels = rr->next;
            free(rr);
        }
        free(r);
    }
}

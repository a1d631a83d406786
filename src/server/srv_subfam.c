/* Families of standing queries (srv_subfam.h): one maintained view per family and a hash
 * index from key to members. A row reaches a member when each key column of the row
 * matches the member's constant the way an atom's constant argument matches a stored
 * value (exec_const_matches: numbers numerically, so the int key 2 also gets the stored
 * 2.0), which is exactly the row set the member's own query has. */
#include "server/srv_subfam.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"
#include "server/srv_keyrows.h"
#include "server/srv_keytab.h"
#include "server/srv_sublift.h"
#include "views/view.h"

struct srv_keyslot {
    srv_keynode node; /* in the family's slots */
    srv_member *members;
    val_t consts[];
};

struct srv_family {
    srv_family *next, *prev; /* in the server's list */
    char *kg, *text;
    view_t *view;
    uint32_t nkeys;
    uint32_t *cols;
    srv_keytab slots; /* by key */
    size_t nmembers;
    bool failed;         /* its view had failed when srv_families_route last looked */
    srv_keyrows *by_key; /* the view's rows by key, once a member asked for its rows */
};

static srv_keyslot *slot_for(srv_family *f, const val_t *consts) {
    uint64_t h = srv_key_hash(consts, f->nkeys);
    srv_keyslot *sl = (srv_keyslot *)srv_keytab_find(&f->slots, consts, h);
    if (sl) return sl;
    sl = calloc(1, sizeof *sl + f->nkeys * sizeof *consts);
    sl->node.hash = h;
    memcpy(sl->consts, consts, f->nkeys * sizeof *consts);
    srv_keytab_add(&f->slots, &sl->node);
    return sl;
}

static void drop_slot(srv_family *f, srv_keyslot *sl) {
    srv_keytab_remove(&f->slots, &sl->node);
    free(sl);
}

static bool row_matches(const srv_family *f, const val_t *row, const val_t *consts) {
    for (uint32_t k = 0; k < f->nkeys; k++)
        if (!exec_const_matches(row[f->cols[k]], consts[k])) return false;
    return true;
}

static void append(val_t **rows, size_t *n, size_t *cap, const val_t *row, uint32_t arity) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        *rows = realloc(*rows, *cap * arity * sizeof **rows);
    }
    memcpy(*rows + *n * arity, row, arity * sizeof *row);
    (*n)++;
}

static void deliver(const srv_family *f, srv_keyslot *sl, const val_t *row, bool added,
                    srv_member **touched) {
    uint32_t arity = view_arity(f->view);
    for (srv_member *m = sl->members; m; m = m->slot_next) {
        if (!m->touched) {
            m->touched = true;
            m->touched_next = *touched;
            *touched = m;
        }
        if (added)
            append(&m->added, &m->nadded, &m->cap_added, row, arity);
        else
            append(&m->removed, &m->nremoved, &m->cap_removed, row, arity);
    }
}

static void route_row(srv_family *f, const val_t *row, bool added, val_t *key,
                      srv_member **touched) {
    bool scan = false;
    for (uint32_t k = 0; k < f->nkeys; k++) {
        srv_key_kind kind = srv_key_of(row[f->cols[k]], &key[k]);
        if (kind == SRV_KEY_NONE) return;
        scan |= kind == SRV_KEY_SCAN;
    }
    if (!scan) {
        srv_keyslot *sl =
            (srv_keyslot *)srv_keytab_find(&f->slots, key, srv_key_hash(key, f->nkeys));
        if (sl && row_matches(f, row, sl->consts)) deliver(f, sl, row, added, touched);
        return;
    }
    for (size_t i = 0; i < f->slots.nbuckets; i++)
        for (srv_keynode *e = f->slots.buckets[i]; e; e = e->next) {
            srv_keyslot *sl = (srv_keyslot *)e;
            if (row_matches(f, row, sl->consts)) deliver(f, sl, row, added, touched);
        }
}

static void route_family(srv_family *f, srv_member **touched) {
    val_t *add = NULL, *rem = NULL;
    size_t nadd = 0, nrem = 0;
    view_take_delta(f->view, &add, &nadd, &rem, &nrem);
    uint32_t arity = view_arity(f->view);
    if (f->by_key && view_error(f->view)) {
        srv_keyrows_free(f->by_key); /* built again from whatever the view has next */
        f->by_key = NULL;
    }
    if (f->by_key) {
        for (size_t i = 0; i < nrem; i++) srv_keyrows_remove(f->by_key, rem + i * arity);
        for (size_t i = 0; i < nadd; i++) srv_keyrows_add(f->by_key, add + i * arity);
    }
    val_t *key = calloc(f->nkeys + 1, sizeof *key);
    for (size_t i = 0; i < nadd; i++) route_row(f, add + i * arity, true, key, touched);
    for (size_t i = 0; i < nrem; i++) route_row(f, rem + i * arity, false, key, touched);
    free(key);
    free(add);
    free(rem);
}

srv_member *srv_families_route(srv_server *s, bool *error_changed) {
    for (srv_family *f = s->sub_families; f; f = f->next) {
        route_family(f, &s->sub_touched);
        bool failed = view_error(f->view) != NULL;
        if (failed != f->failed) {
            f->failed = failed;
            *error_changed = true;
        }
    }
    srv_member *touched = s->sub_touched;
    s->sub_touched = NULL;
    return touched;
}

static srv_family *find_family(srv_server *s, const char *kg, const char *text) {
    for (srv_family *f = s->sub_families; f; f = f->next)
        if (!view_error(f->view) && strcmp(f->kg, kg) == 0 && strcmp(f->text, text) == 0) return f;
    return NULL;
}

bool srv_member_join(srv_server *s, il_session *ses, const char *kg, const char *query, size_t len,
                     srv_member *m, const char **err) {
    srv_lifted l;
    /* the key's strings are the member's own; the family's view interns for good */
    il_intern_scope *strings = il_intern_scope_new();
    il_intern_scope *previous = il_intern_scope_enter(strings);
    srv_sublift(query, len, &l);
    il_intern_scope_leave(previous);
    srv_family *f = find_family(s, kg, l.text);
    if (f) {
        /* What changed before the newcomer's snapshot belongs to the members already
         * there (publishing normally took it already). */
        route_family(f, &s->sub_touched);
    } else {
        view_t *v = view_open(ses, l.text, err);
        if (!v) {
            srv_lifted_free(&l);
            il_intern_scope_free(strings);
            return false;
        }
        f = calloc(1, sizeof *f);
        f->kg = strdup(kg);
        f->text = l.text;
        l.text = NULL;
        f->view = v;
        f->nkeys = l.nkeys;
        f->cols = l.cols;
        l.cols = NULL;
        srv_keytab_init(&f->slots, 8, f->nkeys, offsetof(srv_keyslot, consts));
        /* The view starts from its snapshot: nothing of it is a delta. */
        val_t *add = NULL, *rem = NULL;
        size_t nadd = 0, nrem = 0;
        view_take_delta(v, &add, &nadd, &rem, &nrem);
        free(add);
        free(rem);
        f->next = s->sub_families;
        if (f->next) f->next->prev = f;
        s->sub_families = f;
        __atomic_fetch_add(&s->nsub_views, 1, __ATOMIC_RELAXED);
    }
    memset(m, 0, sizeof *m);
    m->fam = f;
    m->strings = strings;
    m->consts = calloc(f->nkeys + 1, sizeof *m->consts);
    if (f->nkeys) memcpy(m->consts, l.consts, f->nkeys * sizeof *m->consts);
    srv_lifted_free(&l);
    m->slot = slot_for(f, m->consts);
    m->slot_next = m->slot->members;
    if (m->slot_next) m->slot_next->slot_prev = m;
    m->slot->members = m;
    f->nmembers++;
    __atomic_fetch_add(&s->nsubs_active, 1, __ATOMIC_RELAXED);
    return true;
}

static void close_family(srv_server *s, srv_family *f) {
    if (f->prev)
        f->prev->next = f->next;
    else
        s->sub_families = f->next;
    if (f->next) f->next->prev = f->prev;
    view_close(f->view);
    srv_keyrows_free(f->by_key);
    srv_keytab_free(&f->slots);
    free(f->cols);
    free(f->kg);
    free(f->text);
    free(f);
    __atomic_fetch_sub(&s->nsub_views, 1, __ATOMIC_RELAXED);
}

void srv_member_leave(srv_server *s, srv_member *m) {
    srv_family *f = m->fam;
    if (!f) return;
    if (m->touched) /* rows routed to it, not yet published: a short list */
        for (srv_member **pp = &s->sub_touched; *pp; pp = &(*pp)->touched_next)
            if (*pp == m) {
                *pp = m->touched_next;
                break;
            }
    if (m->slot_prev)
        m->slot_prev->slot_next = m->slot_next;
    else
        m->slot->members = m->slot_next;
    if (m->slot_next) m->slot_next->slot_prev = m->slot_prev;
    if (!m->slot->members) drop_slot(f, m->slot);
    if (--f->nmembers == 0) close_family(s, f);
    __atomic_fetch_sub(&s->nsubs_active, 1, __ATOMIC_RELAXED);
    free(m->consts);
    il_intern_scope_free(m->strings);
    free(m->added);
    free(m->removed);
    free(m->held_add);
    free(m->held_rem);
    memset(m, 0, sizeof *m);
}

uint32_t srv_member_arity(const srv_member *m) {
    return view_arity(m->fam->view);
}

const char *srv_member_error(const srv_member *m) {
    return view_error(m->fam->view);
}

size_t srv_member_rows(const srv_member *m, val_t **rows) {
    srv_family *f = m->fam;
    if (f->nkeys == 0 || view_error(f->view)) return view_rows(f->view, rows);
    if (!f->by_key) {
        /* Once per family: later members read their own key's rows. The view's delta
         * was routed just before (srv_member_join), so its rows are current. */
        val_t *all = NULL;
        size_t n = view_rows(f->view, &all);
        uint32_t arity = view_arity(f->view);
        f->by_key = srv_keyrows_new(arity, f->nkeys, f->cols);
        for (size_t i = 0; i < n; i++) srv_keyrows_add(f->by_key, all + i * arity);
        free(all);
    }
    return srv_keyrows_get(f->by_key, m->consts, rows);
}

void srv_member_clear(srv_member *m) {
    m->nadded = m->nremoved = 0;
    m->touched = false;
    m->touched_next = NULL;
}

/* ---- held changes ---- */

static _Thread_local size_t g_row_bytes;

static int row_cmp(const void *a, const void *b) {
    return memcmp(a, b, g_row_bytes);
}

static void sort_rows(val_t *rows, size_t n) {
    if (n > 1) qsort(rows, n, g_row_bytes, row_cmp);
}

static bool has_row(const val_t *rows, size_t n, const val_t *row) {
    return n && bsearch(row, rows, n, g_row_bytes, row_cmp);
}

/* Appends the rows of x (nx) that are not in y (ny, sorted) to out. */
static void put_missing(val_t *out, size_t *nout, const val_t *x, size_t nx, const val_t *y,
                        size_t ny, uint32_t arity) {
    for (size_t i = 0; i < nx; i++)
        if (!has_row(y, ny, x + i * arity))
            memcpy(out + (*nout)++ * arity, x + i * arity, g_row_bytes);
}

/* Each publish's rows are an exact difference, so what stays after netting is the
 * difference from the last delivered result. */
void srv_member_hold(srv_member *m) {
    uint32_t arity = srv_member_arity(m);
    if (arity && (m->nadded || m->nremoved)) {
        g_row_bytes = arity * sizeof(val_t);
        sort_rows(m->added, m->nadded);
        sort_rows(m->removed, m->nremoved);
        sort_rows(m->held_add, m->nheld_add);
        sort_rows(m->held_rem, m->nheld_rem);
        val_t *add = malloc((m->nheld_add + m->nadded + 1) * g_row_bytes);
        val_t *rem = malloc((m->nheld_rem + m->nremoved + 1) * g_row_bytes);
        size_t nadd = 0, nrem = 0;
        put_missing(add, &nadd, m->held_add, m->nheld_add, m->removed, m->nremoved, arity);
        put_missing(add, &nadd, m->added, m->nadded, m->held_rem, m->nheld_rem, arity);
        put_missing(rem, &nrem, m->held_rem, m->nheld_rem, m->added, m->nadded, arity);
        put_missing(rem, &nrem, m->removed, m->nremoved, m->held_add, m->nheld_add, arity);
        sort_rows(add, nadd);
        sort_rows(rem, nrem);
        free(m->held_add);
        free(m->held_rem);
        m->held_add = add;
        m->held_rem = rem;
        m->nheld_add = nadd;
        m->nheld_rem = nrem;
    }
    srv_member_clear(m);
}

bool srv_member_holds(const srv_member *m) {
    return m->nheld_add || m->nheld_rem;
}

void srv_member_changes(const srv_member *m, const val_t **add, size_t *nadd, const val_t **rem,
                        size_t *nrem) {
    bool held = srv_member_holds(m);
    *add = held ? m->held_add : m->added;
    *nadd = held ? m->nheld_add : m->nadded;
    *rem = held ? m->held_rem : m->removed;
    *nrem = held ? m->nheld_rem : m->nremoved;
}

void srv_member_drop_held(srv_member *m) {
    m->nheld_add = m->nheld_rem = 0;
}

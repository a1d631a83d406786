/* Families of standing queries (family.h): one maintained view per family and a hash
 * index from key to members. A row reaches a member when each key column of the row
 * matches the member's constant the way an atom's constant argument matches a stored
 * value (exec_const_matches: numbers numerically, so the int key 2 also gets the stored
 * 2.0), which is exactly the row set the member's own query has. */
#include "views/family.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "exec/expr.h"
#include "views/keyrows.h"
#include "views/keytab.h"
#include "views/lift.h"
#include "views/view.h"

struct view_keyslot {
    view_keynode node; /* in the family's slots */
    il_sub *members;
    val_t consts[];
};

struct view_family {
    view_families *fs;
    view_family *next, *prev; /* in fs's list */
    char *kg, *text;
    view_t *view;
    uint32_t nkeys;
    uint32_t *cols;
    view_keytab slots; /* by key */
    size_t nmembers;
    bool failed;          /* its view had failed when view_families_route last looked */
    view_keyrows *by_key; /* the view's rows by key, once a member asked for its rows */
};

static view_keyslot *slot_for(view_family *f, const val_t *consts) {
    uint64_t h = view_key_hash(consts, f->nkeys);
    view_keyslot *sl = (view_keyslot *)view_keytab_find(&f->slots, consts, h);
    if (sl) return sl;
    sl = calloc(1, sizeof *sl + f->nkeys * sizeof *consts);
    sl->node.hash = h;
    memcpy(sl->consts, consts, f->nkeys * sizeof *consts);
    view_keytab_add(&f->slots, &sl->node);
    return sl;
}

static void drop_slot(view_family *f, view_keyslot *sl) {
    view_keytab_remove(&f->slots, &sl->node);
    free(sl);
}

static bool row_matches(const view_family *f, const val_t *row, const val_t *consts) {
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

static void deliver(const view_family *f, view_keyslot *sl, const val_t *row, bool added,
                    il_sub **touched) {
    uint32_t arity = view_arity(f->view);
    for (il_sub *m = sl->members; m; m = m->slot_next) {
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

static void route_row(view_family *f, const val_t *row, bool added, val_t *key, il_sub **touched) {
    bool scan = false;
    for (uint32_t k = 0; k < f->nkeys; k++) {
        view_key_kind kind = view_key_of(row[f->cols[k]], &key[k]);
        if (kind == VIEW_KEY_NONE) return;
        scan |= kind == VIEW_KEY_SCAN;
    }
    if (!scan) {
        view_keyslot *sl =
            (view_keyslot *)view_keytab_find(&f->slots, key, view_key_hash(key, f->nkeys));
        if (sl && row_matches(f, row, sl->consts)) deliver(f, sl, row, added, touched);
        return;
    }
    for (size_t i = 0; i < f->slots.nbuckets; i++)
        for (view_keynode *e = f->slots.buckets[i]; e; e = e->next) {
            view_keyslot *sl = (view_keyslot *)e;
            if (row_matches(f, row, sl->consts)) deliver(f, sl, row, added, touched);
        }
}

static void route_family(view_family *f, il_sub **touched) {
    val_t *add = NULL, *rem = NULL;
    size_t nadd = 0, nrem = 0;
    view_take_delta(f->view, &add, &nadd, &rem, &nrem);
    uint32_t arity = view_arity(f->view);
    if (f->by_key && view_error(f->view)) {
        view_keyrows_free(f->by_key); /* built again from whatever the view has next */
        f->by_key = NULL;
    }
    if (f->by_key) {
        for (size_t i = 0; i < nrem; i++) view_keyrows_remove(f->by_key, rem + i * arity);
        for (size_t i = 0; i < nadd; i++) view_keyrows_add(f->by_key, add + i * arity);
    }
    val_t *key = calloc(f->nkeys + 1, sizeof *key);
    for (size_t i = 0; i < nadd; i++) route_row(f, add + i * arity, true, key, touched);
    for (size_t i = 0; i < nrem; i++) route_row(f, rem + i * arity, false, key, touched);
    free(key);
    free(add);
    free(rem);
}

il_sub *view_families_route(view_families *fs, bool *error_changed) {
    for (view_family *f = fs->list; f; f = f->next) {
        route_family(f, &fs->touched);
        bool failed = view_error(f->view) != NULL;
        if (failed != f->failed) {
            f->failed = failed;
            *error_changed = true;
        }
    }
    il_sub *touched = fs->touched;
    fs->touched = NULL;
    return touched;
}

static view_family *find_family(view_families *fs, const char *kg, const char *text) {
    for (view_family *f = fs->list; f; f = f->next)
        if (!view_error(f->view) && strcmp(f->kg, kg) == 0 && strcmp(f->text, text) == 0) return f;
    return NULL;
}

/* Lifts `?query` with its constants in a scope of their own (freed by the caller). */
static il_intern_scope *lift_scoped(const char *query, size_t len, view_lifted *l) {
    il_intern_scope *strings = il_intern_scope_new();
    il_intern_scope *previous = il_intern_scope_enter(strings);
    view_lift(query, len, l);
    il_intern_scope_leave(previous);
    return strings;
}

bool view_family_exists(view_families *fs, const char *kg, const char *query, size_t len) {
    view_lifted l;
    il_intern_scope *strings = lift_scoped(query, len, &l);
    bool found = find_family(fs, kg, l.text) != NULL;
    view_lifted_free(&l);
    il_intern_scope_free(strings);
    return found;
}

view_t *view_family_build(il_session *ses, const char *query, size_t len, const char **err) {
    view_lifted l;
    il_intern_scope *strings = lift_scoped(query, len, &l);
    bool stopped;
    view_t *v = view_open_with(ses, l.text, (view_opts){.own_clauses = true}, err, &stopped);
    view_lifted_free(&l);
    il_intern_scope_free(strings);
    return v;
}

il_sub *view_member_join(view_families *fs, il_session *ses, const char *kg, const char *query,
                         size_t len, view_t *built, const char **err) {
    view_lifted l;
    /* the key's strings are the member's own; the family's view interns for good */
    il_intern_scope *strings = lift_scoped(query, len, &l);
    view_family *f = find_family(fs, kg, l.text);
    if (f) {
        /* another subscription opened the family while `built` was computed */
        view_close(built);
        /* What changed before the newcomer's snapshot belongs to the members already
         * there (routing after each statement normally took it already). */
        route_family(f, &fs->touched);
    } else {
        view_t *v = built ? built : view_open(ses, l.text, err);
        if (!v) {
            view_lifted_free(&l);
            il_intern_scope_free(strings);
            return NULL;
        }
        f = calloc(1, sizeof *f);
        f->fs = fs;
        f->kg = strdup(kg);
        f->text = l.text;
        l.text = NULL;
        f->view = v;
        f->nkeys = l.nkeys;
        f->cols = l.cols;
        l.cols = NULL;
        view_keytab_init(&f->slots, 8, f->nkeys, offsetof(view_keyslot, consts));
        /* The view starts from its snapshot: nothing of it is a delta. */
        val_t *add = NULL, *rem = NULL;
        size_t nadd = 0, nrem = 0;
        view_take_delta(v, &add, &nadd, &rem, &nrem);
        free(add);
        free(rem);
        f->next = fs->list;
        if (f->next) f->next->prev = f;
        fs->list = f;
        __atomic_fetch_add(&fs->nviews, 1, __ATOMIC_RELAXED);
    }
    il_sub *m = calloc(1, sizeof *m);
    m->fs = fs;
    m->fam = f;
    m->strings = strings;
    m->consts = calloc(f->nkeys + 1, sizeof *m->consts);
    if (f->nkeys) memcpy(m->consts, l.consts, f->nkeys * sizeof *m->consts);
    view_lifted_free(&l);
    m->slot = slot_for(f, m->consts);
    m->slot_next = m->slot->members;
    if (m->slot_next) m->slot_next->slot_prev = m;
    m->slot->members = m;
    f->nmembers++;
    __atomic_fetch_add(&fs->nmembers, 1, __ATOMIC_RELAXED);
    return m;
}

static void close_family(view_family *f) {
    view_families *fs = f->fs;
    if (f->prev)
        f->prev->next = f->next;
    else
        fs->list = f->next;
    if (f->next) f->next->prev = f->prev;
    view_close(f->view);
    view_keyrows_free(f->by_key);
    view_keytab_free(&f->slots);
    free(f->cols);
    free(f->kg);
    free(f->text);
    free(f);
    __atomic_fetch_sub(&fs->nviews, 1, __ATOMIC_RELAXED);
}

void view_member_leave(il_sub *m) {
    if (!m) return;
    view_family *f = m->fam;
    view_families *fs = m->fs;
    if (m->touched) /* rows routed to it, not yet taken: a short list */
        for (il_sub **pp = &fs->touched; *pp; pp = &(*pp)->touched_next)
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
    if (--f->nmembers == 0) close_family(f);
    __atomic_fetch_sub(&fs->nmembers, 1, __ATOMIC_RELAXED);
    free(m->consts);
    il_intern_scope_free(m->strings);
    free(m->added);
    free(m->removed);
    free(m->held_add);
    free(m->held_rem);
    if (m->cols)
        for (uint32_t i = 0; m->cols[i]; i++) free(m->cols[i]);
    free(m->cols);
    free(m);
}

view_families *view_families_new(void) {
    return calloc(1, sizeof(view_families));
}

void view_families_free(view_families *fs) {
    if (!fs) return;
    /* Members the embedder left open: each family closes with its last one. */
    while (fs->list) {
        view_family *f = fs->list;
        view_keyslot *sl = NULL;
        for (size_t i = 0; !sl && i < f->slots.nbuckets; i++)
            sl = (view_keyslot *)f->slots.buckets[i];
        view_member_leave(sl->members);
    }
    free(fs);
}

uint32_t view_member_arity(const il_sub *m) {
    return view_arity(m->fam->view);
}

const char *view_member_error(const il_sub *m) {
    return view_error(m->fam->view);
}

size_t view_member_rows(const il_sub *m, val_t **rows) {
    view_family *f = m->fam;
    if (f->nkeys == 0 || view_error(f->view)) return view_rows(f->view, rows);
    if (!f->by_key) {
        /* Once per family: later members read their own key's rows. The view's delta
         * was routed just before (view_member_join), so its rows are current. */
        val_t *all = NULL;
        size_t n = view_rows(f->view, &all);
        uint32_t arity = view_arity(f->view);
        f->by_key = view_keyrows_new(arity, f->nkeys, f->cols);
        for (size_t i = 0; i < n; i++) view_keyrows_add(f->by_key, all + i * arity);
        free(all);
    }
    return view_keyrows_get(f->by_key, m->consts, rows);
}

void view_member_clear(il_sub *m) {
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
void view_member_hold(il_sub *m) {
    uint32_t arity = view_member_arity(m);
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
    view_member_clear(m);
}

void view_member_changes(const il_sub *m, const val_t **add, size_t *nadd, const val_t **rem,
                         size_t *nrem) {
    bool held = m->nheld_add || m->nheld_rem;
    *add = held ? m->held_add : m->added;
    *nadd = held ? m->nheld_add : m->nadded;
    *rem = held ? m->held_rem : m->removed;
    *nrem = held ? m->nheld_rem : m->nremoved;
}

void view_member_drop_held(il_sub *m) {
    m->nheld_add = m->nheld_rem = 0;
}

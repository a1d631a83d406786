/* Families of standing queries (il_subscribe, include/inputlayer.h): every subscription
 * joins the one maintained view of its family, the subscriptions of a knowledge graph
 * whose queries are the same once the goal's constants are lifted (lift.h). The family
 * keeps an index from the lifted constants (the key) to its members; after a write its
 * view's delta is taken once and each changed row goes to the members of the row's key.
 * Not thread-safe, like the engine. */
#ifndef IL_VIEWS_FAMILY_H
#define IL_VIEWS_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/intern.h"
#include "inputlayer.h"
#include "value/value.h"
#include "views/view.h"

typedef struct view_family view_family;
typedef struct view_keyslot view_keyslot;

/* An engine's families, and the members that got rows not yet taken. */
typedef struct view_families {
    view_family *list;
    il_sub *touched;
    unsigned long nviews, nmembers; /* atomic: read from any thread */
} view_families;

/* One subscription (the public il_sub): its place in its family, and the rows routed to
 * it since the last il_sub_clear. */
struct il_sub {
    view_families *fs;
    view_family *fam;
    view_keyslot *slot;
    il_sub *slot_next, *slot_prev;
    val_t *consts; /* its values of the family's key */
    /* those of them it made (base/intern.h): a key no fact holds goes with its members */
    il_intern_scope *strings;
    val_t *added, *removed;
    size_t nadded, nremoved, cap_added, cap_removed;
    il_sub *touched_next; /* in the list view_families_route returns */
    bool touched;
    void *ctx;   /* the embedder's */
    char **cols; /* the column headers of the query as written (kg/subscribe.c) */
    /* Changes routed but not delivered (the embedder held them), netted to the exact
     * difference from the last delivered result. */
    val_t *held_add, *held_rem;
    size_t nheld_add, nheld_rem;
};

view_families *view_families_new(void);
/* Closes every family and frees the members still in them. */
void view_families_free(view_families *fs);

/* A new member of the family of `?query` over the session's graph `kg`. When the family
 * has no view that works, its view is `built` (view_family_build, caught up with the
 * graph since) or, when that is NULL, opened now; `built` is closed when the family has a
 * view by then. NULL with *err (thread-local text, may be NULL) when the view cannot be
 * opened. */
il_sub *view_member_join(view_families *fs, il_session *ses, const char *kg, const char *query,
                         size_t len, view_t *built, const char **err);
/* Whether the family of `?query` over graph `kg` has a working view: a new member then
 * joins it at once, else its view is computed first. */
bool view_family_exists(view_families *fs, const char *kg, const char *query, size_t len);
/* The view a new family of `?query` opens, computed on the session's graph now with
 * copies of its clauses (view_opts.own_clauses): on a pinned copy of the graph (kg/pin.c),
 * beside other statements, for kg_pin_adopt_view and then view_member_join. NULL with
 * *err when it cannot be opened. */
view_t *view_family_build(il_session *ses, const char *query, size_t len, const char **err);
/* Leaves the family and frees m; the last member closes the family's view. */
void view_member_leave(il_sub *m);
/* The member's current rows (its key's part of the view), malloc'ed, arity values each. */
size_t view_member_rows(const il_sub *m, val_t **rows);
uint32_t view_member_arity(const il_sub *m);
/* Why the family's view has no rows any more, or NULL. */
const char *view_member_error(const il_sub *m);
/* Takes every family's view delta and appends each row to the members of its key.
 * Returns the members that got rows (linked by touched_next), so that a write costs
 * what it changed, not the number of subscriptions; *error_changed is set when a
 * family's view failed, or works again, since the last call. */
il_sub *view_families_route(view_families *fs, bool *error_changed);
/* Folds m's routed rows into its held changes (and clears them): a row added now cancels
 * a held removal, a row removed now a held addition. */
void view_member_hold(il_sub *m);
/* The changes to deliver: the held ones while any are held, else the routed ones. */
void view_member_changes(const il_sub *m, const val_t **add, size_t *nadd, const val_t **rem,
                         size_t *nrem);
/* Forgets the held changes (delivered, or given up). */
void view_member_drop_held(il_sub *m);
/* Clears m's routed rows (the caller took them) and its place in the touched list. */
void view_member_clear(il_sub *m);

#endif

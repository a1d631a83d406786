/* Families of standing queries: every subscription joins the one maintained view of its
 * family, the subscriptions of a knowledge graph whose queries are the same once the
 * goal's constants are lifted (srv_sublift.h). The family keeps an index from the lifted
 * constants (the key) to its members; after a write its view's delta is taken once and
 * each changed row goes to the members of the row's key. Engine lock held throughout. */
#ifndef IL_SERVER_SRV_SUBFAM_H
#define IL_SERVER_SRV_SUBFAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/intern.h"
#include "inputlayer.h"
#include "server/server.h"
#include "value/value.h"

typedef struct srv_family srv_family;
typedef struct srv_keyslot srv_keyslot;

/* One subscription's place in its family, and the rows routed to it since the last
 * srv_member_take. */
typedef struct srv_member {
    srv_family *fam;
    srv_keyslot *slot;
    struct srv_member *slot_next, *slot_prev;
    val_t *consts; /* its values of the family's key */
    /* those of them it made (base/intern.h): a key no fact holds goes with its members */
    il_intern_scope *strings;
    val_t *added, *removed;
    size_t nadded, nremoved, cap_added, cap_removed;
    struct srv_member *touched_next; /* in the list srv_families_route returns */
    bool touched;
    void *owner; /* its single subscription (srv_subs.c), or NULL */
    void *group; /* or its group (srv_subgroup.c) */
    /* Changes routed but not delivered (its connection was not reading, or its group's
     * view had failed), netted to the exact difference from the last delivered result. */
    val_t *held_add, *held_rem;
    size_t nheld_add, nheld_rem;
} srv_member;

/* Joins m to the family of `?query` over the session's graph `kg`, opening its view when
 * the family has none that works. False with *err (thread-local text) when the view
 * cannot be opened. */
bool srv_member_join(srv_server *s, il_session *ses, const char *kg, const char *query, size_t len,
                     srv_member *m, const char **err);
/* Leaves the family; the last member closes its view. Frees m's routed rows. */
void srv_member_leave(srv_server *s, srv_member *m);
/* The member's current rows (its key's part of the view), malloc'ed, arity values each. */
size_t srv_member_rows(const srv_member *m, val_t **rows);
uint32_t srv_member_arity(const srv_member *m);
/* Why the family's view has no rows any more, or NULL. */
const char *srv_member_error(const srv_member *m);
/* Takes every family's view delta and appends each row to the members of its key.
 * Returns the members that got rows (linked by touched_next), so that a write costs
 * what it changed, not the number of subscriptions; *error_changed is set when a
 * family's view failed, or works again, since the last call. */
srv_member *srv_families_route(srv_server *s, bool *error_changed);
/* Folds m's routed rows into its held changes (and clears them): a row added now cancels
 * a held removal, a row removed now a held addition. */
void srv_member_hold(srv_member *m);
/* Whether m holds changes. */
bool srv_member_holds(const srv_member *m);
/* The changes to deliver: the held ones while any are held, else the routed ones. */
void srv_member_changes(const srv_member *m, const val_t **add, size_t *nadd, const val_t **rem,
                        size_t *nrem);
/* Forgets the held changes (delivered, or given up). */
void srv_member_drop_held(srv_member *m);
/* Clears m's routed rows (the caller sent them) and its place in the touched list. */
void srv_member_clear(srv_member *m);

#endif

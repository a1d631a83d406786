/* Tests of views/keytab.c, the value-keyed hash table under the subscription
 * families and row groups: entries are found by key after the buckets have doubled many
 * times, equal hashes with other keys are told apart, removal unlinks only the entry it
 * names, and a key of no values (a family without key columns) works too. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdlib.h>

#include "views/keyrows.h"
#include "views/keytab.h"

typedef struct entry {
    view_keynode node;
    int payload;
    val_t key[2];
} entry;

static entry *entry_new(int64_t a, int64_t b, int payload) {
    entry *e = calloc(1, sizeof *e);
    e->key[0] = val_int(a);
    e->key[1] = val_int(b);
    e->node.hash = view_key_hash(e->key, 2);
    e->payload = payload;
    return e;
}

static entry *find(const view_keytab *t, int64_t a, int64_t b) {
    val_t key[2] = {val_int(a), val_int(b)};
    return (entry *)view_keytab_find(t, key, view_key_hash(key, 2));
}

Test(keytab, finds_every_entry_after_growing) {
    view_keytab t;
    view_keytab_init(&t, 2, 2, offsetof(entry, key));
    enum { N = 5000 };
    entry **all = malloc(N * sizeof *all);
    for (int i = 0; i < N; i++) {
        all[i] = entry_new(i, -i, i);
        view_keytab_add(&t, &all[i]->node);
    }
    cr_assert_eq(t.n, N);
    cr_assert_geq(t.nbuckets, N, "the buckets doubled with the entries");
    for (int i = 0; i < N; i++) {
        entry *e = find(&t, i, -i);
        cr_assert_not_null(e, "entry %d", i);
        cr_assert_eq(e->payload, i);
    }
    cr_assert_null(find(&t, 1, 1));
    cr_assert_null(find(&t, N, -N));
    for (int i = 0; i < N; i++) free(all[i]);
    free(all);
    view_keytab_free(&t);
}

Test(keytab, an_equal_hash_with_another_key_is_not_a_match) {
    view_keytab t;
    view_keytab_init(&t, 4, 2, offsetof(entry, key));
    entry *a = entry_new(1, 2, 1), *b = entry_new(3, 4, 2);
    b->node.hash = a->node.hash; /* forced into one chain */
    view_keytab_add(&t, &a->node);
    view_keytab_add(&t, &b->node);
    cr_assert_eq(find(&t, 1, 2), a);
    val_t key[2] = {val_int(3), val_int(4)};
    cr_assert_eq((entry *)view_keytab_find(&t, key, a->node.hash), b);
    cr_assert_null(find(&t, 3, 4), "the key's own hash leads elsewhere");
    free(a);
    free(b);
    view_keytab_free(&t);
}

Test(keytab, remove_unlinks_only_that_entry) {
    view_keytab t;
    view_keytab_init(&t, 1, 2, offsetof(entry, key));
    entry *e[3] = {entry_new(1, 1, 1), entry_new(2, 2, 2), entry_new(3, 3, 3)};
    for (int i = 0; i < 3; i++) view_keytab_add(&t, &e[i]->node);
    view_keytab_remove(&t, &e[1]->node);
    cr_assert_eq(t.n, 2);
    cr_assert_null(find(&t, 2, 2));
    cr_assert_eq(find(&t, 1, 1), e[0]);
    cr_assert_eq(find(&t, 3, 3), e[2]);
    view_keytab_remove(&t, &e[0]->node);
    view_keytab_remove(&t, &e[2]->node);
    cr_assert_eq(t.n, 0);
    cr_assert_null(find(&t, 1, 1));
    for (int i = 0; i < 3; i++) free(e[i]);
    view_keytab_free(&t);
}

Test(keytab, a_key_of_no_values) {
    view_keytab t;
    view_keytab_init(&t, 8, 0, offsetof(entry, key));
    entry *e = entry_new(0, 0, 7);
    val_t none = val_int(5); /* what the key pointer points at is never read */
    e->node.hash = view_key_hash(&none, 0);
    view_keytab_add(&t, &e->node);
    cr_assert_eq((entry *)view_keytab_find(&t, &none, view_key_hash(&none, 0)), e);
    free(e);
    view_keytab_free(&t);
}

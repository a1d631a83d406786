/* Unit tests of the intern table (base/intern.h): strings a scope made are freed with it
 * unless something interned them for good or another scope still holds them; the table
 * keeps finding every held string through the deletions; threads with scopes of their own
 * agree on ids with a thread interning for good; freed strings stay idle within limits
 * and are found again. Most tests keep nothing idle, so that freeing is seen at once. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"

static void expect_bytes(uint32_t id, const char *want) {
    size_t len;
    const char *got = il_intern_get(id, &len);
    cr_assert_eq(len, strlen(want));
    cr_assert_str_eq(got, want);
}

Test(intern, a_scope_frees_only_its_own_strings) {
    il_intern_set_idle_limits(0, 0);
    uint32_t kept = il_intern("kept", 4);
    il_intern_stats before = il_intern_stats_now();
    il_intern_scope *sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    cr_assert_eq(il_intern("kept", 4), kept);
    cr_assert_null(il_intern_scope_share(), "a string held for good is not the scope's");
    uint32_t mine = il_intern("mine", 4);
    cr_assert_eq(il_intern("mine", 4), mine, "equal bytes, equal ids, inside the scope too");
    il_intern_scope_leave(NULL);
    il_intern_stats during = il_intern_stats_now();
    cr_assert_eq(during.strings, before.strings + 1);
    cr_assert_eq(during.transient, before.transient + 1);
    expect_bytes(mine, "mine");
    il_intern_scope_free(sc);
    il_intern_stats after = il_intern_stats_now();
    cr_assert_eq(after.strings, before.strings);
    cr_assert_eq(after.transient, 0);
    cr_assert_eq(after.bytes, before.bytes);
    expect_bytes(kept, "kept");
}

Test(intern, interning_for_good_outlives_the_scope) {
    il_intern_set_idle_limits(0, 0);
    il_intern_scope *sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    uint32_t id = il_intern("stored later", 12);
    il_intern_scope_leave(NULL);
    /* a write stores the same string while the query's result is alive */
    cr_assert_eq(il_intern("stored later", 12), id);
    il_intern_scope_free(sc);
    expect_bytes(id, "stored later");
    cr_assert_eq(il_intern("stored later", 12), id);
    cr_assert_eq(il_intern_stats_now().transient, 0);
}

Test(intern, two_scopes_share_a_string_until_both_end) {
    il_intern_set_idle_limits(0, 0);
    il_intern_scope *a = il_intern_scope_new(), *b = il_intern_scope_new();
    il_intern_scope_enter(a);
    uint32_t id = il_intern("shared", 6);
    il_intern_scope_leave(NULL);
    il_intern_scope_enter(b);
    cr_assert_eq(il_intern("shared", 6), id);
    il_intern_scope_leave(NULL);
    il_intern_scope_free(a);
    expect_bytes(id, "shared");
    uint64_t held = il_intern_stats_now().strings;
    il_intern_scope_free(b);
    cr_assert_eq(il_intern_stats_now().strings, held - 1);
}

Test(intern, a_shared_scope_holds_what_the_scope_held) {
    il_intern_set_idle_limits(0, 0);
    il_intern_scope *sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    uint32_t id = il_intern("a cached constant", 17);
    il_intern_scope *cache = il_intern_scope_share();
    cr_assert_not_null(cache);
    il_intern_scope_leave(NULL);
    il_intern_scope_free(sc);
    expect_bytes(id, "a cached constant");
    cr_assert_eq(il_intern_stats_now().transient, 1);
    il_intern_scope_free(cache);
    cr_assert_eq(il_intern_stats_now().transient, 0);
}

Test(intern, scopes_nest) {
    il_intern_set_idle_limits(0, 0);
    il_intern_scope *outer = il_intern_scope_new(), *inner = il_intern_scope_new();
    cr_assert_null(il_intern_scope_enter(outer));
    uint32_t a = il_intern("outer's", 7);
    cr_assert_eq(il_intern_scope_enter(inner), outer);
    uint32_t b = il_intern("inner's", 7);
    cr_assert_eq(il_intern("outer's", 7), a);
    il_intern_scope_leave(outer);
    il_intern_scope_free(inner);
    expect_bytes(a, "outer's"); /* the outer scope still holds it */
    uint32_t c = il_intern("outer's too", 11);
    il_intern_scope_leave(NULL);
    cr_assert_eq(il_intern_stats_now().transient, 2);
    expect_bytes(c, "outer's too");
    il_intern_scope_free(outer);
    cr_assert_eq(il_intern_stats_now().transient, 0);
    (void)b;
}

/* Random scopes against a model: every held string keeps its bytes and its id, every
 * freed one is gone from the counts, and the table finds each held string again after
 * thousands of deletions (backward shifts across wrapped probe runs). */
/* idle_limit: how many idle strings the table may keep; the model knows only which
 * strings something holds, so it checks the count within that slack. */
static void random_scopes(uint32_t idle_limit) {
    il_intern_set_idle_limits(idle_limit, (uint64_t)idle_limit * 64);
    enum { NAMES = 3000, SCOPES = 8, STEPS = 200000 };
    static char names[NAMES][24];
    static uint32_t id_of[NAMES];
    static int holders[NAMES]; /* scopes holding the name; -1: interned for good */
    static unsigned char in_scope[SCOPES][NAMES];
    for (int i = 0; i < NAMES; i++) snprintf(names[i], sizeof names[i], "name-%d", i);
    il_intern_scope *scopes[SCOPES] = {0};
    uint64_t base = il_intern_stats_now().strings;
    srand(11);
    for (int step = 0; step < STEPS; step++) {
        int k = rand() % SCOPES, n = rand() % NAMES, op = rand() % 100;
        const char *name = names[n];
        if (op < 70) {
            if (!scopes[k]) scopes[k] = il_intern_scope_new();
            il_intern_scope_enter(scopes[k]);
            uint32_t id = il_intern(name, strlen(name));
            il_intern_scope_leave(NULL);
            if (holders[n] != 0) cr_assert_eq(id, id_of[n], "step %d: %s", step, name);
            id_of[n] = id;
            if (holders[n] >= 0 && !in_scope[k][n]) {
                holders[n]++;
                in_scope[k][n] = 1;
            }
        } else if (op < 72) {
            uint32_t id = il_intern(name, strlen(name));
            if (holders[n] != 0) cr_assert_eq(id, id_of[n]);
            id_of[n] = id;
            holders[n] = -1;
        } else if (op < 75 && scopes[k]) {
            il_intern_scope_free(scopes[k]);
            scopes[k] = NULL;
            for (int i = 0; i < NAMES; i++)
                if (in_scope[k][i]) {
                    in_scope[k][i] = 0;
                    if (holders[i] > 0) holders[i]--;
                }
        }
        if (step % 20000 == 0 || step == STEPS - 1) {
            uint64_t held = 0;
            for (int i = 0; i < NAMES; i++) {
                if (!holders[i]) continue;
                held++;
                expect_bytes(id_of[i], names[i]);
            }
            il_intern_stats st = il_intern_stats_now();
            cr_assert_eq(st.strings - st.idle, base + held, "step %d", step);
            cr_assert_leq(st.idle, idle_limit + 16, "step %d", step);
        }
    }
    for (int k = 0; k < SCOPES; k++) il_intern_scope_free(scopes[k]);
    cr_assert_eq(il_intern_stats_now().transient, 0);
    il_intern_set_idle_limits(0, 0);
    cr_assert_eq(il_intern_stats_now().idle, 0);
}

Test(intern, random_scopes_against_a_model) {
    random_scopes(0);
}

Test(intern, random_scopes_with_idle_strings) {
    random_scopes(200);
}

Test(intern, an_idle_string_is_found_again_until_pushed_out) {
    il_intern_set_idle_limits(32, 1 << 20);
    il_intern_scope *sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    uint32_t id = il_intern("run again", 9);
    il_intern_scope_leave(NULL);
    il_intern_scope_free(sc);
    il_intern_stats st = il_intern_stats_now();
    cr_assert_eq(st.idle, 1);
    cr_assert_eq(st.idle_bytes, 9);
    cr_assert_eq(st.transient, 0);
    /* the same query again: the same id, held by its scope, not idle */
    sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    cr_assert_eq(il_intern("run again", 9), id);
    il_intern_scope_leave(NULL);
    cr_assert_eq(il_intern_stats_now().idle, 0);
    cr_assert_eq(il_intern_stats_now().transient, 1);
    il_intern_scope_free(sc);
    /* many other strings idle after it: the oldest are freed, the table keeps the limit
       (per shard, so a little over it in all) */
    char name[32];
    for (int round = 0; round < 40; round++) {
        sc = il_intern_scope_new();
        il_intern_scope_enter(sc);
        for (int i = 0; i < 10; i++) {
            snprintf(name, sizeof name, "other-%d-%d", round, i);
            il_intern(name, strlen(name));
        }
        il_intern_scope_leave(NULL);
        il_intern_scope_free(sc);
        cr_assert_leq(il_intern_stats_now().idle, 32 + 16);
    }
    /* interned for good while idle: the limits no longer free it */
    sc = il_intern_scope_new();
    il_intern_scope_enter(sc);
    uint32_t kept = il_intern("kept after idling", 17);
    il_intern_scope_leave(NULL);
    il_intern_scope_free(sc);
    cr_assert_eq(il_intern("kept after idling", 17), kept);
    il_intern_set_idle_limits(0, 0);
    cr_assert_eq(il_intern_stats_now().idle, 0);
    expect_bytes(kept, "kept after idling");
    cr_assert_eq(il_intern("kept after idling", 17), kept);
}

enum { THREAD_NAMES = 500, THREAD_ROUNDS = 200 };

static void *scoped_worker(void *arg) {
    uint32_t *ids = arg;
    char name[24];
    for (int round = 0; round < THREAD_ROUNDS; round++) {
        il_intern_scope *sc = il_intern_scope_new();
        il_intern_scope_enter(sc);
        for (int i = 0; i < THREAD_NAMES; i++) {
            snprintf(name, sizeof name, "t-%d", i);
            uint32_t id = il_intern(name, strlen(name));
            /* once the permanent thread has interned it, everyone gets its id */
            uint32_t stored = __atomic_load_n(&ids[i], __ATOMIC_ACQUIRE);
            if (stored && id != stored) return (void *)1;
            size_t len;
            if (strcmp(il_intern_get(id, &len), name) != 0) return (void *)1;
        }
        il_intern_scope_leave(NULL);
        il_intern_scope_free(sc);
    }
    return NULL;
}

Test(intern, threads_with_scopes_agree_with_permanent_ids) {
    static uint32_t ids[THREAD_NAMES];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, scoped_worker, ids);
    char name[24];
    for (int i = 0; i < THREAD_NAMES; i++) {
        snprintf(name, sizeof name, "t-%d", i);
        __atomic_store_n(&ids[i], il_intern(name, strlen(name)), __ATOMIC_RELEASE);
    }
    for (int i = 0; i < 3; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        cr_assert_null(bad);
    }
    cr_assert_eq(il_intern_stats_now().transient, 0);
    for (int i = 0; i < THREAD_NAMES; i++) {
        snprintf(name, sizeof name, "t-%d", i);
        expect_bytes(ids[i], name);
    }
}

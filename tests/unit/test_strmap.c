/* Unit tests of il_strmap (base/strmap.h): random puts, replacements and deletes against
 * a plain array of the same entries, with keys that collide in small tables, so that
 * deletion's backward shift is exercised across wrapped runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/strmap.h"

enum { KEYS = 600 };

Test(strmap, random_against_an_array) {
    static char names[KEYS][16];
    static void *want[KEYS];
    for (int i = 0; i < KEYS; i++) snprintf(names[i], sizeof names[i], "k%d", i);
    il_strmap m = {0};
    uint32_t present = 0;
    srand(7);
    for (int step = 0; step < 200000; step++) {
        int k = rand() % KEYS, op = rand() % 3;
        if (op == 0) {
            void *v = (void *)(uintptr_t)(step + 1);
            present += want[k] == NULL;
            want[k] = v;
            il_strmap_put(&m, names[k], v);
        } else if (op == 1) {
            present -= want[k] != NULL;
            want[k] = NULL;
            il_strmap_del(&m, names[k]);
        }
        cr_assert_eq(il_strmap_get(&m, names[k]), want[k], "step %d, key %s", step, names[k]);
        cr_assert_eq(m.n, present);
        if (step % 10000 == 0)
            for (int i = 0; i < KEYS; i++)
                cr_assert_eq(il_strmap_get(&m, names[i]), want[i], "step %d, key %s", step,
                             names[i]);
    }
    /* a key equal in bytes but another pointer finds the entry */
    char copy[16];
    snprintf(copy, sizeof copy, "%s", names[3]);
    cr_assert_eq(il_strmap_get(&m, copy), want[3]);
    cr_assert_null(il_strmap_get(&m, "absent"));
    il_strmap_free(&m);
    cr_assert_null(il_strmap_get(&m, names[3]));
}

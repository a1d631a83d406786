/* A map from NUL-terminated strings to pointers (open addressing, linear probing,
 * deletion by backward shift). Keys are borrowed: each must stay valid and unchanged
 * while its entry is in the map. */
#ifndef IL_BASE_STRMAP_H
#define IL_BASE_STRMAP_H

#include <stdint.h>

typedef struct il_strmap_slot {
    const char *key; /* NULL: free */
    void *val;
    uint32_t hash;
} il_strmap_slot;

typedef struct il_strmap {
    il_strmap_slot *slots;
    uint32_t cap; /* 0 or a power of two, at most half full */
    uint32_t n;
} il_strmap;

/* The value of key, or NULL. */
void *il_strmap_get(const il_strmap *m, const char *key);
/* Sets key's value (adding the entry, or replacing the value of an equal key, whose
 * borrowed pointer then becomes key). */
void il_strmap_put(il_strmap *m, const char *key, void *val);
/* dst (empty, or freed) becomes a copy of src: the same keys and values, not copied. */
void il_strmap_copy(il_strmap *dst, const il_strmap *src);
/* Removes key's entry, if any. */
void il_strmap_del(il_strmap *m, const char *key);
/* Frees the table (not the keys or values); the map is empty and usable again. */
void il_strmap_free(il_strmap *m);

#endif

/* Mixing a 64-bit word into a hash whose every bit depends on every bit of the word
 * (MurmurHash3's 64-bit finalizer): for hash tables keyed by ids and value words, which
 * come in arithmetic runs that the low bits alone would cluster. */
#ifndef IL_BASE_MIX_H
#define IL_BASE_MIX_H

#include <stdint.h>

static inline uint64_t il_mix64(uint64_t v) {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ull;
    v ^= v >> 33;
    return v;
}

#endif

/* The durable-write fixtures of inputlayer-fixture (bench/fixture_insert.c): insert_single,
 * insert_batch and writers, what an acknowledged write costs against the disk's sync. */
#ifndef IL_BENCH_FIXTURE_INSERT_H
#define IL_BENCH_FIXTURE_INSERT_H

#include <stdbool.h>

/* Whether name is one of them. */
bool fx_is_insert_fixture(const char *name);

/* Runs `inputlayer-fixture insert_single|insert_batch|writers ...` (argv[1] names it);
 * returns the exit status (FX_OK, FX_FAILED, FX_USAGE, FX_INVALID). */
int fx_insert_main(int argc, char **argv);

#endif

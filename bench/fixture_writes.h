/* writes of inputlayer-fixture (bench/fixture_writes.c): the engine suite's deletes,
 * conditional deletes and conditional updates on preloaded facts, durable, over /ws. */
#ifndef IL_BENCH_FIXTURE_WRITES_H
#define IL_BENCH_FIXTURE_WRITES_H

/* Runs `inputlayer-fixture writes ...`; returns the exit status (FX_OK, FX_FAILED,
 * FX_USAGE, FX_INVALID). */
int fx_writes_main(int argc, char **argv);

#endif

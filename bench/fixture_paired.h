/* paired_writes of inputlayer-fixture (bench/fixture_paired.c): the durable-write
 * fixtures on two servers at once, their writes interleaved in short blocks, so that the
 * perf gate's two arms see the same disk. */
#ifndef IL_BENCH_FIXTURE_PAIRED_H
#define IL_BENCH_FIXTURE_PAIRED_H

/* Runs `inputlayer-fixture paired_writes ...`; returns the exit status (FX_OK, FX_FAILED,
 * FX_USAGE, FX_INVALID). */
int fx_paired_main(int argc, char **argv);

#endif

/* paired_writes and paired_reads of inputlayer-fixture (bench/fixture_paired.c): the
 * durable-write fixtures, or one serial query, on two servers at once, their requests
 * interleaved, so that the perf gate's two arms see the same disk and the same machine. */
#ifndef IL_BENCH_FIXTURE_PAIRED_H
#define IL_BENCH_FIXTURE_PAIRED_H

/* Runs `inputlayer-fixture paired_writes|paired_reads ...`; returns the exit status (FX_OK,
 * FX_FAILED, FX_USAGE, FX_INVALID). */
int fx_paired_main(int argc, char **argv);

#endif

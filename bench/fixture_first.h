/* The delta_first fixture of inputlayer-fixture (bench/fixture_first.c): how long the
 * first delta of a fresh standing query takes, against a warm one. */
#ifndef IL_BENCH_FIXTURE_FIRST_H
#define IL_BENCH_FIXTURE_FIRST_H

/* Runs `inputlayer-fixture delta_first ...` (argv[1] is "delta_first"); returns the exit
 * status (FX_OK, FX_FAILED, FX_USAGE, FX_INVALID). */
int fx_delta_first_main(int argc, char **argv);

#endif

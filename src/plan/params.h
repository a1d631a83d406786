/* A program's parameters: the constants of its query that a cached program can take
 * anew for the next query of the same shape (`?r1(400, Y)`, then `?r1(800, Y)`), so that
 * a lookup by key compiles once, not once per key.
 *
 * Which constants those are is not read off the builder, which copies, folds and pairs
 * constants in many places (numeric constants are demanded in both their forms, equal
 * literals are merged). It is found by comparison: the same query shape compiled twice,
 * with the query's constants and with others of the same types, must give two programs
 * equal in everything but constants, and each constant that differs must be one of the
 * query's (or its other numeric form) in one and the same one's counterpart in the
 * other. A program that passes has its parameter slots recorded; any other difference
 * means the program depends on the values, and it is not reused for other ones. */
#ifndef IL_PLAN_PARAMS_H
#define IL_PLAN_PARAMS_H

#include "plan/plan.h"

typedef struct plan_param_slot {
    val_t *slot;    /* a constant of the program */
    uint32_t param; /* which query constant it holds */
    bool alt;       /* its other numeric form (exec_numeric_alternative), not the value */
} plan_param_slot;

typedef struct plan_params {
    plan_param_slot *v;
    uint32_t n;
} plan_params;

/* a and b were compiled from one query shape, a with the values va[0..n), b with vb[0..n)
 * (va[i] != vb[i] for each i). True, with the parameter slots of a in *out, when the two
 * programs differ only in those constants; false otherwise (and for programs with an
 * error or a vector index search). With n 0, true when they are the same program. */
bool plan_params_find(plan_program *a, const plan_program *b, const val_t *va, const val_t *vb,
                      uint32_t n, plan_params *out);
/* Writes values[0..n) into the parameter slots. */
void plan_params_bind(const plan_params *pp, const val_t *values);
void plan_params_free(plan_params *pp);

#endif

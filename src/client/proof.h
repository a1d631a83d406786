/* Proof trees (the `proof_trees` of a `.why` or `.why_not` result, as JSON) printed as
 * indented trees: each conclusion on a line, how it holds beside it, what it rests on
 * indented under it. */
#ifndef IL_CLIENT_PROOF_H
#define IL_CLIENT_PROOF_H

#include <stdio.h>

/* Prints the trees of json (an array of DAGs {"roots", "nodes"}); nothing when it does
 * not parse. */
void cli_print_proofs(FILE *out, const char *json);

#endif

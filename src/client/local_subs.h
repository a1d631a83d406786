/* Standing queries in process (--local): `.subscribe NAME ?query` and `.unsubscribe
 * NAME` through il_subscribe, and the deltas printed after every statement. */
#ifndef IL_CLIENT_LOCAL_SUBS_H
#define IL_CLIENT_LOCAL_SUBS_H

#include <stdbool.h>

#include "client/cli.h"

/* In process, runs `.subscribe ...` or `.unsubscribe ...` and prints its reply: true
 * with *ok (false when it was refused); false for any other statement, or on a server. */
bool cli_local_subs_command(cli *c, const char *stmt, bool *ok);
/* In process, after a statement: prints the delta of every subscription whose rows it
 * changed, and the failure of one whose view failed. */
void cli_local_subs_publish(cli *c);
/* Closes every subscription (before the engine closes). */
void cli_local_subs_free(cli *c);

#endif

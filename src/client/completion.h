/* Tab completion in the REPL: meta commands after a leading dot, and otherwise the
 * names of relations and rules (asked of the engine or the server at each Tab) and the
 * builtin functions. */
#ifndef IL_CLIENT_COMPLETION_H
#define IL_CLIENT_COMPLETION_H

#include "client/cli.h"

/* Sets libedit's completion up for this client. */
void cli_completion_install(cli *c);
void cli_completion_free(void);

#endif

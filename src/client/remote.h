/* Server mode of the CLI: a WebSocket connection to inputlayer-server (/ws), checked
 * with GET /health first, authenticated by API key or user and password. */
#ifndef IL_CLIENT_REMOTE_H
#define IL_CLIENT_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "client/cli.h"
#include "client/reply.h"

/* url: http://host[:port] (or ws://). Exactly one of api_key or user is set. Returns
 * NULL with a message in err on failure. */
cli_remote *cli_remote_connect(const char *url, const char *api_key, const char *user,
                               const char *password, char *err, size_t errlen);
/* Sends one statement and waits for its reply; NULL (and err) when the connection fails. */
cli_reply *cli_remote_execute(cli_remote *r, const char *stmt, char *err, size_t errlen);
void cli_remote_close(cli_remote *r);

/* The REPL's side of the connection. */
/* Ctrl-C: while *flag is non-zero a statement awaited is cancelled (a `cancel` frame). */
void cli_remote_set_interrupt(cli_remote *r, const volatile int *flag);
/* The socket, to wait on it beside the terminal. */
int cli_remote_fd(const cli_remote *r);
/* Reads what has arrived without blocking (subscription deltas); false when the
 * connection is lost (cli_remote_error says why). */
bool cli_remote_poll(cli_remote *r);
const char *cli_remote_error(const cli_remote *r);
/* The subscription deltas gathered so far as printable lines (malloc'ed), or NULL. */
char *cli_remote_take_pushes(cli_remote *r);
/* Opens the connection again with the same URL and credentials; on success old is
 * closed and the new one returned, else NULL (err) and old is kept. */
cli_remote *cli_remote_reopen(cli_remote *old, char *err, size_t errlen);

#endif

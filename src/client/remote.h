/* Server mode of the CLI: a WebSocket connection to inputlayer-server (/ws), checked
 * with GET /health first, authenticated by API key or user and password. */
#ifndef IL_CLIENT_REMOTE_H
#define IL_CLIENT_REMOTE_H

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

#endif

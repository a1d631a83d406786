/* The interactive REPL: libedit line editing and history, statements over several
 * lines (a line continues while brackets are open or it ends with `,` or `<-`). */
#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>

#include "client/cli.h"

/* True when the text so far is not yet a complete statement. */
static bool continues(const char *text) {
    int paren = 0, bracket = 0;
    bool in_str = false;
    for (const char *p = text; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = false;
            continue;
        }
        switch (*p) {
        case '"':
            in_str = true;
            break;
        case '(':
            paren++;
            break;
        case ')':
            paren--;
            break;
        case '[':
            bracket++;
            break;
        case ']':
            bracket--;
            break;
        default:
            break;
        }
    }
    if (text[0] == '.') return false;
    if (paren > 0 || bracket > 0) return true;
    size_t n = strlen(text);
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
    if (n >= 1 && text[n - 1] == ',') return true;
    if (n >= 2 && text[n - 2] == '<' && text[n - 1] == '-') return true;
    return false;
}

int cli_repl(cli *c) {
    c->interactive = true;
    fprintf(c->out, "InputLayer (%s). Type .help for commands, .quit to exit.\n",
            c->remote ? "server" : "in process");
    char *acc = NULL;
    size_t acclen = 0;
    while (!c->quit) {
        char *line = readline(acc ? "...> " : "inputlayer> ");
        if (!line) break;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p && !acc) {
            free(line);
            continue;
        }
        size_t n = strlen(p);
        acc = realloc(acc, acclen + n + 2);
        if (acclen) acc[acclen++] = ' ';
        memcpy(acc + acclen, p, n + 1);
        acclen += n;
        free(line);
        if (continues(acc)) continue;
        add_history(acc);
        cli_run_statement(c, acc);
        fflush(c->out);
        free(acc);
        acc = NULL;
        acclen = 0;
    }
    free(acc);
    return 0;
}

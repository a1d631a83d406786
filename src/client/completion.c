/* Tab completion for the REPL (completion.h). The candidates of one Tab are gathered
 * once, when libedit asks for the first match: the meta commands, or the names `.rel`,
 * `.rule` and `.session` list (relations, persistent rules, session rules and facts)
 * and the builtin functions. */
#include "client/completion.h"

#include <ctype.h>
#include <editline/readline.h>
#include <stdlib.h>
#include <string.h>

#include "client/help.h"
#include "client/reply.h"
#include "iql/parser.h"

static struct {
    cli *c;
    char **names;
    size_t n, cap, next;
} C;

static void add(const char *name, size_t len) {
    if (len == 0) return;
    for (size_t i = 0; i < C.n; i++)
        if (strlen(C.names[i]) == len && memcmp(C.names[i], name, len) == 0) return;
    if (C.n == C.cap) {
        C.cap = C.cap ? 2 * C.cap : 64;
        C.names = realloc(C.names, C.cap * sizeof *C.names);
    }
    C.names[C.n++] = strndup(name, len);
}

static void clear(void) {
    for (size_t i = 0; i < C.n; i++) free(C.names[i]);
    C.n = C.next = 0;
}

/* The names a listing's indented lines start with: `  edge (arity ...`, `  path (1
 * clause(s))`, `  bar((1))`, `  1. foo(X) <- ...`. */
static void add_listed(const char *stmt) {
    cli_reply *r = cli_fetch(C.c, stmt);
    if (!r) return;
    for (size_t i = 0; i < r->nlines; i++) {
        const char *p = r->lines[i];
        if (p[0] != ' ') continue;
        while (*p == ' ') p++;
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (q > p && q[0] == '.' && q[1] == ' ') p = q + 2;
        size_t n = 0;
        while (p[n] && (isalnum((unsigned char)p[n]) || p[n] == '_' || (unsigned char)p[n] >= 0x80))
            n++;
        add(p, n);
    }
    cli_reply_free(r);
}

static char *generate(const char *text, int state) {
    size_t len = strlen(text);
    if (state == 0) {
        clear();
        if (text[0] == '.') {
            for (size_t i = 0; cli_help_command(i); i++)
                add(cli_help_command(i), strlen(cli_help_command(i)));
        } else {
            add_listed(".rel");
            add_listed(".rule");
            add_listed(".session");
            for (size_t i = 0; iql_builtin_name(i); i++)
                add(iql_builtin_name(i), strlen(iql_builtin_name(i)));
        }
    }
    /* A query or fact prefix (`?`, `+`, `-`, `!`) stays in front of the name. */
    size_t skip = 0;
    while (skip < len && strchr("?+-!", text[skip])) skip++;
    while (C.next < C.n) {
        const char *name = C.names[C.next++];
        if (strncmp(name, text + skip, len - skip) != 0) continue;
        size_t n = strlen(name);
        char *m = malloc(skip + n + 1);
        memcpy(m, text, skip);
        memcpy(m + skip, name, n + 1);
        return m;
    }
    return NULL;
}

static char **complete(const char *text, int start, int end) {
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never file names */
    /* A name is followed by its arguments, a command by a space. */
    rl_completion_append_character = text[0] == '.' ? ' ' : '(';
    return rl_completion_matches(text, generate);
}

void cli_completion_install(cli *c) {
    C.c = c;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,";
}

void cli_completion_free(void) {
    clear();
    free(C.names);
    C.names = NULL;
    C.cap = 0;
}

/* The interactive REPL on libedit's callback interface, so that the terminal and the
 * server's socket are waited on together: statements over several lines (a line
 * continues while brackets are open or it ends with `,` or `<-`), a prompt naming the
 * knowledge graph, history in ~/.inputlayer_history, Tab completion (completion.c),
 * subscription deltas printed between prompts as they arrive, Ctrl-C (cancels the
 * running statement, or clears the line at the prompt), Ctrl-D (leaves), and a lost
 * connection opened again before the next statement. */
#include <editline/readline.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "client/cli.h"
#include "client/completion.h"
#include "client/remote.h"

/* Set by SIGINT: read by the engine's guard (in process) and by the server connection
 * (which then sends `cancel`). */
static volatile int interrupted;
static volatile int running; /* a statement is running (the terminal echoes ^C) */

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
    /* The statement's error then starts a line of its own. */
    if (running) (void)!write(STDOUT_FILENO, "\n", 1);
}

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

/* The REPL's state, reached from libedit's line callback. */
static struct {
    cli *c;
    char *acc; /* the statement so far (continued lines) */
    size_t acclen;
    bool eof;
    char *line; /* a line read, handled once libedit returns */
    char graph[256];
    char prompt[272];
    char *history; /* the history file; NULL without HOME */
} R;

/* The session's knowledge graph, as `.kg` reports it. */
static void fetch_graph(cli *c) {
    char *line = cli_fetch_first_line(c, ".kg");
    const char *tag = "Current knowledge graph: ";
    if (line && strncmp(line, tag, strlen(tag)) == 0)
        snprintf(R.graph, sizeof R.graph, "%s", line + strlen(tag));
    free(line);
}

static void set_prompt(void) {
    if (R.acc)
        snprintf(R.prompt, sizeof R.prompt, "...> ");
    else
        snprintf(R.prompt, sizeof R.prompt, "%s> ", R.graph[0] ? R.graph : "inputlayer");
    rl_set_prompt(R.prompt);
}

/* Prints the subscription deltas that have arrived. */
static void print_pushes(cli *c) {
    char *text = c->remote ? cli_remote_take_pushes(c->remote) : NULL;
    if (!text) return;
    fputs(text, c->out);
    fflush(c->out);
    free(text);
}

/* The same at the prompt: its line is cleared, the deltas printed, and the prompt with
 * what was typed drawn again below them. (Deltas read while the loop checked the
 * connection were once printed after the prompt and left it undrawn.) */
static void print_pushes_at_prompt(cli *c) {
    char *text = c->remote ? cli_remote_take_pushes(c->remote) : NULL;
    if (!text) return;
    fputs("\r\033[K", c->out);
    fputs(text, c->out);
    fflush(c->out);
    free(text);
    rl_forced_update_display();
}

/* Before a statement goes to the server: a connection found lost is opened again, in
 * the session's graph; what the session held (its rules and facts) is gone with it and
 * said so. False when it cannot be opened (the statement is not sent). */
static bool ensure_connected(cli *c) {
    if (!c->remote || cli_remote_poll(c->remote)) return true;
    print_pushes(c);
    fprintf(c->out, "Connection lost (%s); reconnecting...\n", cli_remote_error(c->remote));
    fflush(c->out);
    char err[512];
    cli_remote *r = cli_remote_reopen(c->remote, err, sizeof err);
    if (!r) {
        fprintf(c->out, "Error: cannot reconnect: %s\n", err);
        return false;
    }
    c->remote = r;
    cli_remote_set_interrupt(r, &interrupted);
    bool graph_ok = true;
    if (R.graph[0] && strcmp(R.graph, "default") != 0) {
        char stmt[300];
        snprintf(stmt, sizeof stmt, ".kg use %s", R.graph);
        char *line = cli_fetch_first_line(c, stmt);
        graph_ok = line && strncmp(line, "Switched", 8) == 0;
        free(line);
    }
    if (graph_ok) {
        fprintf(c->out, "Reconnected (knowledge graph: %s).\n", R.graph[0] ? R.graph : "default");
    } else {
        fprintf(c->out, "Reconnected, but knowledge graph '%s' could not be used again.\n",
                R.graph);
        fetch_graph(c);
    }
    if (c->rule_count || c->fact_count)
        fprintf(c->out,
                "warning: %u session rule(s) and %u session fact(s) were lost with the "
                "connection\n",
                c->rule_count, c->fact_count);
    c->rule_count = c->fact_count = 0;
    fflush(c->out);
    return true;
}

static void run_line(cli *c, const char *stmt) {
    if (R.history) {
        add_history(stmt);
        write_history(R.history);
    }
    if (!ensure_connected(c)) return;
    interrupted = 0;
    c->graph_changed = false;
    fflush(c->out);
    running = 1;
    cli_run_statement(c, stmt);
    running = 0;
    interrupted = 0;
    c->stop = false;
    if (c->graph_changed) fetch_graph(c);
    print_pushes(c);
    fflush(c->out);
}

/* libedit's line callback: NULL at Ctrl-D on an empty line. The line is handled after
 * libedit returns (handle_line), with the terminal back in its usual mode. */
static void on_line(char *line) {
    if (!line) {
        R.eof = true;
        fputc('\n', R.c->out);
        return;
    }
    R.line = line;
}

static void handle_line(cli *c, char *line) {
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p || R.acc) {
        size_t n = strlen(p);
        R.acc = realloc(R.acc, R.acclen + n + 2);
        if (R.acclen) R.acc[R.acclen++] = ' ';
        memcpy(R.acc + R.acclen, p, n + 1);
        R.acclen += n;
        if (!continues(R.acc)) {
            char *stmt = R.acc;
            R.acc = NULL;
            R.acclen = 0;
            run_line(c, stmt);
            free(stmt);
        }
    }
    free(line);
}

int cli_repl(cli *c) {
    c->interactive = true;
    c->interrupt = &interrupted;
    R.c = c;
    struct sigaction sa = {.sa_handler = on_sigint}; /* no SA_RESTART: reads are interrupted */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a pager quit before it read the whole table */
    c->pager = isatty(STDOUT_FILENO);
    if (c->session) {
        il_limits lim = {.cancel = &interrupted};
        il_session_set_limits(c->session, &lim);
    }
    if (c->remote) cli_remote_set_interrupt(c->remote, &interrupted);
    fprintf(c->out, "InputLayer (%s). Type .help for commands, .quit to exit.\n",
            c->remote ? "server" : "in process");
    fflush(c->out);
    if (!isatty(STDIN_FILENO)) {
        /* Lines from a pipe or a file: no line editing, prompt or history. */
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while (!c->quit && (n = getline(&line, &cap, stdin)) >= 0) {
            if (n && line[n - 1] == '\n') line[n - 1] = 0;
            handle_line(c, strdup(line));
        }
        free(line);
        free(R.acc);
        return 0;
    }
    const char *home = getenv("HOME");
    if (home && *home) {
        size_t n = strlen(home) + sizeof "/.inputlayer_history";
        R.history = malloc(n);
        snprintf(R.history, n, "%s/.inputlayer_history", home);
    }
    rl_readline_name = "inputlayer";
    rl_catch_signals = 0;
    cli_completion_install(c);
    if (R.history) read_history(R.history);
    fetch_graph(c);
    set_prompt();
    rl_callback_handler_install(R.prompt, on_line);
    /* SIGINT is held back while the loop prepares its wait and let in only during it
       (ppoll), so that a Ctrl-C at the prompt always ends the wait. */
    sigset_t hold, open;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    while (!c->quit && !R.eof) {
        sigprocmask(SIG_BLOCK, &hold, &open);
        struct pollfd pf[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = -1}};
        if (c->remote && cli_remote_fd(c->remote) >= 0 && cli_remote_poll(c->remote))
            pf[1] = (struct pollfd){.fd = cli_remote_fd(c->remote), .events = POLLIN};
        print_pushes_at_prompt(c);
        int k = -1;
        if (interrupted)
            errno = EINTR;
        else
            k = ppoll(pf, 2, NULL, &open);
        int saved = errno;
        sigprocmask(SIG_SETMASK, &open, NULL);
        errno = saved;
        if (k < 0 && errno == EINTR) {
            if (interrupted) {
                /* Ctrl-C at the prompt: the line (and a statement being continued) is
                   dropped, the session goes on. */
                interrupted = 0;
                free(R.acc);
                R.acc = NULL;
                R.acclen = 0;
                fputs("^C\n", c->out);
                fflush(c->out);
                rl_callback_handler_remove();
                set_prompt();
                rl_callback_handler_install(R.prompt, on_line);
            }
            continue;
        }
        if (k < 0) break;
        if (pf[1].fd >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            cli_remote_poll(c->remote);
            print_pushes_at_prompt(c);
        }
        int avail = 0;
        if ((pf[0].revents & POLLIN) && ioctl(STDIN_FILENO, FIONREAD, &avail) == 0 && avail == 0) {
            /* Readable with nothing to read: the end of input, or a Ctrl-D typed while a
               statement ran (the terminal was not in line-editing mode then). */
            char ch;
            (void)!read(STDIN_FILENO, &ch, 1);
            fputc('\n', c->out);
            R.eof = true;
        } else if (pf[0].revents & POLLIN) {
            rl_callback_read_char();
            if (R.line) {
                char *line = R.line;
                R.line = NULL;
                handle_line(c, line);
                /* libedit left line editing when it returned the line: the prompt is
                   drawn, and the terminal made raw, now, before anything more is typed. */
                set_prompt();
                if (!c->quit) rl_callback_handler_install(R.prompt, on_line);
            }
        } else if (pf[0].revents & (POLLHUP | POLLERR)) {
            R.eof = true;
        }
    }
    rl_callback_handler_remove();
    free(R.acc);
    free(R.history);
    cli_completion_free();
    return 0;
}

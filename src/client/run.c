/* Running statements and scripts, printing the reference transcript: messages,
 * errors, tables with `N rows`, the session-rule follow-up query and the client-side
 * session counters, and the client-only commands .help, .quit, .load, .bail and .mode. A
 * script's parse errors point at the file line; its failures are counted, and with
 * bail on the first one stops it. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "client/cli.h"
#include "client/local_subs.h"
#include "client/help.h"
#include "client/proof.h"
#include "client/remote.h"
#include "client/source.h"
#include "client/table.h"
#include "iql/script.h"

enum { MAX_SCRIPT_BYTES = 104857600 };

static void print_lines(cli *c, const cli_reply *r, const char *prefix) {
    for (size_t i = 0; i < r->nlines; i++)
        fprintf(c->out, "%s%s\n", i == 0 ? prefix : "", r->lines[i]);
}

/* Runs one statement in process or on the server; NULL when the server connection
 * failed (the script stops). */
static cli_reply *execute(cli *c, const char *stmt) {
    if (c->remote) {
        char err[512];
        cli_reply *p = cli_remote_execute(c->remote, stmt, err, sizeof err);
        if (!p) {
            fprintf(c->out, "Script error: %s\n", err);
            /* Whether it ran is unknown: it is not sent again, and nothing after it is. */
            fflush(c->out);
            if (c->src) {
                size_t line, col;
                cli_source_locate(c->src, iql_script_source(c->script, 0), &line, &col);
                fprintf(stderr,
                        "inputlayer-client: %s:%zu: no reply to `%.200s` (%s); it may or may "
                        "not have run; not resent, the script stops here\n",
                        c->src->path, line, stmt, err);
            } else {
                fprintf(stderr, "inputlayer-client: no reply to `%.200s` (%s)\n", stmt, err);
            }
            if (c->interactive) {
                /* The REPL goes on: the connection is opened again before the next
                   statement (repl.c); a .load in progress stops. */
                if (c->load_depth) c->stop = true;
            } else {
                c->quit = true;
                c->failed = true;
            }
        }
        return p;
    }
    il_result *r = il_execute(c->session, stmt, strlen(stmt));
    cli_reply *p = cli_reply_from_result(r);
    il_result_free(r);
    return p;
}

cli_reply *cli_fetch(cli *c, const char *stmt) {
    if (c->remote) {
        char err[512];
        return cli_remote_execute(c->remote, stmt, err, sizeof err);
    }
    il_result *r = il_execute(c->session, stmt, strlen(stmt));
    cli_reply *p = cli_reply_from_result(r);
    il_result_free(r);
    return p;
}

char *cli_fetch_first_line(cli *c, const char *stmt) {
    cli_reply *r = cli_fetch(c, stmt);
    char *line = r && r->nlines ? strdup(r->lines[0]) : NULL;
    cli_reply_free(r);
    return line;
}

/* A result cut by a cap of the server (max_result_rows) or the engine (100000 rows) says
 * so: the count line alone would pass for the whole answer. */
static void warn_cut(const cli_reply *r, FILE *out) {
    if (r->total_rows <= r->nrows) return;
    fprintf(out,
            "warning: the result was cut at %zu of its %zu rows by a server or engine limit; "
            "narrow the query, or page through it with limit(N, OFFSET)\n",
            r->nrows, r->total_rows);
}

/* The terminal's height in lines (24 when it does not say). */
static size_t term_rows(void) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
    return 24;
}

/* A table taller than the terminal goes through the pager in the REPL ($PAGER, else
 * `less -FRSX`), when the output is the terminal; otherwise it is printed. */
static void print_table(cli *c, const cli_reply *r) {
    size_t width = c->width;
    bool ruled = c->mode == CLI_MODE_BOX;
    if (!c->pager || c->out != stdout || r->nrows * (ruled ? 2 : 1) + 4 < term_rows()) {
        cli_print_table(c->out, r, width, ruled);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        cli_print_table(c->out, r, width, ruled);
        return;
    }
    cli_print_table(mem, r, width, ruled);
    fclose(mem);
    const char *pager = getenv("PAGER");
    if (!pager || !*pager) pager = "less -FRSX";
    fflush(c->out);
    FILE *p = popen(pager, "w");
    if (!p) {
        fwrite(text, 1, len, c->out);
    } else {
        fwrite(text, 1, len, p); /* a pager quit early: EPIPE, SIGPIPE is ignored */
        pclose(p);
    }
    free(text);
}

/* Prints a query-like result: table + "N rows", "No results.", or its error. */
static bool print_query_result(cli *c, const cli_reply *r) {
    switch (r->kind) {
    case IL_RESULT_TABLE: {
        size_t ncols = r->ncols, nrows = r->nrows;
        bool message = ncols == 1 && strcmp(r->cols[0], "message") == 0;
        if (c->mode != CLI_MODE_TABLE && c->mode != CLI_MODE_BOX && !message) {
            cli_print_rows(c->out, r, c->mode);
            /* Standard output stays parseable; the warning goes beside it. */
            fflush(c->out);
            warn_cut(r, stderr);
            return true;
        }
        /* A zero-column result with a row is a yes (a true propositional query): it is
         * printed as a table of empty rows, not as "No results.". */
        if (nrows == 0) {
            fputs("No results.\n", c->out);
        } else if (ncols == 1 && strcmp(r->cols[0], "message") == 0) {
            for (size_t i = 0; i < nrows; i++)
                fprintf(c->out, "%s\n", r->cells[i] ? r->cells[i] : "");
        } else {
            print_table(c, r);
            fprintf(c->out, "%zu rows\n", nrows);
        }
        warn_cut(r, c->out);
        return true;
    }
    case IL_RESULT_ERROR:
        print_lines(c, r, c->interactive ? "Error: " : "");
        return false;
    case IL_RESULT_PARSE_ERROR:
        print_lines(c, r, "Parse error: ");
        return false;
    case IL_RESULT_MESSAGE:
        print_lines(c, r, "");
        return true;
    }
    return false;
}

static bool session_rule_followup(cli *c, const cli_reply *r) {
    uint32_t arity = r->arity;
    const char *head = r->rule_head;
    static const char *const names[] = {"X", "Y", "Z", "W", "V", "U", "T", "S", "R", "Q"};
    size_t cap = strlen(head) + 16 + (size_t)arity * 8;
    char *q = malloc(cap);
    size_t n = (size_t)snprintf(q, cap, "?%s(", head);
    for (uint32_t i = 0; i < arity; i++) {
        if (i < 10)
            n += (size_t)snprintf(q + n, cap - n, "%s%s", i ? ", " : "", names[i]);
        else
            n += (size_t)snprintf(q + n, cap - n, ", V%u", i);
    }
    snprintf(q + n, cap - n, ")");
    cli_reply *qr = execute(c, q);
    free(q);
    if (!qr) return false;
    bool ok = print_query_result(c, qr);
    cli_reply_free(qr);
    if (!ok) return false;
    c->rule_count++;
    fprintf(c->out, "(session: %u rule(s))\n", c->rule_count);
    return true;
}

static bool run_load(cli *c, const char *stmt) {
    /* `.load <path> [mode]`: the parser already rejected bad usage. */
    const char *p = stmt;
    while (*p == '.') p++;
    while (*p && !isspace((unsigned char)*p)) p++;
    while (isspace((unsigned char)*p)) p++;
    const char *e = p;
    while (*e && !isspace((unsigned char)*e)) e++;
    char *path = strndup(p, (size_t)(e - p));
    fprintf(c->out, "Loading file: %s\n", path);
    bool ok = false;
    if (c->load_depth < 16) {
        c->load_depth++;
        ok = cli_run_file(c, path);
        if (ok && !c->quit && !c->stop) fputs("File loaded.\n", c->out);
        c->load_depth--;
        /* In the REPL bail ends the load, not the session. */
        if (c->interactive && c->load_depth == 0) c->stop = false;
    } else {
        fputs("Too many nested .load commands\n", c->out);
    }
    free(path);
    return ok;
}

/* `.bail on|off`: a client setting, never sent to the engine or the server. NULL when
 * stmt is not `.bail`; else whether its argument was valid. */
static const bool *bail_command(cli *c, const char *stmt) {
    static const bool yes = true, no = false;
    const char *p = stmt;
    if (*p++ != '.' || strncasecmp(p, "bail", 4) != 0) return NULL;
    p += 4;
    if (*p && !isspace((unsigned char)*p)) return NULL;
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) n--;
    if (n == 2 && strncasecmp(p, "on", 2) == 0) {
        c->bail = true;
    } else if (n == 3 && strncasecmp(p, "off", 3) == 0) {
        c->bail = false;
    } else {
        fputs("Usage: .bail on|off\n", c->out);
        return &no;
    }
    if (c->interactive && !c->src) fprintf(c->out, "Bail on error: %s\n", c->bail ? "on" : "off");
    return &yes;
}

/* `.mode [table|csv|tsv|json|jsonl]`: a client setting like .bail; without an argument
 * it prints the current mode. */
static const bool *mode_command(cli *c, const char *stmt) {
    static const bool yes = true, no = false;
    const char *p = stmt;
    if (*p++ != '.' || strncasecmp(p, "mode", 4) != 0) return NULL;
    p += 4;
    if (*p && !isspace((unsigned char)*p)) return NULL;
    while (isspace((unsigned char)*p)) p++;
    size_t n = strlen(p);
    while (n && isspace((unsigned char)p[n - 1])) n--;
    if (n == 0) {
        fprintf(c->out, "Output mode: %s\n", cli_mode_name(c->mode));
        return &yes;
    }
    if (!cli_mode_parse(p, n, &c->mode)) {
        fputs("Usage: .mode table|box|csv|tsv|json|jsonl\n", c->out);
        return &no;
    }
    if (c->interactive && !c->src) fprintf(c->out, "Output mode: %s\n", cli_mode_name(c->mode));
    return &yes;
}

/* The argument of a client setting `.NAME ARG`: NULL when stmt is not that command, else
 * the trimmed argument (its length in *n). */
static const char *setting_arg(const char *stmt, const char *name, size_t *n) {
    size_t k = strlen(name);
    const char *p = stmt;
    if (*p++ != '.' || strncasecmp(p, name, k) != 0) return NULL;
    p += k;
    if (*p && !isspace((unsigned char)*p)) return NULL;
    while (isspace((unsigned char)*p)) p++;
    *n = strlen(p);
    while (*n && isspace((unsigned char)p[*n - 1])) --*n;
    return p;
}

/* `.width [N]`: table cells cut at N characters, 0 for whole; alone it prints the
 * setting. */
static const bool *width_command(cli *c, const char *stmt) {
    static const bool yes = true, no = false;
    size_t n;
    const char *p = setting_arg(stmt, "width", &n);
    if (!p) return NULL;
    if (n == 0) {
        fprintf(c->out, "Width: %zu%s\n", c->width, c->width ? "" : " (whole)");
        return &yes;
    }
    char *end;
    unsigned long w = strtoul(p, &end, 10);
    if (end != p + n || !isdigit((unsigned char)*p) || w > 1000000 || w == 1) {
        fputs("Usage: .width N (N >= 2 characters, or 0 for whole values)\n", c->out);
        return &no;
    }
    c->width = w;
    if (c->interactive && !c->src) fprintf(c->out, "Width: %zu%s\n", c->width, w ? "" : " (whole)");
    return &yes;
}

/* `.output [FILE]`: what statements print goes to FILE (created or truncated), or back
 * to standard output. */
static const bool *output_command(cli *c, const char *stmt) {
    static const bool yes = true, no = false;
    size_t n;
    const char *p = setting_arg(stmt, "output", &n);
    if (!p) return NULL;
    FILE *f = stdout;
    if (n) {
        char *path = strndup(p, n);
        f = fopen(path, "w");
        if (!f) {
            fprintf(c->out, "Cannot open '%s': %s\n", path, strerror(errno));
            free(path);
            return &no;
        }
        free(path);
    }
    if (c->redirect) fclose(c->redirect);
    c->redirect = f == stdout ? NULL : f;
    c->out = f;
    return &yes;
}

/* Points at the text of the statement's parse error, when it came from a script: the
 * position the message ends with (` (line L, column C)` within the statement), or else
 * the statement's start. */
static void point_at_error(cli *c, const cli_reply *r) {
    if (!c->src || !c->script) return;
    size_t at = 0;
    const char *msg = r->nlines ? r->lines[0] : "";
    const char *m = strstr(msg, " (line 1, column ");
    unsigned long col;
    if (m && sscanf(m, " (line 1, column %lu)", &col) == 1 && col > 0) {
        /* Columns count characters: step over col-1 of them. */
        const char *t = c->script->stmt;
        size_t n = strlen(t);
        for (unsigned long k = 1; k < col && at < n; k++) {
            at++;
            while (at < n && ((unsigned char)t[at] & 0xC0) == 0x80) at++;
        }
    }
    cli_source_point(c->src, c->out, iql_script_source(c->script, at));
}

static bool run_client_only(cli *c, const char *stmt) {
    const char *p = stmt;
    while (*p == '.') p++;
    char word[16] = {0};
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n]) && n < sizeof word - 1) {
        word[n] = (char)tolower((unsigned char)p[n]);
        n++;
    }
    if (strcmp(word, "load") == 0) {
        return run_load(c, stmt);
    } else if (strcmp(word, "quit") == 0 || strcmp(word, "exit") == 0 || strcmp(word, "q") == 0) {
        fputs("Goodbye!\n", c->out);
        c->quit = true;
    } else {
        /* `.help`, `.help all`, `.help CMD`: the words after the command. */
        cli_help(c->out, p + n, c->interactive && !c->src);
    }
    return true;
}

/* The engine's warnings about the statement (a relation that does not exist, a wrong
 * arity, an equality that never holds), on `warning:` lines: beside the rows (standard
 * error) in the machine-readable modes. */
static void print_warnings(cli *c, const cli_reply *r) {
    bool table = c->mode == CLI_MODE_TABLE || c->mode == CLI_MODE_BOX;
    FILE *out = table ? c->out : stderr;
    if (!table && r->nwarnings) fflush(c->out);
    for (size_t i = 0; i < r->nwarnings; i++) fprintf(out, "warning: %s\n", r->warnings[i]);
}

/* The stored facts a statement inserted or deleted, from its message (the same words in
 * process and through the server): "Inserted N fact(s) into", "Deleted N fact(s) from"
 * or "Deleted N facts from", "Update: D deleted, I inserted.". */
static unsigned long long facts_written(const cli_reply *r) {
    if (r->kind != IL_RESULT_MESSAGE || r->cls == IL_STMT_SESSION_FACT) return 0;
    if (r->counted) return r->written;
    unsigned long long total = 0;
    for (size_t i = 0; i < r->nlines; i++) {
        unsigned long long a, b;
        const char *l = r->lines[i];
        if (sscanf(l, "Inserted %llu fact(s) into", &a) == 1 ||
            sscanf(l, "Deleted %llu fact", &a) == 1)
            total += a;
        else if (sscanf(l, "Update: %llu deleted, %llu inserted.", &a, &b) == 2)
            total += a + b;
    }
    return total;
}

/* The proof trees a `.why` or `.why_not` result carries: as an indented tree in the REPL,
 * as JSON in the json modes; a script in table mode keeps the reference transcript. */
static void print_proofs(cli *c, const cli_reply *r) {
    if (!r->proof_trees) return;
    if (c->mode == CLI_MODE_JSON || c->mode == CLI_MODE_JSONL)
        fprintf(c->out, "{\"proof_trees\":%s}\n", r->proof_trees);
    else if (c->interactive && !c->src)
        cli_print_proofs(c->out, r->proof_trees);
}

bool cli_run_statement(cli *c, const char *stmt) {
    const bool *setting = bail_command(c, stmt);
    if (!setting) setting = mode_command(c, stmt);
    if (!setting) setting = width_command(c, stmt);
    if (!setting) setting = output_command(c, stmt);
    if (setting) return *setting;
    bool subscribed;
    if (cli_local_subs_command(c, stmt, &subscribed)) return subscribed;
    cli_reply *r = execute(c, stmt);
    if (!r) return false;
    bool ok = r->kind != IL_RESULT_ERROR && r->kind != IL_RESULT_PARSE_ERROR;
    switch (r->cls) {
    case IL_STMT_CLIENT_ONLY:
        if (r->kind == IL_RESULT_PARSE_ERROR)
            print_lines(c, r, "Parse error: ");
        else
            ok = run_client_only(c, stmt);
        break;
    case IL_STMT_SESSION_RULE:
        if (r->kind == IL_RESULT_MESSAGE)
            ok = session_rule_followup(c, r);
        else
            print_query_result(c, r);
        break;
    case IL_STMT_SESSION_FACT:
        if (print_query_result(c, r)) c->fact_count++;
        break;
    case IL_STMT_KG_SWITCH:
        print_lines(c, r, "");
        c->graph_changed = true;
        if (c->rule_count || c->fact_count)
            fprintf(c->out, "(Cleared %u session rule(s), %u session fact(s))\n", c->rule_count,
                    c->fact_count);
        c->rule_count = c->fact_count = 0;
        break;
    case IL_STMT_SESSION_CLEAR:
        print_lines(c, r, "");
        c->rule_count = c->fact_count = 0;
        break;
    case IL_STMT_REL_SHOW:
        if (r->kind != IL_RESULT_TABLE) {
            print_query_result(c, r);
            break;
        }
        fprintf(c->out, "Relation: %s\n", r->title ? r->title : "");
        if (r->nrows == 0) {
            fputs("  No data.\n", c->out);
        } else {
            print_table(c, r);
            fprintf(c->out, "%zu of %zu total rows\n", r->nrows, r->nrows);
        }
        break;
    default:
        print_query_result(c, r);
        break;
    }
    if (r->kind == IL_RESULT_PARSE_ERROR) point_at_error(c, r);
    print_proofs(c, r);
    print_warnings(c, r);
    if (ok) c->written += facts_written(r);
    cli_reply_free(r);
    cli_local_subs_publish(c);
    return ok;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen) {
    bool in = strcmp(path, "-") == 0;
    FILE *f = in ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "Failed to read script '%s': %s (os error %d)", path, strerror(errno),
                 errno);
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > MAX_SCRIPT_BYTES) {
        snprintf(err, errlen, "Script file '%s' is too large (%lld bytes, max %d bytes)", path,
                 (long long)st.st_size, MAX_SCRIPT_BYTES);
        if (!in) fclose(f);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        /* A pipe has no size to check beforehand. */
        if (n > MAX_SCRIPT_BYTES) {
            snprintf(err, errlen, "Script '%s' is too large (max %d bytes)", path,
                     MAX_SCRIPT_BYTES);
            free(buf);
            if (!in) fclose(f);
            return NULL;
        }
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    if (!in) fclose(f);
    *len = n;
    return buf;
}

/* The byte of the current statement that left it open: the quote of a string that runs
 * to the end of its line, else the first bracket never closed. */
static size_t unclosed_at(const iql_script *sc) {
    const char *t = sc->stmt;
    size_t n = strlen(t), depth = 0, first = 0;
    for (size_t g = 0; g < sc->nseg; g++) {
        size_t end = g + 1 < sc->nseg ? sc->seg_s[g + 1] : n;
        bool in_str = false;
        size_t quote = 0;
        for (size_t i = sc->seg_s[g]; i < end; i++) {
            char ch = t[i];
            if (in_str) {
                if (ch == '\\')
                    i++;
                else if (ch == '"')
                    in_str = false;
            } else if (ch == '"') {
                in_str = true;
                quote = i;
            } else if (ch == '(' || ch == '[') {
                if (depth++ == 0) first = i;
            } else if ((ch == ')' || ch == ']') && depth) {
                depth--;
            }
        }
        if (in_str) return quote;
    }
    return first;
}

/* A client setting (`.bail`, `.mode`, `.width`, `.output`): never sent. */
static bool client_setting(const char *stmt) {
    size_t n;
    return setting_arg(stmt, "bail", &n) || setting_arg(stmt, "mode", &n) ||
           setting_arg(stmt, "width", &n) || setting_arg(stmt, "output", &n);
}

/* --atomic in process: the statements in one transaction, printed one by one; the first
 * failure rolls back every change and stops the script. */
static void atomic_local(cli *c, iql_script *sc, cli_source *src) {
    if (!il_txn_begin(c->session)) {
        fputs("Cannot run the script atomically: another transaction is open\n", c->out);
        c->errors++;
        return;
    }
    unsigned long long written = c->written;
    unsigned long run = c->run;
    bool failed = false;
    iql_script_item it;
    while (!failed && !c->quit && iql_script_next(sc, &it)) {
        fprintf(c->out, "> %s\n", it.text);
        bool ok;
        if (it.unterminated) {
            fputs("Parse error: unterminated statement (unbalanced delimiters)\n", c->out);
            cli_source_point(src, c->out, iql_script_source(sc, unclosed_at(sc)));
            ok = false;
        } else {
            ok = cli_run_statement(c, it.text);
        }
        c->run++;
        failed = !ok;
    }
    if (failed) {
        il_txn_rollback(c->session);
        c->errors++;
        c->written = written;
        fprintf(c->out, "Rolled back: none of the %lu statement(s) run was applied (--atomic)\n",
                c->run - run);
        return;
    }
    char *err = NULL;
    if (!il_txn_commit(c->session, &err)) {
        fprintf(c->out, "Commit failed: %s\n", err ? err : "unknown error");
        free(err);
        c->errors++;
        c->written = written;
    }
}

/* --atomic through the server: the statements sent as one program (the server commits
 * its writes as one transaction, or none of them); its reply printed after the echoes. */
static void atomic_remote(cli *c, iql_script *sc, cli_source *src) {
    il_buf prog;
    il_buf_init(&prog);
    unsigned long n = 0;
    bool bad = false;
    iql_script_item it;
    while (iql_script_next(sc, &it)) {
        fprintf(c->out, "> %s\n", it.text);
        if (it.unterminated) {
            fputs("Parse error: unterminated statement (unbalanced delimiters)\n", c->out);
            cli_source_point(src, c->out, iql_script_source(sc, unclosed_at(sc)));
            bad = true;
        } else if (client_setting(it.text)) {
            cli_run_statement(c, it.text);
            continue;
        }
        if (n++) il_buf_putc(&prog, '\n');
        il_buf_puts(&prog, it.text);
    }
    c->run += n;
    if (bad || n == 0) {
        if (bad) {
            fputs("Not sent: the script has an unterminated statement (--atomic)\n", c->out);
            c->errors++;
        }
        il_buf_free(&prog);
        return;
    }
    cli_reply *r = execute(c, il_buf_str(&prog));
    il_buf_free(&prog);
    if (!r) {
        c->errors++;
        return;
    }
    bool ok = print_query_result(c, r);
    print_warnings(c, r);
    if (r->nerrors)
        c->errors += r->nerrors;
    else if (!ok)
        c->errors++;
    else
        c->written += facts_written(r);
    cli_reply_free(r);
}

bool cli_run_file(cli *c, const char *path) {
    size_t len;
    char err[1024];
    char *text = read_file(path, &len, err, sizeof err);
    if (!text) {
        fprintf(c->out, "%s\n", err);
        return false;
    }
    iql_script sc;
    iql_script_init(&sc, text, len);
    cli_source src;
    cli_source_init(&src, strcmp(path, "-") == 0 ? "<stdin>" : path, text, len);
    cli_source *outer_src = c->src;
    iql_script *outer_script = c->script;
    c->src = &src;
    c->script = &sc;
    bool atomic = c->atomic && c->load_depth == 0;
    if (atomic && c->remote)
        atomic_remote(c, &sc, &src);
    else if (atomic)
        atomic_local(c, &sc, &src);
    iql_script_item it;
    while (!atomic && !c->quit && !c->stop && iql_script_next(&sc, &it)) {
        if (c->interrupt && *c->interrupt) {
            /* Ctrl-C in the REPL stops a .load, like bail. */
            fputs("Interrupted: the rest of the file was not run.\n", c->out);
            c->stop = true;
            break;
        }
        fprintf(c->out, "> %s\n", it.text);
        bool ok;
        if (it.unterminated) {
            fputs("Parse error: unterminated statement (unbalanced delimiters)\n", c->out);
            cli_source_point(&src, c->out, iql_script_source(&sc, unclosed_at(&sc)));
            ok = false;
        } else {
            ok = cli_run_statement(c, it.text);
        }
        c->run++;
        if (ok) continue;
        c->errors++;
        if (c->bail && !c->quit) {
            size_t line, col;
            cli_source_locate(&src, iql_script_source(&sc, 0), &line, &col);
            fflush(c->out);
            fprintf(stderr, "inputlayer-client: %s:%zu: stopped at the first error (bail is on)\n",
                    src.path, line);
            c->stop = true;
        }
    }
    c->src = outer_src;
    c->script = outer_script;
    iql_script_free(&sc);
    free(text);
    return true;
}

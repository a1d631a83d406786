/* The help texts: the reference `.help` unchanged, and a table of every command the
 * client or the engine knows, with a one-line summary and a detail text, behind `.help
 * all` and `.help CMD`. */
#include "client/help.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *const HELP_TEXT =
    "InputLayer Client (WebSocket)\n"
    "================================\n"
    "\n"
    "Meta Commands:\n"
    "  .kg                  Show current knowledge graph\n"
    "  .kg list             List all knowledge graphs\n"
    "  .kg create <name>    Create knowledge graph\n"
    "  .kg use <name>       Switch to knowledge graph\n"
    "  .kg drop <name>      Drop knowledge graph\n"
    "  .rel                 List relations\n"
    "  .rel <name>          Describe relation\n"
    "  .rule                List rules\n"
    "  .rule <name>         Query rule\n"
    "  .rule drop <name>    Drop all clauses of a rule\n"
    "  .rule drop prefix <p> Drop all rules matching prefix\n"
    "  .rule remove <name> <n>  Remove clause n from rule (1-based)\n"
    "  .session             List session rules\n"
    "  .session clear       Clear all session rules\n"
    "  .session drop <n|name>  Drop session rule by index or relation name\n"
    "  .clear prefix <p>    Clear all facts from relations with prefix\n"
    "  .debug <query>       Show query plan without executing\n"
    "  .status              Server status\n"
    "  .help                Show this help\n"
    "  .quit                Exit\n"
    "\n"
    "Data Manipulation:\n"
    "  +edge(1, 2)          Insert fact (persistent)\n"
    "  -edge(1, 2)          Delete fact\n"
    "  edge(1, 2)           Session fact (transient)\n"
    "\n"
    "Rules:\n"
    "  +path(X, Y) <- edge(X, Y)    Persistent rule\n"
    "  foo(X, Y) <- bar(X, Y)       Session rule (transient)\n"
    "\n"
    "Queries:\n"
    "  ?path(1, X)          Query\n"
    "\n";

typedef struct command {
    const char *name;  /* the word after the dot */
    const char *usage; /* as typed */
    const char *line;  /* one line */
    const char *detail;
} command;

static const command COMMANDS[] = {
    {"kg", ".kg [list|create|use|drop <name>]", "show, list, create, switch or drop graphs",
     ".kg shows the current knowledge graph; .kg list lists them; .kg create NAME,\n"
     ".kg use NAME (session rules and facts are cleared) and .kg drop NAME. .kg acl\n"
     "list|grant|revoke manages who may use a graph (server)."},
    {"rel", ".rel [<name>|drop <name>]", "list relations, describe or drop one",
     ".rel lists the relations with their arity, columns and tuples; .rel NAME shows\n"
     "its rows; .rel drop NAME drops it."},
    {"rule", ".rule [<name>|def|drop|remove|clear|edit ...]", "list, query, show or change rules",
     ".rule lists persistent rules; .rule NAME queries one; .rule def NAME prints its\n"
     "clauses; .rule drop NAME, .rule drop prefix P, .rule remove NAME N (1-based),\n"
     ".rule clear NAME and .rule edit NAME N CLAUSE change them."},
    {"session", ".session [clear|drop <n|name>]", "list or drop session rules and facts",
     ".session lists this session's rules and facts (transient: they end with the\n"
     "session, or the connection); .session clear drops them all; .session drop N|NAME\n"
     "drops one."},
    {"clear", ".clear prefix <p>", "clear the facts of relations named with a prefix", NULL},
    {"index", ".index [list|create|drop|stats|rebuild ...]", "vector (HNSW) indexes",
     ".index lists indexes; .index create NAME on REL(COLUMN) [type hnsw, metric M, m N,\n"
     "ef_construction N, ef_search N]; .index drop|stats|rebuild NAME."},
    {"load", ".load <file> [mode]", "run a script file (statements echoed, as --script)", NULL},
    {"why", ".why [full] <query>", "a query's rows with their proofs",
     ".why ?QUERY answers the query and explains each row by its derivation; in the REPL\n"
     "(and with --mode json) the proof tree is printed as an indented tree after the\n"
     "table. .why full shows every derivation."},
    {"why_not", ".why_not <relation>(<values>)", "why a tuple is not derived",
     ".why_not REL(V, ...) explains, rule by rule, which body atom or condition failed\n"
     "for the tuple."},
    {"debug", ".debug <query>", "show a query's plan without running it", NULL},
    {"subscribe", ".subscribe <name> ?<query>", "a standing query: its rows, then each change",
     ".subscribe NAME ?QUERY prints the query's rows, then (in the REPL, through a\n"
     "server) each change as it arrives between prompts: a line `[NAME] revision R:`,\n"
     "then `- row` for each row retracted and `+ row` for each row inserted.\n"
     ".unsubscribe NAME ends it."},
    {"unsubscribe", ".unsubscribe <name>", "end a subscription", NULL},
    {"backup", ".backup [<dir>|status]", "an online backup of the data directory", NULL},
    {"compact", ".compact", "compact the store", NULL},
    {"status", ".status", "server or engine status", NULL},
    {"user", ".user list|create|drop|password|role ...", "users (server, admin)", NULL},
    {"apikey", ".apikey list|create|revoke ...", "API keys (server)", NULL},
    {"mode", ".mode [table|box|csv|tsv|json|jsonl]", "how result rows are printed",
     ".mode alone prints the current mode. table is the reference box table (the\n"
     "default); box the same with cells cut at .width; csv, tsv, json and jsonl print\n"
     "every value whole."},
    {"width", ".width <n>", "cut table cells at n characters (0: full width)",
     ".width N cuts cells in table and box mode at N characters with \"…\" (the default\n"
     "is 40); .width 0 prints cells whole. .width alone prints the setting."},
    {"output", ".output [<file>]", "send results to a file; alone: back to the terminal",
     ".output FILE writes what statements print to FILE (created or truncated);\n"
     ".output alone goes back to standard output."},
    {"bail", ".bail on|off", "stop a script at its first failed statement", NULL},
    {"help", ".help [all|<command>]", "the reference help; every command; one command", NULL},
    {"quit", ".quit", "leave (also .exit, .q, or Ctrl-D)", NULL},
};

enum { NCOMMANDS = sizeof COMMANDS / sizeof COMMANDS[0] };

const char *cli_help_command(size_t i) {
    static const char *const dotted[] = {
        ".kg",     ".rel",     ".rule",    ".session", ".clear",     ".index",
        ".load",   ".why",     ".why_not", ".debug",   ".subscribe", ".unsubscribe",
        ".backup", ".compact", ".status",  ".user",    ".apikey",    ".mode",
        ".width",  ".output",  ".bail",    ".help",    ".quit",
    };
    _Static_assert(sizeof dotted / sizeof dotted[0] == NCOMMANDS, "one dotted name per command");
    return i < NCOMMANDS ? dotted[i] : NULL;
}

void cli_help(FILE *out, const char *arg, bool detail) {
    while (isspace((unsigned char)*arg) || *arg == '.') arg++;
    size_t n = strlen(arg);
    while (n && isspace((unsigned char)arg[n - 1])) n--;
    if (n == 0) {
        fputs(HELP_TEXT, out);
        return;
    }
    if (n == 3 && strncasecmp(arg, "all", 3) == 0) {
        for (size_t i = 0; i < NCOMMANDS; i++)
            fprintf(out, "  %-46s %s\n", COMMANDS[i].usage, COMMANDS[i].line);
        fputs("  +fact(..) -fact(..) fact(..) +head <- body  ?query   (statements: .help)\n", out);
        return;
    }
    if (!detail) {
        /* The reference transcripts pin `.help kg` (and the like) in scripts: the text. */
        fputs(HELP_TEXT, out);
        return;
    }
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (strlen(COMMANDS[i].name) != n || strncasecmp(arg, COMMANDS[i].name, n) != 0) continue;
        fprintf(out, "%s\n  %s\n", COMMANDS[i].usage, COMMANDS[i].line);
        if (COMMANDS[i].detail) fprintf(out, "%s\n", COMMANDS[i].detail);
        return;
    }
    fprintf(out, "No help for '%.*s'. .help all lists every command.\n", (int)n, arg);
}

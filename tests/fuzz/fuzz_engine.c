/* libFuzzer target for the engine: the input is a script, run statement by statement in
 * a session of a fresh in-memory engine, each statement under a deadline and a memory
 * limit and the views' maintenance under a budget (a recursion without end is stopped,
 * not a hang). Nothing may crash, leak or
 * trip a sanitizer, whatever the statements. Commands that reach outside the engine
 * (.load reads files, .backup writes them) are skipped. A statement that cannot parse
 * must come back as an error, never as rows: one the parser rejects, or one the syntax
 * oracle (syntax_oracle.h) finds malformed. Run with `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/arena.h"
#include "inputlayer.h"
#include "iql/parser.h"
#include "iql/script.h"
#include "syntax_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool outside(const char *text, size_t len) {
    while (len && (*text == ' ' || *text == '\t')) text++, len--;
    return (len >= 5 && memcmp(text, ".load", 5) == 0) ||
           (len >= 7 && memcmp(text, ".backup", 7) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    il_engine *e = il_engine_open(NULL, NULL);
    if (!e) return 0;
    il_engine_set_view_budget(e, 50 * 1000000u); /* as the server bounds maintenance */
    il_session *s = il_session_open(e);
    iql_script sc;
    iql_script_init(&sc, (const char *)data, size);
    iql_script_item it;
    int n = 0;
    while (iql_script_next(&sc, &it) && n++ < 64) {
        if (outside(it.text, it.len)) continue;
        il_limits lim = {.deadline_ns = now_ns() + 50 * 1000000u, .max_memory_bytes = 64u << 20};
        il_session_set_limits(s, &lim);
        il_result *r = il_execute(s, it.text, it.len);
        il_arena a;
        il_arena_init(&a);
        iql_stmt st;
        const char *err = NULL;
        bool rejected = !iql_parse(&a, it.text, it.len, &st, &err);
        il_arena_destroy(&a);
        il_result_kind k = il_result_kind_of(r);
        if ((rejected || syntax_oracle_malformed(it.text, it.len)) && k != IL_RESULT_PARSE_ERROR &&
            k != IL_RESULT_ERROR)
            abort(); /* a statement that does not parse was answered as if it did */
        il_result_free(r);
    }
    iql_script_free(&sc);
    il_engine_close(e);
    return 0;
}

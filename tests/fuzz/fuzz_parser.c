/* libFuzzer target for the IQL front end: the script reader splits the input into
 * statements, each is parsed, and a parsed rule or query is printed back. Nothing may
 * crash, leak or hang, whatever the bytes. Run with `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "iql/parser.h"
#include "iql/print.h"
#include "iql/script.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    iql_script sc;
    iql_script_init(&sc, (const char *)data, size);
    iql_script_item it;
    il_arena a;
    il_arena_init(&a);
    il_buf out;
    il_buf_init(&out);
    while (iql_script_next(&sc, &it)) {
        iql_stmt st;
        const char *err;
        if (iql_parse(&a, it.text, it.len, &st, &err)) {
            switch (st.kind) {
            case IQL_STMT_PERSIST_RULE:
            case IQL_STMT_SESSION_RULE:
            case IQL_STMT_COND_DELETE: iql_fmt_rule(&st.u.rule, &out); break;
            case IQL_STMT_QUERY: iql_fmt_atom(&st.u.query.goal, &out); break;
            default: break;
            }
        }
        il_buf_clear(&out);
        il_arena_reset(&a);
    }
    /* the whole input as one statement too, newlines and all */
    iql_stmt st;
    const char *err;
    iql_parse(&a, (const char *)data, size, &st, &err);
    il_buf_free(&out);
    il_arena_destroy(&a);
    iql_script_free(&sc);
    return 0;
}

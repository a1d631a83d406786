/* Unit tests of the engine when its log cannot be written or synced (docs/durability.md,
 * "A full disk and failed syncs"), with the failing-disk testing aid
 * (INPUTLAYER_TEST_LOG_FAULT_FILE): a statement, an update and a transaction whose record
 * is not written are undone and report "Storage full", the engine names the problem,
 * writing goes on in a new segment once the log takes writes again, and a restart
 * answers the same; after a failed sync no write is taken until a checkpoint rewrote the
 * state, and then everything in memory is durable. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inputlayer.h"
#include "unit_fixture.h"

static char DIR_[64];
static char FAULT[96];
static il_engine *EN;
static il_session *S;

static void set_fault(const char *word) {
    FILE *f = fopen(FAULT, "w");
    cr_assert_not_null(f);
    fputs(word, f);
    fclose(f);
}

static void open_engine(void) {
    EN = unit_engine_open_dir(DIR_, &S);
}

static void setup(void) {
    unit_mkdtemp(DIR_, sizeof DIR_, "fault");
    snprintf(FAULT, sizeof FAULT, "%s.fault", DIR_);
    set_fault("");
    setenv("INPUTLAYER_TEST_LOG_FAULT_FILE", FAULT, 1);
    open_engine();
}

static void teardown(void) {
    unit_engine_close(EN);
    unsetenv("INPUTLAYER_TEST_LOG_FAULT_FILE");
    unit_rm_tree(DIR_);
    remove(FAULT);
}

TestSuite(storage_fault, .init = setup, .fini = teardown);

/* The first line of the statement's result (malloc'ed) and whether it was an error. */
static char *exec_line(const char *stmt, bool *error) {
    il_result *r = il_execute(S, stmt, strlen(stmt));
    *error = il_result_kind_of(r) == IL_RESULT_ERROR;
    char *line = strdup(il_result_nlines(r) ? il_result_line(r, 0) : "");
    il_result_free(r);
    return line;
}

static void expect_full(const char *stmt) {
    bool error;
    char *line = exec_line(stmt, &error);
    cr_assert(error, "%s: %s", stmt, line);
    cr_assert(strncmp(line, "Storage full", 12) == 0, "%s: %s", stmt, line);
    cr_assert(strstr(line, "nothing of it was applied"), "%s", line);
    free(line);
}

static void expect_answer(const char *query, const char *want) {
    char *got = unit_answer_str(S, query);
    cr_assert_str_eq(got, want);
    free(got);
}

static size_t segments(void) {
    char wal[96];
    snprintf(wal, sizeof wal, "%s/wal", DIR_);
    DIR *d = opendir(wal);
    cr_assert_not_null(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        n +=
            strncmp(de->d_name, "wal-", 4) == 0 && len > 4 && !strcmp(de->d_name + len - 4, ".log");
    }
    closedir(d);
    return n;
}

Test(storage_fault, a_write_the_log_refuses_is_undone) {
    unit_run(S, "+a(1)");
    unit_run(S, "+r(X) <- a(X)");
    char *no_b = unit_answer_str(S, "?b(X)"); /* b never existed */
    size_t segs = segments();
    cr_assert_null(il_engine_storage_problem(EN));
    set_fault("write");
    expect_full("+a(2)");
    expect_full("-a(1), +a(9) <- a(1)"); /* an update: its delete is undone too */
    expect_full("+b[(1), (2), (3)]");
    cr_assert_not_null(strstr(il_engine_storage_problem(EN), "disk is full"));
    /* a transaction: rolled back whole */
    cr_assert(il_txn_begin(S));
    unit_run(S, "+a(3)");
    unit_run(S, "-a(1)");
    char *err = NULL;
    bool undone = false;
    cr_assert_not(il_txn_commit_or_undo(S, &undone, &err));
    cr_assert(undone);
    cr_assert(strncmp(err, "Storage full", 12) == 0, "%s", err);
    free(err);
    expect_answer("?a(X)", "?a(X) -> (1)\n");
    expect_answer("?r(X)", "?r(X) -> (1)\n");
    expect_answer("?b(X)", no_b);

    set_fault("");
    unit_run(S, "+a(4)");
    cr_assert_null(il_engine_storage_problem(EN));
    cr_assert_eq(segments(), segs + 1, "writing goes on in a new segment");
    expect_answer("?r(X)", "?r(X) -> (1) (4)\n");

    unit_engine_close(EN);
    open_engine();
    expect_answer("?a(X)", "?a(X) -> (1) (4)\n");
    expect_answer("?b(X)", no_b);
    free(no_b);
    unit_run(S, "+a(5)");
    unit_engine_close(EN);
    open_engine();
    expect_answer("?r(X)", "?r(X) -> (1) (4) (5)\n");
}

Test(storage_fault, a_failed_sync_stops_writes_until_a_checkpoint) {
    unit_run(S, "+a(1)");
    set_fault("sync");
    bool error;
    char *line = exec_line("+a(2)", &error);
    cr_assert(error && strncmp(line, "Storage error", 13) == 0, "%s", line);
    free(line);
    cr_assert_not_null(strstr(il_engine_storage_problem(EN), "sync"));
    /* never synced again on the same pages: with the fault gone, il_engine_sync fails */
    set_fault("");
    char *err = NULL;
    cr_assert_not(il_engine_sync(EN, &err));
    free(err);
    /* the next write rewrites the state into a checkpoint first */
    unit_run(S, "+a(3)");
    cr_assert_null(il_engine_storage_problem(EN));
    cr_assert(il_engine_sync(EN, NULL));
    expect_answer("?a(X)", "?a(X) -> (1) (2) (3)\n");
    unit_engine_close(EN);
    open_engine();
    expect_answer("?a(X)", "?a(X) -> (1) (2) (3)\n");
}

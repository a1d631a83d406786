/* Unit tests of online backup (src/store/backup_export.c, backup_manifest.c,
 * backup_restore.c): an export restores to the same answers, holds the state of the
 * moment it was taken and the embedder's files, and lists every file with its size and
 * SHA-256; the refusals of `.backup`; a failed export removes what it wrote; restore
 * refuses an export without a manifest, with a damaged, truncated or missing file, with
 * a manifest naming a path outside the export, and a data directory that holds data,
 * leaving that directory as it was; a restored directory goes on from the export's log
 * position. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "inputlayer.h"
#include "unit_fixture.h"
#include "value/value.h"

static char DIR_[64];
static il_engine *E;
static il_session *S;

static void mkdir_tmp(void) {
    unit_mkdtemp(DIR_, sizeof DIR_, "backup");
}

static void teardown(void) {
    unit_rm_tree(DIR_);
    val_shutdown();
}

TestSuite(backup, .init = mkdir_tmp, .fini = teardown);

static char *path(const char *sub) {
    static char p[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", DIR_, sub);
    return p[k];
}

static void open_engine(const char *sub) {
    char *err = NULL;
    E = il_engine_open(sub ? path(sub) : NULL, &err);
    cr_assert_not_null(E, "%s", err ? err : "?");
    S = il_session_open(E);
}

static void close_engine(void) {
    il_engine_close(E);
    E = NULL;
}

static il_result *exec(const char *text) {
    return il_execute(S, text, strlen(text));
}

static void run(const char *text) {
    unit_run(S, text);
}

/* The lines of a result, joined by '\n' (malloc'ed), and its kind; frees it. */
static char *lines_of(il_result *r, il_result_kind *kind) {
    *kind = il_result_kind_of(r);
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < il_result_nlines(r); i++)
        il_buf_printf(&b, "%s%s", i ? "\n" : "", il_result_line(r, i));
    il_result_free(r);
    return il_buf_take(&b);
}

/* The lines of a statement's result; *ok false for an error. */
static char *reply(const char *text, bool *ok) {
    il_result_kind k;
    char *lines = lines_of(exec(text), &k);
    *ok = k != IL_RESULT_ERROR && k != IL_RESULT_PARSE_ERROR;
    return lines;
}

static void expect_error(const char *text, const char *needle) {
    bool ok;
    char *msg = reply(text, &ok);
    cr_assert(!ok, "%s succeeded: %s", text, msg);
    cr_assert(strstr(msg, needle), "%s: '%s' has no '%s'", text, msg, needle);
    free(msg);
}

static void answer(const char *q, il_buf *out) {
    unit_answer(S, q, out);
}

static const char *SCRIPT[] = {
    "+edge[(1, 2), (2, 3), (3, 4)]",
    "+reach(X, Y) <- edge(X, Y)",
    "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
    "+person(name: string, age: int)",
    "+person[(\"ann\", 30), (\"bob\", 41)]",
    "+vals(1.5, \"s\", true, [1.0, -2.5], 99999999999999)",
    "+gone(1)",
    "-gone(1)",
    ".kg create other",
    ".kg use other",
    "+o[(\"x\"), (\"y\")]",
    ".kg use default",
};

static const char *QUERIES[] = {
    ".kg use default",
    "?edge(X, Y)",
    "?reach(X, Y)",
    "?person(N, A)",
    "?vals(A, B, C, D, E)",
    "?gone(X)",
    ".rel",
    ".rule",
    ".kg list",
    ".kg use other",
    "?o(X)",
    ".kg use default",
};

static char *answers(void) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < sizeof QUERIES / sizeof *QUERIES; i++) answer(QUERIES[i], &b);
    return il_buf_take(&b);
}

/* The embedder's file: its contents at the moment of the capture. */
static const char *EXTRA = "users as of the capture\n";
static int captures;
static void capture(void *ctx, il_backup_capture *cap) {
    (void)ctx;
    captures++;
    il_backup_add_file(cap, "extra.txt", EXTRA, strlen(EXTRA));
    il_backup_add_file(cap, "../escape", "x", 1); /* not a plain name: ignored */
    il_backup_add_file(cap, "wal", "x", 1);       /* the store's own: ignored */
}

/* Polls `.backup status` until the export is no longer running; its lines. */
static char *wait_done(void) {
    for (int i = 0; i < 20000; i++) {
        bool ok;
        char *msg = reply(".backup status", &ok);
        cr_assert(ok, "%s", msg);
        if (strncmp(msg, "Export running", 14) != 0) return msg;
        free(msg);
        usleep(1000);
    }
    cr_assert_fail("the export did not finish");
    return NULL;
}

static char *read_file(const char *p, size_t *len) {
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    il_buf b;
    il_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) il_buf_put(&b, chunk, n);
    fclose(f);
    if (len) *len = b.len;
    if (!b.data) il_buf_puts(&b, "");
    return il_buf_take(&b);
}

static bool exists(const char *p) {
    return access(p, F_OK) == 0;
}

static uint64_t engine_lsn(void) {
    size_t n = 0;
    DIR *d = opendir(path("backups/b1/ckpt"));
    cr_assert_not_null(d);
    uint64_t lsn = 0;
    for (struct dirent *de; (de = readdir(d));)
        if (sscanf(de->d_name, "ckpt-%16" SCNx64 ".ckpt", &lsn) == 1) n++;
    closedir(d);
    cr_assert_eq(n, 1);
    return lsn;
}

/* An engine on data/ with SCRIPT run and backups going to backups/. */
static void open_with_backups(void) {
    open_engine("data");
    for (size_t i = 0; i < sizeof SCRIPT / sizeof *SCRIPT; i++) run(SCRIPT[i]);
    cr_assert(il_engine_set_backup(E, path("backups"), capture, NULL));
}

/* Exports backups/b1 and waits for it. */
static void export_b1(void) {
    bool ok;
    char *msg = reply(".backup b1", &ok);
    cr_assert(ok, "%s", msg);
    char want[512];
    snprintf(want, sizeof want, "Exporting the checkpoint at revision %u to %s.\n", 10u,
             path("backups/b1"));
    cr_assert(strncmp(msg, want, strlen(want)) == 0, "%s", msg);
    cr_assert(strstr(msg, "Commits were held for ") &&
                  strstr(msg, " us; check progress with .backup status."),
              "%s", msg);
    free(msg);
    msg = wait_done();
    snprintf(want, sizeof want, "Last export complete: revision 10 in %s.\n3 files, ",
             path("backups/b1"));
    cr_assert(strncmp(msg, want, strlen(want)) == 0, "%s", msg);
    free(msg);
}

Test(backup, export_restores_the_same_answers_and_files) {
    open_with_backups();
    char *before = answers();
    export_b1();
    cr_assert_eq(captures, 1);
    /* after the export: not in it */
    run("+edge(9, 9)");
    close_engine();

    cr_assert(!exists(path("backups/b1/wal")));
    cr_assert(!exists(path("backups/b1/../escape")));
    size_t len;
    char *manifest = read_file(path("backups/b1/inputlayer-backup.json"), &len);
    cr_assert_not_null(manifest);
    json_error_t jerr;
    json_t *m = json_loads(manifest, 0, &jerr);
    cr_assert_not_null(m, "%s", jerr.text);
    cr_assert_eq(json_integer_value(json_object_get(m, "revision")), (json_int_t)engine_lsn());
    cr_assert_eq(json_integer_value(json_object_get(m, "log_position")), 10);
    cr_assert_str_eq(json_string_value(json_object_get(m, "engine_version")), IL_ENGINE_VERSION);
    json_t *files = json_object_get(m, "files");
    cr_assert_eq(json_array_size(files), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *f = json_array_get(files, i);
        const char *p = json_string_value(json_object_get(f, "path"));
        struct stat sb;
        cr_assert_eq(stat(path(p[0] == 'c' ? "backups/b1/ckpt/ckpt-000000000000000a.ckpt"
                                           : "backups/b1/extra.txt"),
                          &sb),
                     0, "%s", p);
        cr_assert_eq(json_integer_value(json_object_get(f, "size")), sb.st_size, "%s", p);
        cr_assert_eq(strlen(json_string_value(json_object_get(f, "sha256"))), 64);
    }
    json_decref(m);
    free(manifest);

    il_restore_info info;
    char *err = NULL;
    cr_assert(il_backup_restore(path("backups/b1"), path("restored"), &info, &err), "%s", err);
    cr_assert_eq(info.revision, 10);
    cr_assert_eq(info.files, 2);
    char *extra = read_file(path("restored/extra.txt"), NULL);
    cr_assert_str_eq(extra, EXTRA);
    free(extra);
    open_engine("restored");
    char *after = answers();
    cr_assert_str_eq(after, before);
    /* the restored directory goes on after the export's position, durably */
    run("+edge(7, 8)");
    close_engine();
    open_engine("restored");
    il_buf b;
    il_buf_init(&b);
    answer("?edge(7, Y)", &b);
    cr_assert_str_eq(b.data, "?edge(7, Y) -> (7, 8)\n");
    il_buf_free(&b);
    close_engine();
    free(before);
    free(after);
}

Test(backup, refusals) {
    open_engine(NULL);
    expect_error(".backup", "`.backup` is disabled: no backup directory is configured");
    cr_assert(!il_engine_set_backup(E, path("backups"), NULL, NULL)); /* no data directory */
    close_engine();
    open_engine("data");
    expect_error(".backup", "storage.backup_dir");
    expect_error(".backup status", "storage.backup_dir");
    cr_assert(il_engine_set_backup(E, path("backups"), NULL, NULL));
    bool ok;
    char *msg = reply(".backup status", &ok);
    cr_assert(ok && strcmp(msg, "No export yet.") == 0, "%s", msg);
    free(msg);
    expect_error(".backup .hidden", "invalid backup name '.hidden'");
    expect_error(".backup a/b", "invalid backup name 'a/b'");
    expect_error(".backup a b", "Usage: .backup [name] | .backup status");
    cr_assert(!exists(path("backups/a")));
    cr_assert_eq(mkdir(path("backups"), 0700), 0);
    cr_assert_eq(mkdir(path("backups/taken"), 0700), 0);
    close(open(path("backups/taken/f"), O_WRONLY | O_CREAT, 0600));
    expect_error(".backup taken", "already exists and is not empty");
    close(open(path("backups/file"), O_WRONLY | O_CREAT, 0600));
    expect_error(".backup file", "already exists and is not a directory");
    /* a second export while one runs: nothing can finish between two statements on
       this thread when the first has a large state to write */
    il_buf big;
    il_buf_init(&big);
    for (int k = 0; k < 20; k++) {
        il_buf_clear(&big);
        il_buf_puts(&big, "+m[");
        for (int i = 0; i < 10000; i++)
            il_buf_printf(&big, "%s(%d, \"s%d\")", i ? ", " : "", k * 10000 + i, i);
        il_buf_puts(&big, "]");
        run(big.data);
    }
    il_buf_free(&big);
    msg = reply(".backup first", &ok);
    cr_assert(ok, "%s", msg);
    free(msg);
    expect_error(".backup second", "an export is already running (revision ");
    msg = wait_done();
    cr_assert(strncmp(msg, "Last export complete", 20) == 0, "%s", msg);
    free(msg);
    cr_assert(!exists(path("backups/second")));
    /* an empty directory may be claimed; the default name is checkpoint-<UTC time> */
    mkdir(path("backups/empty"), 0700);
    msg = reply(".backup empty", &ok);
    cr_assert(ok, "%s", msg);
    free(msg);
    free(wait_done());
    cr_assert(exists(path("backups/empty/inputlayer-backup.json")));
    msg = reply(".backup", &ok);
    cr_assert(ok && strstr(msg, "/checkpoint-"), "%s", msg);
    free(msg);
    free(wait_done());
    close_engine();
}

/* The capture makes the export fail: a directory where the writer puts the embedder's
 * file. Everything the export wrote goes; what it did not write stays. */
static void capture_blocked(void *ctx, il_backup_capture *cap) {
    (void)ctx;
    mkdir(path("backups/blocked/extra.txt"), 0700);
    il_backup_add_file(cap, "extra.txt", EXTRA, strlen(EXTRA));
}

Test(backup, failure_removes_partial_output) {
    open_with_backups();
    cr_assert(il_engine_set_backup(E, path("backups"), capture_blocked, NULL));
    bool ok;
    char *msg = reply(".backup blocked", &ok);
    cr_assert(ok, "%s", msg);
    free(msg);
    msg = wait_done();
    cr_assert(strstr(msg, "Last export failed: revision 10 to ") && strstr(msg, "cannot write") &&
                  strstr(msg, "Its partial output was removed."),
              "%s", msg);
    free(msg);
    cr_assert(!exists(path("backups/blocked/ckpt")));
    cr_assert(!exists(path("backups/blocked/inputlayer-backup.json")));
    cr_assert(exists(path("backups/blocked/extra.txt"))); /* not the export's */
    close_engine();
}

Test(backup, close_during_an_export_leaves_it_whole_or_gone) {
    open_engine("data");
    cr_assert(il_engine_set_backup(E, path("backups"), NULL, NULL));
    il_buf big;
    il_buf_init(&big);
    for (int k = 0; k < 20; k++) {
        il_buf_clear(&big);
        il_buf_puts(&big, "+m[");
        for (int i = 0; i < 10000; i++) il_buf_printf(&big, "%s(%d)", i ? ", " : "", k * 10000 + i);
        il_buf_puts(&big, "]");
        run(big.data);
    }
    il_buf_free(&big);
    run(".backup late");
    close_engine();
    if (exists(path("backups/late")))
        cr_assert(exists(path("backups/late/inputlayer-backup.json")));
}

/* ---- restore ---- */

static void copy_export(const char *to) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp -a %s %s", path("backups/b1"), path(to));
    cr_assert_eq(system(cmd), 0);
}

static void expect_refused(const char *src, const char *dest, const char *needle) {
    char *err = NULL;
    cr_assert(!il_backup_restore(path(src), path(dest), NULL, &err), "%s restored", src);
    cr_assert(err && strstr(err, needle), "%s: '%s' has no '%s'", src, err, needle);
    free(err);
}

static void write_at(const char *p, long off, const char *bytes, size_t n) {
    int fd = open(p, O_WRONLY);
    cr_assert(fd >= 0);
    cr_assert_eq(pwrite(fd, bytes, n, off), (ssize_t)n);
    close(fd);
}

Test(backup, restore_refusals) {
    open_with_backups();
    export_b1();
    close_engine();
    const char *ckpt = "ckpt/ckpt-000000000000000a.ckpt";
    char p[128];

    copy_export("no-manifest");
    unlink(path("no-manifest/inputlayer-backup.json"));
    expect_refused("no-manifest", "fresh", "has no manifest");

    copy_export("flipped");
    snprintf(p, sizeof p, "flipped/%s", ckpt);
    write_at(path(p), 50, "\x7f", 1);
    expect_refused("flipped", "fresh", "SHA-256 mismatch");

    copy_export("truncated");
    cr_assert_eq(truncate(path("truncated/extra.txt"), 3), 0);
    expect_refused("truncated", "fresh", "3 bytes where the manifest lists");

    copy_export("missing");
    snprintf(p, sizeof p, "missing/%s", ckpt);
    unlink(path(p));
    expect_refused("missing", "fresh", ": missing");

    /* a manifest that names a path outside the export */
    copy_export("escape");
    size_t len;
    char *m = read_file(path("escape/inputlayer-backup.json"), &len);
    char *at = strstr(m, "\"extra.txt\"");
    cr_assert_not_null(at);
    memcpy(at, "\"../tx.txt\"", 11);
    FILE *f = fopen(path("escape/inputlayer-backup.json"), "wb");
    fwrite(m, 1, len, f);
    fclose(f);
    free(m);
    expect_refused("escape", "fresh", "it lists '../tx.txt', which an export cannot hold");
    cr_assert(!exists(path("fresh")));

    /* a data directory that holds data stays as it was */
    expect_refused("backups/b1", "data", "already holds data");
    cr_assert(!exists(path("data/extra.txt")));
    mkdir(path("half"), 0700);
    close(open(path("half/extra.txt"), O_WRONLY | O_CREAT, 0600));
    expect_refused("backups/b1", "half", "half/extra.txt already exists");
    cr_assert(exists(path("half/extra.txt")));
    cr_assert(!exists(path("half/ckpt")));
    /* and the export itself is fine */
    char *err = NULL;
    cr_assert(il_backup_restore(path("backups/b1"), path("fine"), NULL, &err), "%s", err);
}

/* il_backup_start and il_backup_poll answer as `.backup` and `.backup status` do, with
 * no statement: refused without a directory, then an export made and reported. */
Test(backup, start_and_poll_through_the_api) {
    open_engine("data");
    il_result_kind kind;
    char *msg = lines_of(il_backup_poll(E), &kind);
    cr_assert(kind == IL_RESULT_ERROR && strstr(msg, "storage.backup_dir"), "%s", msg);
    free(msg);
    msg = lines_of(il_backup_start(E, "b1"), &kind);
    cr_assert(kind == IL_RESULT_ERROR && strstr(msg, "Backup error: "), "%s", msg);
    free(msg);
    cr_assert(il_backup_make_dirs(path("made/backups")));
    cr_assert(exists(path("made/backups")));
    for (size_t i = 0; i < sizeof SCRIPT / sizeof *SCRIPT; i++) run(SCRIPT[i]);
    cr_assert(il_engine_set_backup(E, path("made/backups"), NULL, NULL));
    msg = lines_of(il_backup_start(E, "b1"), &kind);
    cr_assert(kind == IL_RESULT_MESSAGE && strncmp(msg, "Exporting the checkpoint", 24) == 0, "%s",
              msg);
    free(msg);
    for (int i = 0; i < 20000; i++) {
        msg = lines_of(il_backup_poll(E), &kind);
        cr_assert(kind == IL_RESULT_MESSAGE, "%s", msg);
        if (strncmp(msg, "Export running", 14) != 0) break;
        free(msg);
        msg = NULL;
        usleep(1000);
    }
    cr_assert(msg && strncmp(msg, "Last export complete: revision 10 in ", 37) == 0, "%s", msg);
    free(msg);
    cr_assert(exists(path("made/backups/b1/inputlayer-backup.json")));
    close_engine();
}

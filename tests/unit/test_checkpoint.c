/* Unit tests of checkpoints (src/store/store_ckpt.c, ckpt_file.c, src/kg/image.c): every
 * kind of stored state survives a checkpoint and a restart from it alone; with the
 * newest checkpoint deleted or damaged, the one before it and the log since recover
 * everything; a checkpoint deletes only the log the previous one covers; deletes made
 * before a checkpoint stay deleted; the log size starts one in the background. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputlayer.h"
#include "unit_fixture.h"
#include "kg/kg.h"
#include "kg/record.h"
#include "store/store.h"
#include "value/value.h"

static char DIR_[64];
static il_engine *E;
static il_session *S;

static void mkdir_tmp(void) {
    unit_mkdtemp(DIR_, sizeof DIR_, "ckpt");
}

static void teardown(void) {
    unit_rm_tree(DIR_);
    val_shutdown();
}

TestSuite(ckpt, .init = mkdir_tmp, .fini = teardown);

/* An engine on DIR_ with log segments of seg_size bytes (0: the default), so that tests
 * can make checkpoints cover whole segments. */
static void open_engine_seg(uint64_t seg_size) {
    E = il_engine_open(NULL, NULL);
    char *err = NULL;
    E->store = kg_store_open(E, DIR_, seg_size, false, &err);
    cr_assert_not_null(E->store, "%s", err ? err : "?");
    S = il_session_open(E);
}

static void open_engine(void) {
    open_engine_seg(0);
}

static void close_engine(void) {
    il_engine_close(E);
    E = NULL;
}

static void run(const char *text) {
    unit_run(S, text);
}

static void answer(const char *q, il_buf *out) {
    unit_answer(S, q, out);
}

static char *answers(const char *const *qs, size_t n) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < n; i++) answer(qs[i], &b);
    return il_buf_take(&b);
}

static char *path(const char *sub) {
    static char p[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", DIR_, sub);
    return p[k];
}

/* Names in a subdirectory that start with prefix and end with suffix. */
static int count_files(const char *sub, const char *prefix, const char *suffix) {
    DIR *d = opendir(path(sub));
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name), sl = strlen(suffix);
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && l >= sl &&
            strcmp(de->d_name + l - sl, suffix) == 0)
            n++;
    }
    closedir(d);
    return n;
}

static void rm_files(const char *sub, const char *glob) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -f %s/%s", path(sub), glob);
    cr_assert_eq(system(cmd), 0);
}

static int saved_err = -1;
static void quiet_stderr(const char *file) {
    fflush(stderr);
    saved_err = dup(2);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
}
static void restore_stderr(void) {
    fflush(stderr);
    dup2(saved_err, 2);
    close(saved_err);
}
static bool file_has(const char *file, const char *needle) {
    FILE *f = fopen(file, "r");
    char buf[4096] = {0};
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* ---- every kind of state through a checkpoint alone ---- */

static const char *STATE_SCRIPT[] = {
    "+edge[(1, 2), (2, 3), (3, 4), (4, 5)]",
    "+reach(X, Y) <- edge(X, Y)",
    "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
    "+two(X) <- edge(X, _)",
    "+two(X) <- edge(_, X)",
    ".rule remove two 1",
    "+cnt(X, count<Y>) <- edge(X, Y)",
    "+neg(X) <- edge(X, _), !edge(_, X)",
    "+person(name: string, age: int)",
    "+person[(\"ann\", 30), (\"bob\", 41), (\"名前\", 7)]",
    "+vals(1.5, \"s\", true, [1.0, -2.5], 99999999999999)",
    "+vals(-0.0, \"\", false, [0.5], -3)",
    "+vals(1e300, \"a\\\"q\", true, [], -9223372036854775807)",
    "+src[(1, [0.5, -1.0, 0.25])]",
    "-src(X, V), +tv(X, T, Q) <- src(X, V), T = time_now(), Q = quantize_linear(V)",
    "+tmp[(1), (2)]",
    ".clear prefix tm",
    "+gone(1)",
    ".rel drop gone",
    "+declared(a: int, b: float)",
    "-edge(4, 5)",
    ".kg create other",
    ".kg use other",
    "+o[(\"x\"), (\"y\")]",
    "+r2(X) <- o(X)",
    ".rule clear r2",
    "+o3(X) <- o(X)",
    ".kg create third",
    ".kg use third",
    "+w[(1, 2, 3), (4, 5, 6)]",
    ".kg use default",
};

static const char *STATE_QUERIES[] = {
    ".kg use default",
    "?edge(X, Y)",
    "?reach(X, Y)",
    "?two(X)",
    "?cnt(X, N)",
    "?neg(X)",
    "?person(N, A)",
    "?vals(A, B, C, D, E)",
    "?tv(X, T, Q)",
    "?src(X, V)",
    "?tmp(X)",
    ".rel",
    ".rule",
    ".rule def reach",
    ".rule def two",
    ".kg list",
    ".kg use other",
    "?o(X)",
    "?o3(X)",
    ".rule",
    ".rel",
    ".kg use third",
    "?w(A, B, C)",
    ".rel",
    ".kg use default",
};

Test(ckpt, every_kind_of_state_survives_a_checkpoint_alone) {
    open_engine();
    for (size_t i = 0; i < sizeof STATE_SCRIPT / sizeof *STATE_SCRIPT; i++) run(STATE_SCRIPT[i]);
    size_t nq = sizeof STATE_QUERIES / sizeof *STATE_QUERIES;
    char *before = answers(STATE_QUERIES, nq);
    run(".compact");
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 1);
    close_engine();
    /* without the log the checkpoint is all there is */
    rm_files("wal", "wal-*.log");
    open_engine();
    char *after = answers(STATE_QUERIES, nq);
    cr_assert_str_eq(after, before);
    /* and writing on after it: the log continues after the checkpoint's position */
    run("+edge(9, 10)");
    close_engine();
    open_engine();
    il_buf b;
    il_buf_init(&b);
    answer("?edge(9, Y)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?edge(9, Y) -> (9, 10)\n");
    il_buf_free(&b);
    close_engine();
    free(before);
    free(after);
}

Test(ckpt, many_relations_and_graphs) {
    open_engine();
    char stmt[128];
    for (int g = 0; g < 5; g++) {
        snprintf(stmt, sizeof stmt, ".kg create g%d", g);
        run(stmt);
        snprintf(stmt, sizeof stmt, ".kg use g%d", g);
        run(stmt);
        for (int r = 0; r < 40; r++) {
            snprintf(stmt, sizeof stmt, "+rel%d[(%d, \"v%d\"), (%d, %d.5)]", r, g, r, r, g);
            run(stmt);
        }
    }
    const char *qs[] = {".kg use default", ".kg list",   ".kg use g3",  ".rel",
                        "?rel17(A, B)",    ".kg use g0", "?rel39(A, B)"};
    char *before = answers(qs, 7);
    run(".compact");
    close_engine();
    rm_files("wal", "wal-*.log");
    open_engine();
    char *after = answers(qs, 7);
    cr_assert_str_eq(after, before);
    close_engine();
    free(before);
    free(after);
}

/* ---- deletes ---- */

Test(ckpt, deletes_before_a_checkpoint_stay_deleted) {
    open_engine();
    run("+f[(1), (2), (3)]");
    run("-f(2)");
    run("+g[(1), (2)]");
    run(".rel drop g");
    run("+h(1)");
    run(".clear prefix h");
    run("+r(X) <- f(X)");
    run(".rule drop r");
    run(".compact");
    run("+f(4)");
    run("-f(3)");
    close_engine();
    open_engine();
    const char *qs[] = {"?f(X)", "?g(X)", "?h(X)", ".rule"};
    char *got = answers(qs, 4);
    close_engine();
    /* the same statements in an engine without a data directory */
    E = il_engine_open(NULL, NULL);
    S = il_session_open(E);
    const char *script[] = {
        "+f[(1), (2), (3)]", "-f(2)",         "+g[(1), (2)]", ".rel drop g", "+h(1)",
        ".clear prefix h",   "+r(X) <- f(X)", ".rule drop r", "+f(4)",       "-f(3)"};
    for (size_t i = 0; i < 10; i++) run(script[i]);
    char *want = answers(qs, 4);
    close_engine();
    cr_assert_str_eq(got, want);
    cr_assert(strstr(got, "?f(X) -> (1) (4)\n") != NULL, "%s", got);
    free(got);
    free(want);
}

/* ---- the previous checkpoint as the fallback ---- */

static void three_phases(void) {
    run("+a[(1), (2)]");
    run("+ra(X) <- a(X)");
    run(".compact");
    run("+a(3)");
    run("-a(1)");
    run(".compact");
    run("+a(4)");
}

static const char *A_QUERIES[] = {"?a(X)", "?ra(X)", ".rule"};

Test(ckpt, newest_checkpoint_deleted_recovers_from_the_previous) {
    open_engine();
    three_phases();
    char *before = answers(A_QUERIES, 3);
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 2);
    close_engine();
    /* the newest is the last in name order */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd %s && rm -f $(ls ckpt-*.ckpt | tail -1)", path("ckpt"));
    cr_assert_eq(system(cmd), 0);
    open_engine();
    char *after = answers(A_QUERIES, 3);
    cr_assert_str_eq(after, before);
    close_engine();
    free(before);
    free(after);
}

Test(ckpt, damaged_checkpoint_falls_back_with_a_warning) {
    open_engine();
    three_phases();
    char *before = answers(A_QUERIES, 3);
    close_engine();
    char cmd[256], newest[200];
    snprintf(cmd, sizeof cmd, "ls %s/ckpt-*.ckpt | tail -1", path("ckpt"));
    FILE *p = popen(cmd, "r");
    cr_assert(fgets(newest, sizeof newest, p) != NULL);
    pclose(p);
    newest[strcspn(newest, "\n")] = 0;
    int fd = open(newest, O_RDWR);
    struct stat sb;
    fstat(fd, &sb);
    unsigned char c;
    off_t at = sb.st_size - 3; /* in the compressed body */
    cr_assert_eq(pread(fd, &c, 1, at), 1);
    c ^= 0x10;
    cr_assert_eq(pwrite(fd, &c, 1, at), 1);
    close(fd);
    const char *log = path("stderr.txt");
    quiet_stderr(log);
    open_engine();
    restore_stderr();
    cr_assert(file_has(log, "checksum mismatch"), "no warning");
    cr_assert(file_has(log, "falling back"), "no warning");
    char *after = answers(A_QUERIES, 3);
    cr_assert_str_eq(after, before);
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt.bad"), 1);
    /* a later checkpoint still keeps the previous one as its fallback */
    run("+a(5)");
    run(".compact");
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 2);
    close_engine();
    free(before);
    free(after);
}

/* ---- what a checkpoint deletes ---- */

/* The first lsns of the log segments on disk, ascending. */
static int segments(uint64_t *first, int cap) {
    DIR *d = opendir(path("wal"));
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        uint64_t v;
        if (strlen(de->d_name) == 24 && sscanf(de->d_name, "wal-%16" SCNx64 ".log", &v) == 1 &&
            n < cap)
            first[n++] = v;
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && first[j - 1] > first[j]; j--) {
            uint64_t t = first[j];
            first[j] = first[j - 1];
            first[j - 1] = t;
        }
    return n;
}

static void write_many(int from, int n) {
    char stmt[64];
    for (int i = from; i < from + n; i++) {
        snprintf(stmt, sizeof stmt, "+n(%d, \"padding padding padding\")", i);
        run(stmt);
    }
}

Test(ckpt, deletes_only_the_log_the_previous_checkpoint_covers) {
    open_engine_seg(256); /* a few records per segment */
    write_many(0, 40);
    run(".compact");
    uint64_t first_ckpt = store_checkpoint_lsn(E->store, true);
    uint64_t segs[256];
    int before = segments(segs, 256);
    cr_assert_gt(before, 5);
    write_many(40, 40);
    run(".compact");
    /* nothing of the log after the first checkpoint is gone */
    int n = segments(segs, 256);
    cr_assert_gt(n, 1);
    cr_assert_leq(segs[0], first_ckpt + 1, "the log after the previous checkpoint was deleted");
    /* and nothing wholly before it is left */
    cr_assert_gt(segs[1], first_ckpt + 1, "the log before the previous checkpoint was kept");
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 2);
    uint64_t second_ckpt = store_checkpoint_lsn(E->store, true);
    write_many(80, 10);
    run(".compact");
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 2); /* the oldest went */
    n = segments(segs, 256);
    cr_assert_leq(segs[0], second_ckpt + 1);
    cr_assert_gt(segs[1], second_ckpt + 1);
    close_engine();
    /* losing the newest still recovers everything */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd %s && rm -f $(ls ckpt-*.ckpt | tail -1)", path("ckpt"));
    cr_assert_eq(system(cmd), 0);
    open_engine_seg(256);
    il_buf b;
    il_buf_init(&b);
    answer("?n(89, P)", &b);
    answer("?n(0, P)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?n(89, P) -> (89, \"padding padding padding\")\n"
                                     "?n(0, P) -> (0, \"padding padding padding\")\n");
    il_buf_free(&b);
    close_engine();
}

/* Flips a byte in the compressed body of every checkpoint. */
static void damage_checkpoints(void) {
    DIR *d = opendir(path("ckpt"));
    for (struct dirent *de; (de = readdir(d));) {
        size_t l = strlen(de->d_name);
        if (l < 5 || strcmp(de->d_name + l - 5, ".ckpt") != 0) continue;
        char file[300];
        snprintf(file, sizeof file, "%s/%s", path("ckpt"), de->d_name);
        int fd = open(file, O_RDWR);
        struct stat sb;
        fstat(fd, &sb);
        unsigned char c;
        cr_assert_eq(pread(fd, &c, 1, sb.st_size - 3), 1);
        c ^= 0x10;
        cr_assert_eq(pwrite(fd, &c, 1, sb.st_size - 3), 1);
        close(fd);
    }
    closedir(d);
}

static char *listing(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cd %s && ls -R -I stderr.txt", DIR_);
    FILE *p = popen(cmd, "r");
    il_buf b;
    il_buf_init(&b);
    char line[512];
    while (fgets(line, sizeof line, p)) il_buf_put(&b, line, strlen(line));
    pclose(p);
    return il_buf_take(&b);
}

/* With both checkpoints damaged and the log before the older one deleted, the last
 * acknowledged commit cannot be reached: the open is refused, naming the files and the
 * way out, and nothing changes; salvage starts empty with every file moved aside. */
Test(ckpt, both_checkpoints_damaged_refuse_then_salvage) {
    open_engine_seg(256);
    write_many(0, 40);
    run(".compact");
    write_many(40, 40);
    run(".compact");
    write_many(80, 10);
    run(".compact");
    write_many(90, 5);
    close_engine();
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 2);
    damage_checkpoints();
    char *before = listing();
    il_engine *e = il_engine_open(NULL, NULL);
    char *err = NULL;
    quiet_stderr(path("stderr.txt"));
    store *st = kg_store_open(e, DIR_, 256, false, &err);
    restore_stderr();
    il_engine_close(e);
    cr_assert_null(st);
    cr_assert_not_null(err);
    cr_assert(strstr(err, "cannot recover") && strstr(err, "--recover=salvage") &&
                  strstr(err, "Nothing was changed") && strstr(err, "checksum mismatch") &&
                  strstr(err, "records in between are missing"),
              "%s", err);
    /* both checkpoint files are named */
    char names[2][300];
    int k = 0;
    DIR *d = opendir(path("ckpt"));
    for (struct dirent *de; (de = readdir(d));)
        if (de->d_name[0] != '.' && k < 2) snprintf(names[k++], sizeof names[0], "%s", de->d_name);
    closedir(d);
    cr_assert_eq(k, 2);
    cr_assert(strstr(err, names[0]) && strstr(err, names[1]), "%s", err);
    free(err);
    char *after = listing();
    cr_assert_str_eq(after, before, "the data directory was changed:\n%s\n%s", before, after);
    free(after);
    free(before);
    /* the engine API refuses too; salvage starts from what is readable: nothing here */
    cr_assert_null(il_engine_open(DIR_, &err));
    free(err);
    quiet_stderr(path("stderr.txt"));
    E = il_engine_open_recover(DIR_, IL_RECOVER_SALVAGE, &err);
    restore_stderr();
    cr_assert_not_null(E, "%s", err);
    S = il_session_open(E);
    cr_assert(file_has(path("stderr.txt"), "salvaging"));
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt.bad"), 2);
    cr_assert_gt(count_files("wal", "wal-", ".log.cut"), 0);
    /* the numbering goes on after every record set aside, bridged by a checkpoint of the
       (empty) recovered state */
    uint64_t segs[8];
    cr_assert_eq(segments(segs, 8), 1);
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 1);
    cr_assert_eq(store_checkpoint_lsn(E->store, true), segs[0] - 1);
    cr_assert_geq(segs[0], 96, "lsn %" PRIu64 " is not after the 95 records", segs[0]);
    il_buf b;
    il_buf_init(&b);
    answer("?n(0, P)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?n(0, P) ->\n");
    il_buf_free(&b);
    run("+n(1000, \"after\")");
    close_engine();
    /* and from then on it opens as usual */
    open_engine_seg(256);
    il_buf_init(&b);
    answer("?n(1000, P)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?n(1000, P) -> (1000, \"after\")\n");
    il_buf_free(&b);
    close_engine();
}

/* Damaged checkpoints lose nothing while the log still holds everything since the first
 * record: the open goes on from the log alone. */
Test(ckpt, damaged_checkpoints_with_the_whole_log_recover_everything) {
    open_engine();
    write_many(0, 10);
    run(".compact");
    write_many(10, 10);
    close_engine();
    damage_checkpoints();
    quiet_stderr(path("stderr.txt"));
    open_engine();
    restore_stderr();
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt.bad"), 1);
    il_buf b;
    il_buf_init(&b);
    answer("?n(0, P)", &b);
    answer("?n(19, P)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?n(0, P) -> (0, \"padding padding padding\")\n"
                                     "?n(19, P) -> (19, \"padding padding padding\")\n");
    il_buf_free(&b);
    close_engine();
}

static unsigned mode_of(const char *file) {
    struct stat sb;
    cr_assert_eq(stat(file, &sb), 0, "%s", file);
    return (unsigned)(sb.st_mode & 0777);
}

/* Every file of a data directory is created 0600 and every directory 0700, whatever the
 * umask and an existing directory's mode; an existing directory open to others is
 * warned about. */
Test(ckpt, data_directory_files_are_private) {
    mode_t old = umask(0);
    cr_assert_eq(mkdir(path("data"), 0755), 0); /* an operator's directory, wider */
    char data[200];
    snprintf(data, sizeof data, "%s", path("data"));
    quiet_stderr(path("stderr.txt"));
    il_engine *e = il_engine_open(data, NULL);
    restore_stderr();
    cr_assert_not_null(e);
    cr_assert(file_has(path("stderr.txt"), "has mode 0755"), "no warning");
    il_session *s = il_session_open(e);
    unit_run(s, "+a(1)");
    unit_run(s, ".compact");
    unit_run(s, "+a(2)");
    il_session_close(s);
    il_engine_close(e);
    umask(old);
    char p[300];
    snprintf(p, sizeof p, "%s/wal", data);
    cr_assert_eq(mode_of(p), 0700);
    snprintf(p, sizeof p, "%s/ckpt", data);
    cr_assert_eq(mode_of(p), 0700);
    snprintf(p, sizeof p, "%s/wal/LOCK", data);
    cr_assert_eq(mode_of(p), 0600);
    snprintf(p, sizeof p, "%s/wal/wal-0000000000000001.log", data);
    cr_assert_eq(mode_of(p), 0600);
    snprintf(p, sizeof p, "%s/ckpt/ckpt-0000000000000001.ckpt", data);
    cr_assert_eq(mode_of(p), 0600);
    /* a directory the engine creates is 0700 */
    snprintf(p, sizeof p, "%s/fresh", DIR_);
    umask(0);
    e = il_engine_open(p, NULL);
    umask(old);
    cr_assert_not_null(e);
    il_engine_close(e);
    cr_assert_eq(mode_of(p), 0700);
}

Test(ckpt, compact_without_changes_writes_nothing) {
    open_engine();
    run("+a(1)");
    run(".compact");
    run(".compact");
    run("?a(X)");
    run(".compact");
    cr_assert_eq(count_files("ckpt", "ckpt-", ".ckpt"), 1);
    close_engine();
}

/* ---- the size trigger ---- */

Test(ckpt, log_growth_starts_a_background_checkpoint) {
    open_engine();
    cr_assert(il_engine_set_checkpoint_bytes(E, 2000));
    write_many(0, 10);
    cr_assert_eq(store_checkpoint_lsn(E->store, true), 0, "checkpointed too early");
    write_many(10, 100);
    uint64_t at = store_checkpoint_lsn(E->store, true);
    cr_assert_gt(at, 0, "no checkpoint after the log grew");
    close_engine();
    rm_files("wal", "wal-*.log"); /* what the log after it held is lost, the rest is there */
    open_engine();
    char q[64];
    snprintf(q, sizeof q, "?n(%d, P)", (int)at - 1);
    il_buf b;
    il_buf_init(&b);
    answer(q, &b);
    cr_assert(strstr(il_buf_str(&b), "padding") != NULL, "%s", il_buf_str(&b));
    il_buf_free(&b);
    close_engine();
    il_engine *mem = il_engine_open(NULL, NULL);
    cr_assert(!il_engine_set_checkpoint_bytes(mem, 1));
    il_engine_close(mem);
}

/* The log written before a restart counts toward the next checkpoint: a server restarted
 * more often than it writes the threshold still takes them. */
Test(ckpt, log_growth_counts_across_restarts) {
    for (int round = 0; round < 3; round++) {
        open_engine();
        cr_assert(il_engine_set_checkpoint_bytes(E, 2000));
        write_many(round * 15, 15); /* under the threshold each time, over it in all */
        store_checkpoint_lsn(E->store, true);
        close_engine();
    }
    open_engine();
    cr_assert_gt(store_checkpoint_lsn(E->store, false), 0, "the earlier log did not count");
    close_engine();
}

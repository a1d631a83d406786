/* Unit tests of durability (src/store): value encoding round trips, the log's torn-tail
 * and corruption cuts, syncs from another thread while records are appended (group
 * commit), and restarts of an engine on the same data directory giving the
 * same answers (deleted facts stay deleted, repeated inserts and missing deletes log
 * nothing). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputlayer.h"
#include "unit_fixture.h"
#include "store/store_codec.h"
#include "store/store_crc.h"
#include "store/wal.h"
#include "value/value.h"

static char DIR_[64];

static void mkdir_tmp(void) {
    unit_mkdtemp(DIR_, sizeof DIR_, "store");
}

static void teardown(void) {
    unit_rm_tree(DIR_);
    val_shutdown();
}

TestSuite(store, .init = mkdir_tmp, .fini = teardown);

/* ---- encoding ---- */

static void roundtrip(val_t v) {
    il_buf b;
    il_buf_init(&b);
    codec_put_val(&b, v);
    codec_put_u8(&b, 0x5a); /* a sentinel: the decoder must stop exactly at the value's end */
    codec_reader r;
    codec_reader_init(&r, b.data, b.len);
    val_t w = codec_get_val(&r);
    cr_assert(r.ok);
    cr_assert_eq(w, v, "value %llx came back as %llx", (unsigned long long)v,
                 (unsigned long long)w);
    cr_assert_eq(codec_get_u8(&r), 0x5a);
    cr_assert(codec_at_end(&r));
    /* every proper prefix fails cleanly */
    for (size_t n = 0; n + 1 < b.len; n++) {
        codec_reader_init(&r, b.data, n);
        (void)codec_get_val(&r);
        cr_assert(!r.ok || n > 0, "prefix %zu decoded", n);
    }
    il_buf_free(&b);
}

Test(store, crc32c_known_value) {
    /* the standard check value of CRC32C */
    cr_assert_eq(store_crc32c(0, "123456789", 9), 0xE3069283u);
    uint32_t c = store_crc32c(0, "1234", 4);
    cr_assert_eq(store_crc32c(c, "56789", 5), 0xE3069283u);
    cr_assert_eq(store_crc32c_portable(0, "123456789", 9), 0xE3069283u);
}

Test(store, crc32c_instruction_and_tables_agree) {
    /* Every length to 80 at every alignment to 8, chained from a running checksum, and a
       long buffer: the instruction's path (where the processor has it) against the
       tables. */
    unsigned char buf[4200];
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    uint32_t running = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t len = 0; len <= 80; len++) {
            uint32_t a = store_crc32c(running, buf + off, len);
            uint32_t b = store_crc32c_portable(running, buf + off, len);
            cr_assert_eq(a, b, "offset %zu length %zu: %08x against the tables' %08x", off, len, a,
                         b);
            running = a;
        }
    cr_assert_eq(store_crc32c(7, buf + 3, 4096), store_crc32c_portable(7, buf + 3, 4096));
#if defined(__x86_64__)
    __builtin_cpu_init();
    cr_assert_eq(store_crc32c_hardware(), (bool)__builtin_cpu_supports("sse4.2"));
#endif
}

Test(store, value_roundtrips) {
    roundtrip(val_null());
    roundtrip(val_bool(true));
    roundtrip(val_bool(false));
    int64_t ints[] = {
        0,         1,        -1, 127, -128, 1 << 20, INT64_C(1) << 47, -(INT64_C(1) << 47) - 1,
        INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        roundtrip(val_int(ints[i]));
        roundtrip(val_ts(ints[i]));
    }
    double fl[] = {
        0.0, -0.0, 1.5, -2.25e300, 1e-310, __builtin_inf(), -__builtin_inf(), __builtin_nan("")};
    for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) roundtrip(val_float(fl[i]));
    roundtrip(val_str("", 0));
    roundtrip(val_str("héllo \"world\"", strlen("héllo \"world\"")));
    roundtrip(val_str("a\0b", 3));
    float f[] = {1.0f, -2.5f, 3.25e-5f};
    roundtrip(val_vec_f32(f, 3));
    roundtrip(val_vec_f32(f, 0));
    int8_t q[] = {-128, 0, 127, 5};
    roundtrip(val_vec_i8(q, 4));
    roundtrip(val_vec_i8(q, 0));
}

Test(store, varints) {
    uint64_t u[] = {0, 1, 127, 128, 300, UINT32_MAX, UINT64_MAX};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        il_buf b;
        il_buf_init(&b);
        codec_put_uvar(&b, u[i]);
        codec_put_svar(&b, -(int64_t)(u[i] >> 1));
        codec_reader r;
        codec_reader_init(&r, b.data, b.len);
        cr_assert_eq(codec_get_uvar(&r), u[i]);
        cr_assert_eq(codec_get_svar(&r), -(int64_t)(u[i] >> 1));
        cr_assert(r.ok && codec_at_end(&r));
        il_buf_free(&b);
    }
}

/* ---- the log ---- */

typedef struct seen {
    int n;
    char payload[64][32];
} seen;

static bool collect(void *ctx, uint64_t lsn, const void *p, size_t len) {
    seen *s = ctx;
    cr_assert_eq(lsn, (uint64_t)s->n + 1);
    cr_assert(len < 32 && s->n < 64);
    memcpy(s->payload[s->n], p, len);
    s->payload[s->n][len] = 0;
    s->n++;
    return true;
}

static char *path(const char *sub) {
    static char p[4][160];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", DIR_, sub);
    return p[k];
}

/* Writes n records "record-<i>" into DIR/wal; returns the byte offset of each record. */
static void write_log(const char *dir, int n, size_t *offsets) {
    seen s = {0};
    wal *w = wal_open(dir, 1 << 16, collect, &s, NULL);
    cr_assert_not_null(w);
    size_t off = WAL_SEGMENT_HEADER;
    for (int i = 0; i < n; i++) {
        char p[32];
        int len = snprintf(p, sizeof p, "record-%d", i);
        if (offsets) offsets[i] = off;
        cr_assert(wal_append(w, p, (size_t)len, NULL));
        off += WAL_RECORD_HEADER + (size_t)len;
    }
    if (offsets) offsets[n] = off;
    wal_close(w);
}

static int reopen_count(const char *dir) {
    seen s = {0};
    wal *w = wal_open(dir, 1 << 16, collect, &s, NULL);
    cr_assert_not_null(w);
    for (int i = 0; i < s.n; i++) {
        char want[32];
        snprintf(want, sizeof want, "record-%d", i);
        cr_assert_str_eq(s.payload[i], want);
    }
    wal_close(w);
    return s.n;
}

static void copy_file(const char *from, const char *to, size_t len) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert(in >= 0 && out >= 0);
    char *buf = calloc(1, len + 1);
    cr_assert_eq(pread(in, buf, len, 0), (ssize_t)len);
    cr_assert_eq(write(out, buf, len), (ssize_t)len);
    free(buf);
    close(in);
    close(out);
}

/* stderr to a file while a block runs, to see the warnings */
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
    char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

Test(store, torn_tail_at_every_byte) {
    enum { N = 6 };
    size_t off[N + 1];
    write_log(path("src"), N, off);
    const char *seg = "wal-0000000000000001.log";
    char src[200];
    snprintf(src, sizeof src, "%s/%s", path("src"), seg);
    for (size_t cut = off[N - 1]; cut < off[N]; cut++) {
        char dir[200], dst[260];
        snprintf(dir, sizeof dir, "%s/cut%zu", DIR_, cut);
        mkdir(dir, 0755);
        snprintf(dst, sizeof dst, "%s/%s", dir, seg);
        copy_file(src, dst, cut); /* as if the last write stopped after `cut` bytes */
        quiet_stderr(path("err.txt"));
        int n = reopen_count(dir);
        restore_stderr();
        cr_assert_eq(n, N - 1, "cut at %zu recovered %d", cut, n);
        /* the log goes on after the cut: a new record follows the recovered ones */
        seen s = {0};
        wal *w = wal_open(dir, 1 << 16, collect, &s, NULL);
        char p[32];
        int len = snprintf(p, sizeof p, "record-%d", N - 1);
        cr_assert(wal_append(w, p, (size_t)len, NULL));
        wal_close(w);
        cr_assert_eq(reopen_count(dir), N);
    }
}

static void flip_byte(const char *file, size_t at) {
    int fd = open(file, O_RDWR);
    unsigned char c;
    cr_assert_eq(pread(fd, &c, 1, (off_t)at), 1);
    c ^= 0x10;
    cr_assert_eq(pwrite(fd, &c, 1, (off_t)at), 1);
    close(fd);
}

static char *slurp(const char *file, size_t *len) {
    FILE *f = fopen(file, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len + 1);
    cr_assert_eq(fread(buf, 1, *len, f), *len);
    fclose(f);
    return buf;
}

static int count_in_dir(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static bool count_any(void *ctx, uint64_t lsn, const void *p, size_t len);

static uint64_t start_at_8(void *ctx) {
    (void)ctx;
    return 8;
}

/* A flipped byte in a record that later records say was synced is damage to an
 * acknowledged record: the log refuses to open and changes nothing; salvage cuts there
 * and keeps the dropped bytes aside. */
Test(store, corrupt_synced_record_refuses_then_salvage_cuts) {
    enum { N = 8 };
    size_t off[N + 1];
    write_log(path("wal"), N, off); /* immediate mode: every record synced */
    char seg[200];
    snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", path("wal"));
    flip_byte(seg, off[4] + WAL_RECORD_HEADER + 2); /* inside record 4's payload (lsn 5) */
    size_t len0, len1;
    char *before = slurp(seg, &len0);
    int files = count_in_dir(path("wal"));
    seen s = {0};
    char *err = NULL;
    quiet_stderr(path("err.txt"));
    wal *w = wal_open(path("wal"), 1 << 16, collect, &s, &err);
    restore_stderr();
    cr_assert_null(w);
    cr_assert_not_null(err);
    cr_assert(strstr(err, "checksum mismatch") && strstr(err, "lsn 5") &&
                  strstr(err, "synced up to lsn 7") && strstr(err, "wal-0000000000000001.log"),
              "%s", err);
    free(err);
    char *after = slurp(seg, &len1);
    cr_assert(len0 == len1 && memcmp(before, after, len0) == 0, "the segment was changed");
    cr_assert_eq(count_in_dir(path("wal")), files, "files were added or removed");
    free(before);
    free(after);
    /* the refusal is stable: the same again */
    wal_recovery rec = {.salvage = false};
    seen s2 = {0};
    quiet_stderr(path("err.txt"));
    cr_assert_null(wal_open_after(path("wal"), 1 << 16, &rec, NULL, collect, &s2, NULL));
    restore_stderr();
    cr_assert(rec.refused);
    /* salvage: the four records before the damage, the rest kept aside; the numbering
       goes on after the last record set aside (lsn 8), in a new segment, so that no lsn
       (a revision a client may have seen) is given twice */
    rec = (wal_recovery){.salvage = true};
    seen t = {0};
    quiet_stderr(path("err.txt"));
    w = wal_open_after(path("wal"), 1 << 16, &rec, NULL, collect, &t, NULL);
    restore_stderr();
    cr_assert_not_null(w);
    cr_assert(!rec.refused);
    cr_assert_eq(t.n, 4);
    cr_assert_eq(wal_next_lsn(w), 9);
    cr_assert_eq(wal_salvaged_to(w), 8);
    cr_assert(wal_append(w, "after", 5, NULL));
    wal_close(w);
    cr_assert(file_has(path("err.txt"), "salvaging"));
    cr_assert(file_has(path("err.txt"), "checksum mismatch"));
    char side[260];
    snprintf(side, sizeof side, "%s.cut-%zu", seg, off[4]);
    cr_assert_eq(access(side, F_OK), 0);
    snprintf(side, sizeof side, "%s/wal-0000000000000009.log", path("wal"));
    cr_assert_eq(access(side, F_OK), 0, "no new segment after the records set aside");
    /* a second open after the checkpoint the store writes then (at lsn 8) is clean, in
       the default mode, and finds the record appended after the salvage */
    int n = 0;
    quiet_stderr(path("err2.txt"));
    w = wal_open_after(path("wal"), 1 << 16, NULL, start_at_8, count_any, &n, NULL);
    restore_stderr();
    cr_assert_not_null(w);
    cr_assert_eq(n, 1);
    cr_assert_eq(wal_next_lsn(w), 10);
    cr_assert_eq(wal_salvaged_to(w), 0);
    wal_close(w);
    cr_assert(!file_has(path("err2.txt"), "warning"));
}

/* Records written after the last completed sync may reach the disk in any order after a
 * power loss: a bad one followed by whole ones is a torn tail when none of those says a
 * sync covered it. The log is cut there and opens. */
Test(store, damage_after_the_last_sync_is_a_torn_tail) {
    enum { N = 8, SYNCED = 3 };
    size_t off[N + 1];
    seen s = {0};
    wal *w = wal_open(path("wal"), 1 << 16, collect, &s, NULL);
    size_t at = WAL_SEGMENT_HEADER;
    for (int i = 0; i < N; i++) {
        if (i == SYNCED) wal_set_mode(w, WAL_SYNC_ASYNC, 0); /* the rest is never synced */
        char p[32];
        int len = snprintf(p, sizeof p, "record-%d", i);
        off[i] = at;
        cr_assert(wal_append(w, p, (size_t)len, NULL));
        at += WAL_RECORD_HEADER + (size_t)len;
    }
    off[N] = at;
    wal_close(w);
    char seg[200];
    snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", path("wal"));
    flip_byte(seg, off[SYNCED + 1] + 3); /* the header of the second unsynced record */
    quiet_stderr(path("err.txt"));
    int n = reopen_count(path("wal"));
    restore_stderr();
    cr_assert_eq(n, SYNCED + 1);
    cr_assert(file_has(path("err.txt"), "the log is cut there"));
    cr_assert(!file_has(path("err.txt"), "salvaging"));
    /* and damage to a synced record in the same log is refused */
    enum { M = 4 };
    write_log(path("wal2"), M, off);
    snprintf(seg, sizeof seg, "%s/wal-0000000000000001.log", path("wal2"));
    flip_byte(seg, off[M - 2] + 1); /* the length of the third of four synced records */
    seen t = {0};
    char *err = NULL;
    quiet_stderr(path("err.txt"));
    cr_assert_null(wal_open(path("wal2"), 1 << 16, collect, &t, &err));
    restore_stderr();
    cr_assert(strstr(err, "lsn 3"), "%s", err);
    free(err);
}

Test(store, segments_rotate_and_recover) {
    seen s = {0};
    wal *w = wal_open(path("wal"), 256, collect, &s, NULL); /* a few records per segment */
    for (int i = 0; i < 40; i++) {
        char p[32];
        int len = snprintf(p, sizeof p, "record-%d", i);
        cr_assert(wal_append(w, p, (size_t)len, NULL));
    }
    wal_close(w);
    seen t = {0};
    w = wal_open(path("wal"), 256, collect, &t, NULL);
    cr_assert_eq(t.n, 40);
    cr_assert_eq(wal_next_lsn(w), 41);
    wal_close(w);
}

Test(store, second_open_is_refused) {
    seen s = {0};
    wal *w = wal_open(path("wal"), 0, collect, &s, NULL);
    cr_assert_not_null(w);
    char *err = NULL;
    cr_assert_null(wal_open(path("wal"), 0, collect, &s, &err));
    cr_assert_not_null(err);
    free(err);
    wal_close(w);
}

/* ---- restarts of the engine ---- */

static il_engine *E;
static il_session *S;

static void open_engine(void) {
    char *err = NULL;
    E = il_engine_open(DIR_, &err);
    cr_assert_not_null(E, "%s", err ? err : "?");
    S = il_session_open(E);
}

static void close_engine(void) {
    il_engine_close(E);
    E = NULL;
}

/* The result as text: lines, or rows with cells joined by ", ". */
static void answer(const char *q, il_buf *out) {
    unit_answer(S, q, out);
}

static void run(const char *text) {
    unit_run(S, text);
}

static const char *QUERIES[] = {
    ".kg use default", "?edge(X, Y)",          "?reach(X, Y)",
    "?person(N, A)",   "?vals(A, B, C, D, E)", ".rel",
    ".rule",           ".rule def reach",      ".rule def two",
    ".kg list",        ".kg use other",        "?o(X)",
    ".rule",           ".kg use default",
};

static char *all_answers(void) {
    il_buf b;
    il_buf_init(&b);
    for (size_t i = 0; i < sizeof QUERIES / sizeof *QUERIES; i++) answer(QUERIES[i], &b);
    return il_buf_take(&b);
}

Test(store, restart_reproduces_answers) {
    open_engine();
    const char *script[] = {
        "+edge[(1, 2), (2, 3), (3, 4), (4, 5)]",
        "+reach(X, Y) <- edge(X, Y)",
        "+reach(X, Z) <- reach(X, Y), edge(Y, Z)",
        "+two(X) <- edge(X, _)",
        "+two(X) <- edge(_, X)",
        ".rule remove two 1",
        "+person(name: string, age: int)",
        "+person[(\"ann\", 30), (\"bob\", 41)]",
        "+vals(1.5, \"s\", true, [1.0, -2.5], 99999999999999)",
        "+vals(-0.0, \"\", false, [0.5], -3)",
        "+tmp[(1), (2)]",
        ".clear prefix tm",
        "+gone(1)",
        ".rel drop gone",
        "-edge(4, 5)",
        "-edge(X, Y) <- edge(X, Y), X = 3",
        "-person(N, A), +person(N, B) <- person(N, A), N = \"bob\", B = A + 1",
        ".kg create other",
        "+o[(\"x\"), (\"y\")]",
        "+r2(X) <- o(X)",
        ".rule clear r2",
        ".kg use default",
        ".kg create scratch",
        "+s(1)",
        ".kg use default",
        ".kg drop scratch",
    };
    for (size_t i = 0; i < sizeof script / sizeof *script; i++) run(script[i]);
    char *before = all_answers();
    close_engine();
    open_engine();
    char *after = all_answers();
    cr_assert_str_eq(after, before);
    /* and once more, after the reopened engine wrote nothing */
    close_engine();
    open_engine();
    char *third = all_answers();
    cr_assert_str_eq(third, before);
    close_engine();
    free(before);
    free(after);
    free(third);
}

static bool count_any(void *ctx, uint64_t lsn, const void *p, size_t len) {
    (void)lsn, (void)p, (void)len;
    (*(int *)ctx)++;
    return true;
}

Test(store, deleted_fact_stays_deleted_and_no_ops_log_nothing) {
    open_engine();
    run("+f[(1), (2), (3)]");
    run("+f(2)"); /* already there: no record */
    run("-f(9)"); /* not there: no record */
    run("-f(2)");
    run("?f(X)"); /* queries log nothing */
    close_engine();
    int n = 0;
    wal *w = wal_open(path("wal"), 0, count_any, &n, NULL);
    cr_assert_not_null(w);
    wal_close(w);
    cr_assert_eq(n, 2, "%d records", n);
    open_engine();
    il_buf b;
    il_buf_init(&b);
    answer("?f(X)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?f(X) -> (1) (3)\n");
    il_buf_free(&b);
    close_engine();
}

Test(store, durability_modes) {
    open_engine();
    cr_assert(il_engine_set_durability(E, IL_DURABILITY_BATCHED, 5));
    run("+a(1)");
    cr_assert(il_engine_set_durability(E, IL_DURABILITY_ASYNC, 0));
    run("+a(2)");
    cr_assert(il_engine_sync(E, NULL));
    close_engine();
    open_engine();
    il_buf b;
    il_buf_init(&b);
    answer("?a(X)", &b);
    cr_assert_str_eq(il_buf_str(&b), "?a(X) -> (1) (2)\n");
    il_buf_free(&b);
    close_engine();
    il_engine *mem = il_engine_open(NULL, NULL);
    cr_assert(!il_engine_set_durability(mem, IL_DURABILITY_ASYNC, 0));
    cr_assert(il_engine_sync(mem, NULL));
    il_engine_close(mem);
}

Test(store, group_commit_leaves_the_sync_to_the_caller) {
    open_engine();
    cr_assert(il_engine_set_group_commit(E, true));
    uint64_t before = il_engine_log_written(E);
    cr_assert_eq(il_engine_log_durable(E), before);
    uint64_t syncs = il_engine_log_syncs(E);
    run("+a(1)");
    run("+a(2)");
    cr_assert_eq(il_engine_log_written(E), before + 2);
    cr_assert_eq(il_engine_log_durable(E), before, "the statements synced by themselves");
    cr_assert_eq(il_engine_log_syncs(E), syncs);
    cr_assert(il_engine_sync(E, NULL));
    cr_assert_eq(il_engine_log_durable(E), before + 2);
    cr_assert_eq(il_engine_log_syncs(E), syncs + 1, "one sync covers both records");
    cr_assert(il_engine_sync(E, NULL));
    cr_assert_eq(il_engine_log_syncs(E), syncs + 1, "nothing new: no sync");
    cr_assert(il_engine_set_group_commit(E, false));
    run("+a(3)");
    cr_assert_eq(il_engine_log_durable(E), before + 3, "immediate again");
    close_engine();
    il_engine *mem = il_engine_open(NULL, NULL);
    cr_assert(!il_engine_set_group_commit(mem, true));
    cr_assert_eq(il_engine_log_written(mem), 0);
    il_engine_close(mem);
}

typedef struct syncer_arg {
    wal *w;
    atomic_bool stop;
    uint64_t max_seen;
} syncer_arg;

static void *sync_loop(void *p) {
    syncer_arg *a = p;
    while (!atomic_load(&a->stop)) {
        cr_assert(wal_sync(a->w, NULL));
        uint64_t d = wal_durable_lsn(a->w);
        cr_assert(d >= a->max_seen && d <= wal_written_lsn(a->w));
        a->max_seen = d;
    }
    return NULL;
}

/* Records appended on one thread while another syncs (group commit), across segment
 * rotations: every record is durable after a last sync, in order, and comes back. */
Test(store, concurrent_sync_while_appending) {
    seen s = {0};
    wal *w = wal_open(path("wal"), 512, collect, &s, NULL);
    cr_assert_not_null(w);
    wal_set_deferred(w, true);
    syncer_arg a = {.w = w};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, sync_loop, &a), 0);
    for (int i = 0; i < 60; i++) {
        char p[32];
        int len = snprintf(p, sizeof p, "record-%d", i);
        cr_assert(wal_append(w, p, (size_t)len, NULL));
    }
    atomic_store(&a.stop, true);
    pthread_join(t, NULL);
    cr_assert(wal_sync(w, NULL));
    cr_assert_eq(wal_durable_lsn(w), 60);
    cr_assert_leq(wal_syncs(w), 60);
    wal_close(w);
    cr_assert_eq(reopen_count(path("wal")), 60);
}

/* ---- the power-loss hook and the segment size ---- */

static void read_synced(const char *file, char *line, size_t cap) {
    FILE *f = fopen(file, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(line, (int)cap, f));
    fclose(f);
}

Test(store, synced_length_file_follows_every_sync) {
    char *file = path("synced");
    setenv("INPUTLAYER_TEST_SYNCED_LENGTH_FILE", file, 1);
    seen s = {0};
    wal *w = wal_open(path("wal"), 256, collect, &s, NULL);
    unsetenv("INPUTLAYER_TEST_SYNCED_LENGTH_FILE"); /* read when the log opens */
    cr_assert_not_null(w);
    char line[128];
    read_synced(file, line, sizeof line); /* the new segment's header was synced */
    cr_assert_str_eq(line, "wal-0000000000000001.log 0000000000000016\n");
    cr_assert(wal_append(w, "record-0", 8, NULL)); /* immediate: synced before it returns */
    read_synced(file, line, sizeof line);
    cr_assert_str_eq(line, "wal-0000000000000001.log 0000000000000048\n");
    /* unsynced appends are not reported until a sync covers them */
    wal_set_mode(w, WAL_SYNC_ASYNC, 0);
    cr_assert(wal_append(w, "record-1", 8, NULL));
    read_synced(file, line, sizeof line);
    cr_assert_str_eq(line, "wal-0000000000000001.log 0000000000000048\n");
    cr_assert(wal_sync(w, NULL));
    read_synced(file, line, sizeof line);
    cr_assert_str_eq(line, "wal-0000000000000001.log 0000000000000080\n");
    /* a new segment: the old one is synced whole, then the new one's header */
    wal_set_mode(w, WAL_SYNC_IMMEDIATE, 0);
    for (int i = 2; i < 12; i++) {
        char p[32];
        int len = snprintf(p, sizeof p, "record-%02d", i);
        cr_assert(wal_append(w, p, (size_t)len, NULL));
    }
    /* 5 records of 33 bytes fit after the first two (80 + 5 * 33 = 245 of 256): lsn 8
       starts the second segment, which holds five records */
    read_synced(file, line, sizeof line);
    cr_assert_str_eq(line, "wal-0000000000000008.log 0000000000000181\n");
    wal_close(w);
    /* without the variable nothing is written */
    cr_assert_eq(unlink(file), 0);
    seen t = {0};
    w = wal_open(path("wal"), 256, collect, &t, NULL);
    cr_assert_eq(t.n, 12);
    cr_assert(wal_append(w, "record-x", 8, NULL));
    wal_close(w);
    cr_assert_neq(access(file, F_OK), 0);
}

static int count_segments(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s/wal | grep -c '^wal-.*\\.log$'", DIR_);
    FILE *p = popen(cmd, "r");
    int n = 0;
    cr_assert_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

Test(store, engine_segment_size_applies_from_now_on) {
    open_engine();
    run("+f(0)");
    cr_assert_eq(count_segments(), 1);
    cr_assert(il_engine_set_log_segment_bytes(E, 4096));
    for (int i = 1; i <= 300; i++) {
        char stmt[64];
        snprintf(stmt, sizeof stmt, "+f(%d)", i);
        run(stmt);
    }
    cr_assert_geq(count_segments(), 3, "%d segments", count_segments());
    close_engine();
    open_engine();
    il_result *r = il_execute(S, "?f(X)", 5);
    cr_assert_eq(il_result_nrows(r), 301);
    il_result_free(r);
    close_engine();
    il_engine *mem = il_engine_open(NULL, NULL);
    cr_assert(!il_engine_set_log_segment_bytes(mem, 4096));
    il_engine_close(mem);
}

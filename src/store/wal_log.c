/* The write-ahead log (wal.h): segment files, appending with the chosen sync mode, and
 * recovery with the torn-tail cut. Records are written with one pwrite each; a crash
 * can leave any prefix of that write on disk, which the length, sequence number and
 * CRC32C of the record expose on the next open. Each record also carries how far the log
 * was synced when it was written, so that recovery can tell a torn tail (past the last
 * completed sync: cut) from damage to acknowledged records (refused, or cut on request). */
#include "store/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/vec.h"
#include "store/store_codec.h"
#include "store/store_crc.h"
#include "store/store_dirs.h"

/* Version 2 segments hold records with the synced lsn; version 1 (before it) are read. */
static const char MAGIC[8] = {'I', 'L', 'W', 'A', 'L', 0, 0, 2};
static const char MAGIC_V1[8] = {'I', 'L', 'W', 'A', 'L', 0, 0, 1};

enum { RECORD_HEADER_V1 = 16 };

enum { DEFAULT_SEGMENT = 16 << 20 };

/* A segment on disk, in lsn order: its first record's lsn and the bytes written in it. */
typedef struct wal_seg {
    uint64_t first;
    uint64_t bytes;
} wal_seg;

struct wal {
    char *dir;
    int dirfd;
    int lockfd;
    int fd;            /* the segment being appended to */
    uint64_t off;      /* append offset in it */
    uint64_t seg_size; /* preallocated size of a segment */
    uint64_t next_lsn;
    uint64_t replay_from; /* records before this lsn are covered by a checkpoint */
    bool salvage;         /* recovery cuts at damage to synced records instead of refusing */
    uint64_t salvaged_to; /* the last lsn of the whole records salvage set aside (0: none) */
    uint64_t bytes;
    IL_VEC(wal_seg) segs;
    wal_sync_mode mode;
    unsigned batch_ms;
    bool deferred; /* immediate mode leaves the sync to wal_sync (group commit) */
    il_buf rec;    /* scratch: the record being written */
    /* One thread appends; any thread may sync (group commit syncs on a thread of its
       own while the next records are written). mu guards what both use: */
    pthread_mutex_t mu;
    pthread_cond_t sync_ended;
    bool syncing;         /* an fdatasync is running, outside mu */
    uint64_t written_lsn; /* the last record wholly written */
    uint64_t durable_lsn; /* the last record a completed fdatasync covers */
    uint64_t syncs;       /* completed fdatasyncs of records */
    uint64_t cur_first;   /* the first lsn of the segment being appended to */
    struct timespec last_sync;
    int synced_fd;          /* INPUTLAYER_TEST_SYNCED_LENGTH_FILE, or -1 (see note_synced) */
    unsigned sync_delay_us; /* INPUTLAYER_TEST_SYNC_DELAY_US: a slow disk, for tests */
    int fault_fd;           /* INPUTLAYER_TEST_LOG_FAULT_FILE, or -1 (see injected_fault) */
    /* After a failed write the segment is abandoned where its last whole record ends:
       the next append clears what the failed write left and goes on in a new segment. */
    bool unwritable;
    /* After a failed fdatasync the pages it covered may be lost while the page cache
       looks clean: no sync is tried again until wal_covered marks a checkpoint taken. */
    bool sync_failed;
    int fail_errno; /* why the last write of a record or of a new segment failed */
};

/* A testing aid (docs/durability.md): when INPUTLAYER_TEST_LOG_FAULT_FILE was set at
 * open, that file's first word decides the outcome of each write of a record and each
 * sync of records: "write" fails writes (half the record is written, then ENOSPC),
 * "sync" fails fdatasyncs (EIO); anything else lets them run. */
static bool injected_fault(const wal *w, const char *what) {
    if (w->fault_fd < 0) return false;
    char word[16] = {0};
    ssize_t k = pread(w->fault_fd, word, sizeof word - 1, 0);
    size_t n = strlen(what);
    return k >= (ssize_t)n && memcmp(word, what, n) == 0;
}

/* Read by other threads (wal_failure_errno, for a health check). */
static void note_failure(wal *w, int why) {
    __atomic_store_n(&w->fail_errno, why, __ATOMIC_RELAXED);
}

static void set_err(char **err, char *msg) {
    if (err)
        *err = msg;
    else
        free(msg);
}

static bool write_all(int fd, const void *p, size_t n, uint64_t off) {
    const char *c = p;
    while (n) {
        ssize_t k = pwrite(fd, c, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return true;
}

static bool read_file(int dirfd, const char *name, unsigned char **data, size_t *len) {
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        close(fd);
        return false;
    }
    size_t n = (size_t)sb.st_size, got = 0;
    unsigned char *buf = malloc(n + 1);
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    *data = buf;
    *len = got; /* a short read is a shorter log, cut like any torn tail */
    return true;
}

static void seg_name(char *out, size_t cap, uint64_t first) {
    snprintf(out, cap, "wal-%016" PRIx64 ".log", first);
}

/* A testing aid (docs/durability.md): when INPUTLAYER_TEST_SYNCED_LENGTH_FILE was set at
 * open, that file holds which segment is durable up to which offset after each sync, so
 * that a crash test can cut the log back to what a power loss would have kept. One
 * fixed-width line overwritten in place; no fsync: only the process is killed. */
static void note_synced(wal *w, uint64_t seg_first, uint64_t synced_end) {
    if (w->synced_fd < 0) return;
    char line[64];
    seg_name(line, sizeof line, seg_first);
    size_t n = strlen(line);
    n += (size_t)snprintf(line + n, sizeof line - n, " %016" PRIu64 "\n", synced_end);
    ssize_t k = pwrite(w->synced_fd, line, n, 0);
    (void)k; /* a lost note cuts the test's log back further: the test reports that */
}

static bool parse_seg_name(const char *n, uint64_t *first) {
    if (strlen(n) != 24 || strncmp(n, "wal-", 4) != 0 || strcmp(n + 20, ".log") != 0) return false;
    uint64_t v = 0;
    for (int i = 4; i < 20; i++) {
        char c = n[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v << 4 | (uint64_t)d;
    }
    *first = v;
    return true;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Creates a segment under a temporary name and renames it into place, so a segment
 * that exists always has its header. Once the log is open, the caller holds w->mu and
 * no sync is running: the old segment's descriptor is closed here. */
static bool create_segment(wal *w, uint64_t first, char **err) {
    char name[64], tmp[80];
    seg_name(name, sizeof name, first);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    int fd = openat(w->dirfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        note_failure(w, errno);
        set_err(err, il_format("cannot create %s/%s: %s", w->dir, tmp, strerror(errno)));
        return false;
    }
    /* Preallocation keeps commits from extending the file: fdatasync then has no size
       change to write. Where the file system cannot preallocate, appends still work. */
    (void)posix_fallocate(fd, 0, (off_t)w->seg_size);
    unsigned char hdr[WAL_SEGMENT_HEADER];
    memcpy(hdr, MAGIC, 8);
    for (int i = 0; i < 8; i++) hdr[8 + i] = (unsigned char)(first >> (8 * i));
    if (!write_all(fd, hdr, sizeof hdr, 0) || fsync(fd) != 0 ||
        renameat(w->dirfd, tmp, w->dirfd, name) != 0 || fsync(w->dirfd) != 0) {
        note_failure(w, errno);
        set_err(err, il_format("cannot create %s/%s: %s", w->dir, name, strerror(errno)));
        close(fd);
        return false;
    }
    note_synced(w, first, WAL_SEGMENT_HEADER);
    if (w->fd >= 0) close(w->fd);
    w->fd = fd;
    w->off = WAL_SEGMENT_HEADER;
    w->cur_first = first;
    w->bytes += WAL_SEGMENT_HEADER;
    wal_seg sg = {first, WAL_SEGMENT_HEADER};
    il_vec_push(w->segs, sg);
    return true;
}

static void set_aside(wal *w, const char *name) {
    char cut[96];
    snprintf(cut, sizeof cut, "%s.cut", name);
    if (renameat(w->dirfd, name, w->dirfd, cut) == 0)
        fprintf(stderr, "inputlayer: warning: wal: %s/%s follows the cut; moved aside to %s\n",
                w->dir, name, cut);
}

/* Keeps the bytes a cut drops in a side file, for whoever investigates the damage. */
static void save_dropped(wal *w, const char *name, const unsigned char *data, size_t from,
                         size_t len) {
    size_t end = len;
    while (end > from && data[end - 1] == 0) end--;
    if (end <= from) return;
    char side[112];
    snprintf(side, sizeof side, "%s.cut-%zu", name, from);
    int fd = openat(w->dirfd, side, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    if (write_all(fd, data + from, end - from, 0)) (void)fsync(fd);
    close(fd);
}

static size_t record_header_size(const unsigned char *segment) {
    return memcmp(segment, MAGIC_V1, 8) == 0 ? RECORD_HEADER_V1 : WAL_RECORD_HEADER;
}

static uint32_t record_crc(const unsigned char *h, size_t header, uint32_t rlen) {
    uint32_t c = store_crc32c(0, h, 4);
    c = store_crc32c(c, h + 8, header - 8);
    return store_crc32c(c, h + header, rlen);
}

/* What whole records from data[from] on, numbered `first` or later, tell: *synced, the
 * highest lsn they say a completed sync had covered when they were written (records up to
 * it were acknowledged), and *last, the highest lsn among them (each only raised). Any
 * offset is tried, since the damage may have hidden where records start; a record can
 * only carry a sync that completed before it was written, so even one written after the
 * last sync tells the truth. Version 1 records carry no synced lsn. */
static void look_at(const unsigned char *data, size_t len, size_t from, uint64_t first,
                    uint64_t *synced, uint64_t *last) {
    if (len < WAL_SEGMENT_HEADER) return;
    size_t header = record_header_size(data), off = from;
    while (len > off && len - off >= header) {
        if (off % 8 == 0 && len - off >= 8 && codec_load_u64le(data + off) == 0) {
            off += 8; /* the preallocated zeros: no record starts in them */
            continue;
        }
        const unsigned char *h = data + off;
        uint32_t rlen = codec_load_u32le(h);
        uint64_t lsn = codec_load_u64le(h + 8);
        if (lsn >= first && lsn - first < (1ull << 40) && rlen <= len - off - header &&
            record_crc(h, header, rlen) == codec_load_u32le(h + 4)) {
            uint64_t s = header == WAL_RECORD_HEADER ? codec_load_u64le(h + 16) : 0;
            if (s < lsn && s > *synced) *synced = s; /* only earlier records */
            if (lsn > *last) *last = lsn;
            off += header + rlen;
        } else {
            off++;
        }
    }
}

/* After the log stopped short at lsn `first` (in data, from offset `from` on, when data
 * is not NULL): what the rest of data and the segments segs[later .. n-1] tell (look_at). */
static void look_past(wal *w, const uint64_t *segs, uint32_t later, uint32_t n,
                      const unsigned char *data, size_t len, size_t from, uint64_t first,
                      uint64_t *synced, uint64_t *last) {
    if (data) look_at(data, len, from, first, synced, last);
    for (uint32_t j = later; j < n; j++) {
        char name[64];
        seg_name(name, sizeof name, segs[j]);
        unsigned char *d = NULL;
        size_t l = 0;
        if (!read_file(w->dirfd, name, &d, &l)) continue;
        look_at(d, l, WAL_SEGMENT_HEADER, first, synced, last);
        free(d);
    }
}

/* Scans one segment's records from the header on. Returns the offset after the last
 * valid record; *why says what stopped it when it was not the zeroed tail (NULL). */
static size_t scan_segment(wal *w, const unsigned char *data, size_t len, wal_record_fn fn,
                           void *ctx, const char **why) {
    size_t off = WAL_SEGMENT_HEADER, header = record_header_size(data);
    *why = NULL;
    while (len - off >= header) {
        const unsigned char *h = data + off;
        uint32_t rlen = codec_load_u32le(h), crc = codec_load_u32le(h + 4);
        uint64_t lsn = codec_load_u64le(h + 8);
        if (rlen == 0 && crc == 0 && lsn == 0) {
            /* The preallocated zeros: the end of what was written. Anything nonzero past
               here is a write that never completed its header, so never acknowledged. */
            return off;
        }
        if (rlen > len - off - header)
            *why = "torn record (shorter than its length)";
        else if (lsn != w->next_lsn)
            *why = "out-of-sequence record";
        else if (record_crc(h, header, rlen) != crc)
            *why = "checksum mismatch";
        else if (lsn >= w->replay_from && !fn(ctx, lsn, h + header, rlen))
            *why = "record cannot be applied";
        if (*why) return off;
        w->next_lsn++;
        off += header + rlen;
        w->bytes += header + rlen;
    }
    return off;
}

/* The message of a recovery that would lose synced records: what is damaged, what it
 * would lose, and that nothing was changed. */
static char *loss_message(const wal *w, const char *name, const char *why, size_t off,
                          uint64_t synced) {
    return il_format("%s/%s: %s at offset %zu (lsn %" PRIu64
                     "), but later records show that the log had been synced up to lsn %" PRIu64
                     ": acknowledged records would be lost",
                     w->dir, name, why, off, w->next_lsn, synced);
}

/* Damage that loses synced records (msg, taken): refused, the message becoming the error
 * and nothing changed (true); or, under salvage, warned about, recovery then cutting there
 * and numbering on after last_lsn, the highest record it sets aside (false). */
static bool refuse_loss(wal *w, char *msg, uint64_t last_lsn, bool *refused, char **err) {
    if (!w->salvage) {
        *refused = true;
        set_err(err, msg);
        return true;
    }
    fprintf(stderr, "inputlayer: warning: wal: salvaging: %s\n", msg);
    free(msg);
    w->salvaged_to = last_lsn;
    return false;
}

static void set_aside_from(wal *w, const uint64_t *segs, uint32_t from, uint32_t n) {
    for (uint32_t j = from; j < n; j++) {
        char name[64];
        seg_name(name, sizeof name, segs[j]);
        set_aside(w, name);
    }
}

static bool recover(wal *w, wal_record_fn fn, void *ctx, bool *refused, char **err) {
    DIR *d = fdopendir(dup(w->dirfd));
    if (!d) {
        set_err(err, il_format("cannot read %s: %s", w->dir, strerror(errno)));
        return false;
    }
    IL_VEC(uint64_t) segs = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t first;
        size_t n = strlen(de->d_name);
        if (parse_seg_name(de->d_name, &first))
            il_vec_push(segs, first);
        else if (n > 8 && strncmp(de->d_name, "wal-", 4) == 0 &&
                 strcmp(de->d_name + n - 8, ".log.tmp") == 0)
            unlinkat(w->dirfd, de->d_name, 0); /* a segment whose creation did not finish */
    }
    closedir(d);
    if (segs.n) qsort(segs.v, segs.n, sizeof *segs.v, cmp_u64);
    /* Segments wholly before the checkpoint's position are not read: the checkpoint
       holds their effects. They stay on disk until a later checkpoint deletes them. */
    uint32_t start = 0;
    while (start + 1 < segs.n && segs.v[start + 1] <= w->replay_from) start++;
    for (uint32_t i = 0; i < start; i++) {
        wal_seg sg = {segs.v[i], 0};
        il_vec_push(w->segs, sg);
    }
    w->next_lsn = segs.n ? segs.v[start] : w->replay_from;
    if (segs.n && segs.v[start] > w->replay_from) {
        /* Records that neither the checkpoint nor the log holds: acknowledged commits
           that recovery cannot reach. */
        char *msg = il_format("%s: the log starts at lsn %" PRIu64
                              " but the checkpoint loaded covers only up to lsn %" PRIu64
                              " (0: no checkpoint); records in between are missing",
                              w->dir, segs.v[start], w->replay_from - 1);
        if (!w->salvage) {
            *refused = true;
            set_err(err, msg);
            il_vec_free(segs);
            return false;
        }
        fprintf(stderr, "inputlayer: warning: wal: salvaging: %s; the log is set aside\n", msg);
        free(msg);
        uint64_t synced = 0;
        look_past(w, segs.v, start, segs.n, NULL, 0, 0, segs.v[start], &synced, &w->salvaged_to);
        set_aside_from(w, segs.v, start, segs.n);
        segs.n = start;
        w->next_lsn = w->replay_from;
    }
    int64_t last = -1; /* index of the segment appends continue in */
    size_t last_off = 0;
    bool last_version1 = false;
    for (uint32_t i = start; i < segs.n; i++) {
        char name[64];
        seg_name(name, sizeof name, segs.v[i]);
        unsigned char *data = NULL;
        size_t len = 0;
        bool ok = read_file(w->dirfd, name, &data, &len);
        if (!ok || len < WAL_SEGMENT_HEADER ||
            (memcmp(data, MAGIC, 8) != 0 && memcmp(data, MAGIC_V1, 8) != 0) ||
            codec_load_u64le(data + 8) != w->next_lsn) {
            /* A segment is synced with its header before records go in: one whose header
               is bad, or that does not continue the numbering, lost synced records when
               the records after it say so. */
            const char *why = "bad segment header or a gap before it";
            uint64_t synced = 0, last_lsn = 0;
            look_past(w, segs.v, i + 1, segs.n, data, len, WAL_SEGMENT_HEADER, w->next_lsn, &synced,
                      &last_lsn);
            if (synced >= w->next_lsn &&
                refuse_loss(w, loss_message(w, name, why, 0, synced), last_lsn, refused, err)) {
                free(data);
                il_vec_free(segs);
                return false;
            }
            fprintf(stderr,
                    "inputlayer: warning: wal: %s/%s: %s; "
                    "the log is cut there, %" PRIu64 " record(s) before it recovered\n",
                    w->dir, name, why, w->next_lsn - 1);
            free(data);
            set_aside_from(w, segs.v, i, segs.n);
            break;
        }
        w->bytes += WAL_SEGMENT_HEADER;
        const char *why = NULL;
        size_t end = scan_segment(w, data, len, fn, ctx, &why);
        /* A stop before the end of the log is a torn tail only when no record after it
           says that a sync had covered it. The last segment's zeroed end is checked too:
           zeros over synced records are damage as well. */
        bool last_segment = i + 1 == segs.n;
        if (why || last_segment) {
            uint64_t synced = 0, last_lsn = 0;
            look_past(w, segs.v, i + 1, why ? segs.n : i + 1, data, len, end + 1, w->next_lsn,
                      &synced, &last_lsn);
            if (synced >= w->next_lsn) {
                if (!why) why = "zeroed records";
                if (refuse_loss(w, loss_message(w, name, why, end, synced), last_lsn, refused,
                                err)) {
                    free(data);
                    il_vec_free(segs);
                    return false;
                }
            }
        }
        if (why) {
            fprintf(stderr,
                    "inputlayer: warning: wal: %s/%s: %s at offset %zu (lsn %" PRIu64
                    "); the log is cut there, %" PRIu64 " record(s) before it recovered\n",
                    w->dir, name, why, end, w->next_lsn, w->next_lsn - 1);
            save_dropped(w, name, data, end, len);
        }
        last_version1 = record_header_size(data) == RECORD_HEADER_V1;
        free(data);
        wal_seg sg = {segs.v[i], end};
        il_vec_push(w->segs, sg);
        last = i;
        last_off = end;
        if (why) {
            set_aside_from(w, segs.v, i + 1, segs.n);
            break;
        }
    }
    bool ok = true;
    if (last >= 0 && w->next_lsn < w->replay_from) {
        /* The log ends before the checkpoint's position (its tail was never synced, or
           was cut): the checkpoint has those effects, and appends must continue after
           it, in a segment of their own so the numbering has no gap. */
        fprintf(stderr,
                "inputlayer: warning: wal: %s: the log ends at lsn %" PRIu64
                ", before the checkpoint's %" PRIu64 "; continuing after the checkpoint\n",
                w->dir, w->next_lsn - 1, w->replay_from - 1);
        last = -1;
        w->next_lsn = w->replay_from;
    }
    /* Records that salvage gave up may have been acknowledged with their numbers (a
       revision a client saw): the numbering goes on after every one of them, in a new
       segment, and the caller writes a checkpoint at once to bridge the gap. */
    bool renumber = w->salvaged_to >= w->next_lsn && w->salvaged_to >= w->replay_from;
    if (renumber) {
        fprintf(stderr,
                "inputlayer: warning: wal: %s: salvaged; the log goes on at lsn %" PRIu64
                ", after the records set aside\n",
                w->dir, w->salvaged_to + 1);
    } else {
        w->salvaged_to = 0;
    }
    if (last < 0) {
        if (w->next_lsn < w->replay_from) w->next_lsn = w->replay_from;
        if (renumber) w->next_lsn = w->salvaged_to + 1;
        ok = create_segment(w, w->next_lsn, err);
    } else {
        char name[64];
        seg_name(name, sizeof name, segs.v[last]);
        w->fd = openat(w->dirfd, name, O_RDWR | O_CLOEXEC);
        /* Clearing the tail from the last valid record on means a later, shorter record
           can never be followed by stale bytes that look like records. */
        if (w->fd < 0 || ftruncate(w->fd, (off_t)last_off) != 0) {
            set_err(err, il_format("cannot open %s/%s for appending: %s", w->dir, name,
                                   strerror(errno)));
            ok = false;
        } else if (last_off < w->seg_size) {
            (void)posix_fallocate(w->fd, 0, (off_t)w->seg_size); /* as in create_segment */
        }
        if (ok && fsync(w->fd) != 0) {
            set_err(err, il_format("cannot open %s/%s for appending: %s", w->dir, name,
                                   strerror(errno)));
            ok = false;
        }
        if (ok) note_synced(w, segs.v[last], last_off);
        w->off = last_off;
        w->cur_first = segs.v[last];
        if (renumber) w->next_lsn = w->salvaged_to + 1;
        /* records of the current format never go into a version 1 segment */
        if (ok && (last_version1 || renumber)) ok = create_segment(w, w->next_lsn, err);
    }
    il_vec_free(segs);
    return ok;
}

wal *wal_open(const char *dir, uint64_t seg_size, wal_record_fn fn, void *ctx, char **err) {
    return wal_open_after(dir, seg_size, NULL, NULL, fn, ctx, err);
}

wal *wal_open_after(const char *dir, uint64_t seg_size, wal_recovery *rec, wal_start_fn start,
                    wal_record_fn fn, void *ctx, char **err) {
    if (err) *err = NULL;
    if (!store_private_dir(dir)) {
        set_err(err, il_format("cannot create %s: %s", dir, strerror(errno)));
        return NULL;
    }
    wal *w = calloc(1, sizeof *w);
    w->dir = strdup(dir);
    w->fd = -1;
    w->lockfd = -1;
    w->dirfd = -1;
    w->fault_fd = -1;
    w->seg_size = seg_size ? seg_size : DEFAULT_SEGMENT;
    w->mode = WAL_SYNC_IMMEDIATE;
    w->batch_ms = 10;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->sync_ended, NULL);
    il_buf_init(&w->rec);
    clock_gettime(CLOCK_MONOTONIC, &w->last_sync);
    /* Testing aids (docs/durability.md): a disk slower than this one makes the grouping
       of concurrent commits certain rather than likely. */
    const char *delay = getenv("INPUTLAYER_TEST_SYNC_DELAY_US");
    if (delay && *delay) w->sync_delay_us = (unsigned)strtoul(delay, NULL, 10) % 1000000u;
    const char *synced_file = getenv("INPUTLAYER_TEST_SYNCED_LENGTH_FILE");
    w->synced_fd =
        synced_file && *synced_file ? open(synced_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
    const char *fault_file = getenv("INPUTLAYER_TEST_LOG_FAULT_FILE");
    if (fault_file && *fault_file) w->fault_fd = open(fault_file, O_RDONLY | O_CLOEXEC);
    w->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->dirfd < 0) {
        set_err(err, il_format("cannot open %s: %s", dir, strerror(errno)));
        wal_close(w);
        return NULL;
    }
    w->lockfd = openat(w->dirfd, "LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (w->lockfd < 0 || flock(w->lockfd, LOCK_EX | LOCK_NB) != 0) {
        set_err(err, il_format("%s is in use by another process (%s)", dir,
                               w->lockfd < 0 ? strerror(errno) : "locked"));
        wal_close(w);
        return NULL;
    }
    w->replay_from = (start ? start(ctx) : 0) + 1;
    w->salvage = rec && rec->salvage;
    bool refused = false;
    bool recovered = recover(w, fn, ctx, &refused, err);
    if (rec) rec->refused = refused;
    if (!recovered) {
        wal_close(w);
        return NULL;
    }
    w->written_lsn = w->durable_lsn = w->next_lsn - 1;
    return w;
}

static double ms_since(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) * 1e3 + (double)(now.tv_nsec - t->tv_nsec) / 1e6;
}

bool wal_sync(wal *w, char **err) {
    if (err) *err = NULL;
    pthread_mutex_lock(&w->mu);
    /* A sync already running may cover what this caller needs: wait for it first. */
    while (w->syncing) pthread_cond_wait(&w->sync_ended, &w->mu);
    if (w->durable_lsn >= w->written_lsn) {
        pthread_mutex_unlock(&w->mu);
        return true;
    }
    if (w->sync_failed) {
        pthread_mutex_unlock(&w->mu);
        set_err(err, il_format("an earlier fdatasync of the log in %s failed; the log is not "
                               "synced again until a checkpoint rewrites the state",
                               w->dir));
        return false;
    }
    uint64_t target = w->written_lsn, seg_first = w->cur_first, synced_end = w->off;
    int fd = w->fd;
    w->syncing = true;
    pthread_mutex_unlock(&w->mu);
    /* Outside the lock, so that records go on being written meanwhile: they are synced
       by the next call, together (group commit). */
    int rc = injected_fault(w, "sync") ? (errno = EIO, -1) : fdatasync(fd);
    int saved = errno;
    if (w->sync_delay_us) usleep(w->sync_delay_us);
    pthread_mutex_lock(&w->mu);
    w->syncing = false;
    if (rc == 0) {
        if (target > w->durable_lsn) w->durable_lsn = target;
        w->syncs++;
        clock_gettime(CLOCK_MONOTONIC, &w->last_sync);
        note_synced(w, seg_first, synced_end); /* under mu: notes stay in sync order */
    } else {
        w->sync_failed = true;
    }
    pthread_cond_broadcast(&w->sync_ended);
    pthread_mutex_unlock(&w->mu);
    if (rc != 0) {
        set_err(err, il_format("fdatasync of the log in %s failed: %s", w->dir, strerror(saved)));
        return false;
    }
    return true;
}

uint64_t wal_written_lsn(wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t lsn = w->written_lsn;
    pthread_mutex_unlock(&w->mu);
    return lsn;
}

uint64_t wal_syncs(wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->syncs;
    pthread_mutex_unlock(&w->mu);
    return n;
}

uint64_t wal_durable_lsn(wal *w) {
    pthread_mutex_lock(&w->mu);
    uint64_t lsn = w->durable_lsn;
    pthread_mutex_unlock(&w->mu);
    return lsn;
}

/* After a failed write: clears what it left after the last whole record (durably, so that
 * a crash cannot leave it between records) and, unless the segment holds no record, goes
 * on in a new one. Tried again at each append until it works (the disk has room again).
 * The fsync also makes the segment's records written since the last sync durable, as a
 * segment is before the next one starts; when it fails, that is a failed sync. */
static bool resume_writing(wal *w, char **err) {
    pthread_mutex_lock(&w->mu);
    while (w->syncing) pthread_cond_wait(&w->sync_ended, &w->mu);
    bool cut = ftruncate(w->fd, (off_t)w->off) == 0;
    bool ok = cut && !w->sync_failed && fsync(w->fd) == 0;
    if (!ok) {
        int why = w->sync_failed ? EIO : errno;
        if (cut) w->sync_failed = true;
        note_failure(w, why);
        set_err(err, il_format("cannot clear a failed write in the log in %s: %s", w->dir,
                               w->sync_failed ? "syncing it failed" : strerror(why)));
    } else if (w->off > WAL_SEGMENT_HEADER) {
        ok = create_segment(w, w->next_lsn, err);
    }
    if (ok) __atomic_store_n(&w->unwritable, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&w->mu);
    return ok;
}

bool wal_append(wal *w, const void *payload, size_t len, char **err) {
    if (err) *err = NULL;
    if (len > UINT32_MAX - WAL_RECORD_HEADER) {
        set_err(err, il_format("log record too large (%zu bytes)", len));
        return false;
    }
    uint64_t rec_len = WAL_RECORD_HEADER + len;
    note_failure(w, 0);
    if (__atomic_load_n(&w->unwritable, __ATOMIC_ACQUIRE) && !resume_writing(w, err)) return false;
    if (w->off + rec_len > w->seg_size && w->off > WAL_SEGMENT_HEADER) {
        /* the old segment is complete before the new one starts, whatever the mode */
        if (!wal_sync(w, err)) return false;
        pthread_mutex_lock(&w->mu);
        while (w->syncing) pthread_cond_wait(&w->sync_ended, &w->mu);
        bool made = create_segment(w, w->next_lsn, err);
        pthread_mutex_unlock(&w->mu);
        if (!made) return false;
    }
    /* How far a completed sync reached: recovery trusts a record only for what was synced
       before it was written, so this costs no sync of its own. */
    pthread_mutex_lock(&w->mu);
    uint64_t synced = w->durable_lsn;
    pthread_mutex_unlock(&w->mu);
    il_buf_clear(&w->rec);
    codec_put_u32le(&w->rec, (uint32_t)len);
    codec_put_u32le(&w->rec, 0);
    codec_put_u64le(&w->rec, w->next_lsn);
    codec_put_u64le(&w->rec, synced);
    il_buf_put(&w->rec, payload, len);
    unsigned char *h = (unsigned char *)w->rec.data;
    uint32_t c = record_crc(h, WAL_RECORD_HEADER, (uint32_t)len);
    for (int i = 0; i < 4; i++) h[4 + i] = (unsigned char)(c >> (8 * i));
    bool fault = injected_fault(w, "write");
    if (fault) (void)write_all(w->fd, h, (size_t)rec_len / 2, w->off);
    if (fault || !write_all(w->fd, h, (size_t)rec_len, w->off)) {
        int why = fault ? ENOSPC : errno ? errno : EIO;
        note_failure(w, why);
        __atomic_store_n(&w->unwritable, true, __ATOMIC_RELEASE);
        set_err(err, il_format("write to the log in %s failed: %s", w->dir, strerror(why)));
        return false;
    }
    pthread_mutex_lock(&w->mu);
    w->off += rec_len;
    w->bytes += rec_len;
    w->segs.v[w->segs.n - 1].bytes += rec_len;
    w->written_lsn = w->next_lsn++;
    bool due = (w->mode == WAL_SYNC_IMMEDIATE && !w->deferred) ||
               (w->mode == WAL_SYNC_BATCHED && ms_since(&w->last_sync) >= w->batch_ms);
    pthread_mutex_unlock(&w->mu);
    return due ? wal_sync(w, err) : true;
}

bool wal_unwritable(const wal *w) {
    return __atomic_load_n(&w->unwritable, __ATOMIC_ACQUIRE);
}

int wal_failure_errno(const wal *w) {
    return __atomic_load_n(&w->fail_errno, __ATOMIC_RELAXED);
}

bool wal_sync_failed(wal *w) {
    pthread_mutex_lock(&w->mu);
    bool failed = w->sync_failed;
    pthread_mutex_unlock(&w->mu);
    return failed;
}

bool wal_set_aside_segment(wal *w, char **err) {
    if (err) *err = NULL;
    pthread_mutex_lock(&w->mu);
    while (w->syncing) pthread_cond_wait(&w->sync_ended, &w->mu);
    bool ok = w->off == WAL_SEGMENT_HEADER || create_segment(w, w->next_lsn, err);
    pthread_mutex_unlock(&w->mu);
    return ok;
}

void wal_covered(wal *w, uint64_t lsn) {
    pthread_mutex_lock(&w->mu);
    if (lsn > w->durable_lsn) w->durable_lsn = lsn;
    w->sync_failed = false;
    pthread_cond_broadcast(&w->sync_ended);
    pthread_mutex_unlock(&w->mu);
}

void wal_set_deferred(wal *w, bool deferred) {
    w->deferred = deferred;
}

void wal_set_mode(wal *w, wal_sync_mode mode, unsigned batch_ms) {
    w->mode = mode;
    w->batch_ms = batch_ms;
}

void wal_set_segment_size(wal *w, uint64_t seg_size) {
    w->seg_size = seg_size ? seg_size : DEFAULT_SEGMENT;
}

wal_sync_mode wal_mode(const wal *w) {
    return w->mode;
}

uint64_t wal_next_lsn(const wal *w) {
    return w->next_lsn;
}

uint64_t wal_bytes(const wal *w) {
    return w->bytes;
}

void wal_drop_before(wal *w, uint64_t lsn) {
    uint32_t keep = 0;
    while (keep + 1 < w->segs.n && w->segs.v[keep + 1].first <= lsn + 1) {
        char name[64];
        seg_name(name, sizeof name, w->segs.v[keep].first);
        if (unlinkat(w->dirfd, name, 0) != 0 && errno != ENOENT) break;
        w->bytes -= w->segs.v[keep].bytes;
        keep++;
    }
    if (!keep) return;
    memmove(w->segs.v, w->segs.v + keep, (w->segs.n - keep) * sizeof *w->segs.v);
    w->segs.n -= keep;
}

uint64_t wal_salvaged_to(const wal *w) {
    return w->salvaged_to;
}

uint64_t wal_first_lsn(const wal *w) {
    return w->segs.n ? w->segs.v[0].first : w->next_lsn;
}

void wal_close(wal *w) {
    if (!w) return;
    if (w->fd >= 0) {
        (void)wal_sync(w, NULL);
        close(w->fd);
    }
    pthread_cond_destroy(&w->sync_ended);
    pthread_mutex_destroy(&w->mu);
    if (w->lockfd >= 0) close(w->lockfd); /* releases the flock */
    if (w->dirfd >= 0) close(w->dirfd);
    if (w->synced_fd >= 0) close(w->synced_fd);
    if (w->fault_fd >= 0) close(w->fault_fd);
    il_buf_free(&w->rec);
    il_vec_free(w->segs);
    free(w->dir);
    free(w);
}

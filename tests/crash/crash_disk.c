/* The power-loss cut of the log and the listing of the data directory (crash_disk.h). The
 * record layout is the log's (docs/durability.md): a 16-byte segment header, then
 * records of length u32 | crc32c u32 | lsn u64 | synced lsn u64 | payload, then zeros. */
#include "crash_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SEGMENT_HEADER = 16, RECORD_HEADER = 24, SYNCED_LINE = 42 };

static uint32_t load_u32le(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **disk_list(const char *dir, const char *prefix, const char *suffix, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t cap = 0, lp = strlen(prefix), ls = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < lp + ls || strncmp(de->d_name, prefix, lp) != 0 ||
            strcmp(de->d_name + len - ls, suffix) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            names = realloc(names, cap * sizeof *names);
        }
        names[(*n)++] = strdup(de->d_name);
    }
    closedir(d);
    if (*n) qsort(names, *n, sizeof *names, cmp_names);
    return names;
}

void disk_free_names(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

static bool all_zero(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Counts the records and nonzero bytes of data[from..len) (the part a power loss drops),
 * then overwrites it with zeros, or, with keep, the pages of it not drawn to stay. */
static bool zero_after(const char *path, uint64_t from, const disk_keep *keep, disk_cut *out,
                       char *err, size_t errlen) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    uint64_t len = (uint64_t)sb.st_size;
    if (from >= len) {
        close(fd);
        return true;
    }
    size_t n = (size_t)(len - from);
    unsigned char *data = malloc(n);
    bool ok = pread(fd, data, n, (off_t)from) == (ssize_t)n;
    /* whole or torn records from the cut on, as the log would have read them */
    for (size_t off = 0; ok && n - off >= RECORD_HEADER;) {
        const unsigned char *h = data + off;
        uint32_t rlen = load_u32le(h);
        bool zero = true;
        for (int i = 0; i < RECORD_HEADER; i++) zero = zero && h[i] == 0;
        if (zero) break;
        out->records++;
        if (rlen > n - off - RECORD_HEADER) break;
        off += RECORD_HEADER + rlen;
    }
    bool hole = false;
    for (uint64_t at = from; at < len;) {
        uint64_t unit = keep ? keep->page : 4096, end = (at / unit + 1) * unit;
        if (end > len) end = len;
        unsigned char *page = data + (at - from);
        size_t size = (size_t)(end - at);
        bool written = !all_zero(page, size);
        if (keep && rand_r(keep->rng) % 2 == 0) {
            if (written) {
                out->pages_kept++;
                out->kept_after_hole += hole;
            }
        } else {
            for (size_t i = 0; i < size; i++) out->bytes += page[i] != 0;
            memset(page, 0, size);
            hole = hole || written;
        }
        at = end;
    }
    ok = ok && pwrite(fd, data, n, (off_t)from) == (ssize_t)n;
    if (!ok) snprintf(err, errlen, "cannot cut %s: %s", path, strerror(errno));
    free(data);
    close(fd);
    return ok;
}

bool disk_cut_to_synced(const char *wal_dir, const char *synced_file, const disk_keep *keep,
                        disk_cut *out, char *err, size_t errlen) {
    char line[SYNCED_LINE + 1] = {0}, seg[32];
    uint64_t synced = 0;
    FILE *f = fopen(synced_file, "r");
    bool ok = f && fread(line, 1, SYNCED_LINE, f) == SYNCED_LINE && line[24] == ' ' &&
              line[SYNCED_LINE - 1] == '\n' && sscanf(line + 25, "%16" SCNu64, &synced) == 1;
    if (f) fclose(f);
    if (!ok) {
        snprintf(err, errlen, "no synced length in %s (%.*s)", synced_file, SYNCED_LINE, line);
        return false;
    }
    memcpy(seg, line, 24);
    seg[24] = 0;
    size_t n;
    char **segs = disk_list(wal_dir, "wal-", ".log", &n);
    size_t at = 0;
    while (at < n && strcmp(segs[at], seg) != 0) at++;
    if (at == n) {
        snprintf(err, errlen, "the synced segment %s is not in %s", seg, wal_dir);
        disk_free_names(segs, n);
        return false;
    }
    for (size_t i = at; ok && i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", wal_dir, segs[i]);
        ok = zero_after(path, i == at ? synced : SEGMENT_HEADER, keep, out, err, errlen);
    }
    disk_free_names(segs, n);
    return ok;
}

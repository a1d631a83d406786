/* Checkpoint files (format in ckpt.h): zstd compression, the checksummed header, the
 * atomic write (temporary file, fsync, rename, fsync of the directory) and the checks
 * on reading. A file is trusted only when its header checksum, its exact length, its
 * body checksum and the decompressed length all agree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/vec.h"
#include "store/ckpt.h"
#include "store/store_codec.h"
#include "store/store_crc.h"

static const char MAGIC[8] = {'I', 'L', 'C', 'K', 'P', 'T', 0, 1};

enum {
    CKPT_VERSION = 1,
    CKPT_HEADER = 44,
    /* Fast enough to keep a checkpoint of a million facts well under a second, and most
       of the gain of higher levels on fact data. */
    CKPT_ZSTD_LEVEL = 3,
};

void ckpt_file_name(char *out, size_t cap, uint64_t lsn) {
    snprintf(out, cap, "ckpt-%016" PRIx64 ".ckpt", lsn);
}

static bool parse_name(const char *n, uint64_t *lsn) {
    if (strlen(n) != 26 || strncmp(n, "ckpt-", 5) != 0 || strcmp(n + 21, ".ckpt") != 0)
        return false;
    uint64_t v = 0;
    for (int i = 5; i < 21; i++) {
        char c = n[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v << 4 | (uint64_t)d;
    }
    *lsn = v;
    return true;
}

static char *errf(const char *what, const char *dir, const char *name) {
    const char *why = strerror(errno);
    size_t n = strlen(what) + strlen(dir) + strlen(name) + strlen(why) + 8;
    char *s = malloc(n);
    snprintf(s, n, "%s %s/%s: %s", what, dir, name, why);
    return s;
}

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
    }
    return true;
}

bool ckpt_file_write(int dirfd, const char *dir, uint64_t lsn, const void *image, size_t len,
                     char **err) {
    size_t cap = ZSTD_compressBound(len);
    unsigned char *out = malloc(CKPT_HEADER + cap);
    size_t body = ZSTD_compress(out + CKPT_HEADER, cap, image, len, CKPT_ZSTD_LEVEL);
    if (ZSTD_isError(body)) {
        const char *why = ZSTD_getErrorName(body);
        *err = malloc(strlen(why) + 32);
        sprintf(*err, "checkpoint compression: %s", why);
        free(out);
        return false;
    }
    il_buf h;
    il_buf_init(&h);
    il_buf_put(&h, MAGIC, 8);
    codec_put_u32le(&h, CKPT_VERSION);
    codec_put_u64le(&h, lsn);
    codec_put_u64le(&h, len);
    codec_put_u64le(&h, body);
    codec_put_u32le(&h, store_crc32c(0, out + CKPT_HEADER, body));
    codec_put_u32le(&h, store_crc32c(0, h.data, h.len));
    memcpy(out, h.data, CKPT_HEADER);
    il_buf_free(&h);

    char name[64], tmp[80];
    ckpt_file_name(name, sizeof name, lsn);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0;
    if (!ok) *err = errf("cannot create", dir, tmp);
    if (ok && (!write_all(fd, out, CKPT_HEADER + body) || fsync(fd) != 0)) {
        *err = errf("cannot write", dir, tmp);
        ok = false;
    }
    if (fd >= 0) close(fd);
    /* the rename makes it visible whole; the directory sync makes the rename durable */
    if (ok && (renameat(dirfd, tmp, dirfd, name) != 0 || fsync(dirfd) != 0)) {
        *err = errf("cannot install", dir, name);
        ok = false;
    }
    if (!ok) unlinkat(dirfd, tmp, 0);
    free(out);
    return ok;
}

static bool read_whole(int dirfd, const char *name, unsigned char **data, size_t *len) {
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat sb;
    bool ok = fstat(fd, &sb) == 0;
    size_t n = ok ? (size_t)sb.st_size : 0, got = 0;
    unsigned char *buf = malloc(n + 1);
    while (ok && got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    *data = buf;
    *len = got;
    return ok;
}

bool ckpt_file_read(int dirfd, uint64_t lsn, unsigned char **image, size_t *len, const char **why) {
    char name[64];
    ckpt_file_name(name, sizeof name, lsn);
    unsigned char *data = NULL;
    size_t n = 0;
    *image = NULL;
    *len = 0;
    if (!read_whole(dirfd, name, &data, &n)) {
        free(data);
        *why = "cannot be read";
        return false;
    }
    *why = NULL;
    uint64_t raw = 0, body = 0;
    if (n < CKPT_HEADER || memcmp(data, MAGIC, 8) != 0)
        *why = "not a checkpoint file";
    else if (store_crc32c(0, data, CKPT_HEADER - 4) != codec_load_u32le(data + 40))
        *why = "header checksum mismatch";
    else if (codec_load_u32le(data + 8) != CKPT_VERSION)
        *why = "unknown checkpoint version";
    else if (codec_load_u64le(data + 12) != lsn)
        *why = "log position differs from its name";
    if (!*why) {
        raw = codec_load_u64le(data + 20);
        body = codec_load_u64le(data + 28);
        if (body != n - CKPT_HEADER)
            *why = "truncated or extended";
        else if (store_crc32c(0, data + CKPT_HEADER, body) != codec_load_u32le(data + 36))
            *why = "checksum mismatch";
    }
    if (!*why) {
        unsigned char *out = malloc(raw ? raw : 1);
        size_t got = ZSTD_decompress(out, raw, data + CKPT_HEADER, body);
        if (ZSTD_isError(got) || got != raw) {
            *why = "does not decompress";
            free(out);
        } else {
            *image = out;
            *len = raw;
        }
    }
    free(data);
    return *why == NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t *ckpt_file_list(int dirfd, size_t *n) {
    IL_VEC(uint64_t) v = {0};
    DIR *d = fdopendir(dup(dirfd));
    if (d) rewinddir(d); /* the duplicate shares the offset an earlier listing left at the end */
    for (struct dirent *de; d && (de = readdir(d));) {
        uint64_t lsn;
        size_t len = strlen(de->d_name);
        if (parse_name(de->d_name, &lsn))
            il_vec_push(v, lsn);
        else if (len > 9 && strncmp(de->d_name, "ckpt-", 5) == 0 &&
                 strcmp(de->d_name + len - 9, ".ckpt.tmp") == 0)
            unlinkat(dirfd, de->d_name, 0); /* a write that did not finish */
    }
    if (d) closedir(d);
    if (v.n) qsort(v.v, v.n, sizeof *v.v, cmp_u64);
    *n = v.n;
    return v.v;
}

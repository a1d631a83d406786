/* Serving the web client's files (srv_static.h). Files up to SRV_STATIC_COPY_MAX are
 * read into the response; larger ones are mapped read-only and written from the mapping,
 * so that many requests for a large file share its page cache pages instead of each
 * holding a copy, and the loop never reads a whole large file before answering. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "server/srv_cors.h"
#include "server/srv_static.h"

struct srv_static {
    char *root; /* realpath of http.gui.static_dir */
    size_t rootlen;
    uint64_t mapped; /* bytes of the mappings responses still hold */
};

srv_static *srv_static_open(const srv_config *cfg, FILE *log) {
    if (!cfg->gui_enabled) return NULL;
    char *root = realpath(cfg->gui_static_dir, NULL);
    struct stat sb;
    if (!root || stat(root, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        if (log)
            fprintf(log, "GUI:     not served (http.gui.static_dir %s: %s)\n", cfg->gui_static_dir,
                    root ? "not a directory" : strerror(errno));
        free(root);
        return NULL;
    }
    srv_static *st = calloc(1, sizeof *st);
    st->root = root;
    st->rootlen = strlen(root);
    /* "/" as the root: every resolved path is inside it. */
    if (st->rootlen == 1) st->rootlen = 0;
    if (log) fprintf(log, "GUI:     enabled (files from %s)\n", root);
    return st;
}

void srv_static_close(srv_static *st) {
    if (!st) return;
    free(st->root);
    free(st);
}

static bool has_prefix(const char *p, size_t n, const char *route) {
    size_t r = strlen(route);
    return n >= r && memcmp(p, route, r) == 0 && (n == r || p[r] == '/');
}

bool srv_static_claims(const char *path, size_t len) {
    static const char *const OWN[] = {"/ws",      "/health", "/live", "/ready",
                                      "/metrics", "/api",    "/v1"};
    if (len == 0 || path[0] != '/') return false;
    for (size_t i = 0; i < sizeof OWN / sizeof *OWN; i++)
        if (has_prefix(path, len, OWN[i])) return false;
    return true;
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The path percent-decoded and split into segments, rejoined without a leading slash
 * into out (cap bytes). False for anything that is not a plain relative name: a bad
 * escape, NUL or another control byte, a backslash, a `.` or `..` segment (decoded,
 * so %2e%2e and ..%2f are caught alike) or a path too long. */
static bool clean_path(const char *p, size_t n, char *out, size_t cap) {
    char dec[PATH_MAX];
    size_t d = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '%') {
            int hi = i + 2 < n ? hexval(p[i + 1]) : -1, lo = i + 2 < n ? hexval(p[i + 2]) : -1;
            if (hi < 0 || lo < 0) return false;
            ch = (unsigned char)(hi << 4 | lo);
            i += 2;
        }
        if (ch < 0x20 || ch == 0x7f || ch == '\\' || d + 1 >= sizeof dec) return false;
        dec[d++] = (char)ch;
    }
    size_t o = 0;
    for (size_t i = 0; i < d;) {
        size_t s = i;
        while (i < d && dec[i] != '/') i++;
        size_t len = i - s;
        if (i < d) i++; /* the slash */
        if (len == 0) continue;
        if ((len == 1 && dec[s] == '.') || (len == 2 && dec[s] == '.' && dec[s + 1] == '.'))
            return false;
        if (o + len + 2 > cap) return false;
        if (o) out[o++] = '/';
        memcpy(out + o, dec + s, len);
        o += len;
    }
    out[o] = 0;
    return true;
}

static const char *mime_type(const char *name) {
    static const struct {
        const char *ext, *type;
    } TYPES[] = {
        {"html", "text/html; charset=utf-8"},
        {"htm", "text/html; charset=utf-8"},
        {"js", "text/javascript; charset=utf-8"},
        {"mjs", "text/javascript; charset=utf-8"},
        {"css", "text/css; charset=utf-8"},
        {"json", "application/json"},
        {"map", "application/json"},
        {"svg", "image/svg+xml"},
        {"png", "image/png"},
        {"jpg", "image/jpeg"},
        {"jpeg", "image/jpeg"},
        {"gif", "image/gif"},
        {"ico", "image/x-icon"},
        {"woff", "font/woff"},
        {"woff2", "font/woff2"},
        {"ttf", "font/ttf"},
        {"wasm", "application/wasm"},
        {"txt", "text/plain; charset=utf-8"},
    };
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *dot = strrchr(base, '.');
    if (dot)
        for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
            if (strcasecmp(dot + 1, TYPES[i].ext) == 0) return TYPES[i].type;
    return "application/octet-stream";
}

/* A segment starting with a dot (.git, .env ...) is not part of a web client's build
 * and may be what a deployment forgot there; .well-known is the exception (RFC 8615). */
static bool hidden(const char *rel) {
    for (const char *seg = rel; *seg;) {
        size_t n = strcspn(seg, "/");
        if (seg[0] == '.' && !(n == 11 && strncmp(seg, ".well-known", 11) == 0)) return true;
        seg += n;
        if (*seg == '/') seg++;
    }
    return false;
}

/* The last segment of a cleaned path has an extension (a dot after its first byte). */
static bool has_extension(const char *rel) {
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    return base[0] && strchr(base + 1, '.') != NULL;
}

enum found { FOUND, FOUND_NONE, FOUND_OUTSIDE, FOUND_DENIED, FOUND_ERROR };

/* Opens root/rel as a regular file inside the root (a directory: its index.html). */
static enum found open_file(srv_static *st, const char *rel, int *fd, struct stat *sb,
                            bool *was_dir) {
    *was_dir = false;
    char full[PATH_MAX * 2];
    int n = snprintf(full, sizeof full, "%s/%s", st->root, rel);
    if (n < 0 || (size_t)n >= sizeof full) return FOUND_NONE;
    for (int round = 0; round < 2; round++) {
        char *real = realpath(full, NULL);
        if (!real)
            return errno == ENOENT || errno == ENOTDIR ? FOUND_NONE
                   : errno == EACCES                   ? FOUND_DENIED
                                                       : FOUND_ERROR;
        bool inside = strncmp(real, st->root, st->rootlen) == 0 &&
                      (real[st->rootlen] == '/' || real[st->rootlen] == 0);
        if (!inside) {
            free(real);
            return FOUND_OUTSIDE;
        }
        /* O_NONBLOCK: a FIFO put there must not block the loop in open(). */
        *fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (*fd < 0) {
            int e = errno;
            free(real);
            return e == ENOENT ? FOUND_NONE : e == EACCES ? FOUND_DENIED : FOUND_ERROR;
        }
        if (fstat(*fd, sb) != 0) {
            close(*fd);
            free(real);
            return FOUND_ERROR;
        }
        if (S_ISREG(sb->st_mode)) {
            free(real);
            return FOUND;
        }
        close(*fd);
        bool isdir = S_ISDIR(sb->st_mode);
        *was_dir = true;
        n = snprintf(full, sizeof full, "%s/index.html", real);
        free(real);
        if (!isdir || n < 0 || (size_t)n >= sizeof full) return FOUND_NONE;
    }
    return FOUND_NONE;
}

static void http_date(char *out, size_t cap, time_t t) {
    struct tm tm;
    gmtime_r(&t, &tm);
    static const char *const DAYS[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d GMT", DAYS[tm.tm_wday], tm.tm_mday,
             MONTHS[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"); false for any other form. */
static bool parse_http_date(const char *s, time_t *t) {
    static const char MONTHS[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char mon[4];
    int day, year, h, m, sec, used = 0;
    if (sscanf(s, "%*3s, %2d %3s %4d %2d:%2d:%2d GMT%n", &day, mon, &year, &h, &m, &sec, &used) !=
            6 ||
        used == 0 || s[used] != 0)
        return false;
    const char *at = strstr(MONTHS, mon);
    if (!at || (at - MONTHS) % 3 != 0 || strlen(mon) != 3) return false;
    struct tm tm = {.tm_mday = day,
                    .tm_mon = (int)((at - MONTHS) / 3),
                    .tm_year = year - 1900,
                    .tm_hour = h,
                    .tm_min = m,
                    .tm_sec = sec};
    *t = timegm(&tm);
    return *t != (time_t)-1;
}

/* If-None-Match names the tag (or `*`); weak tags compare by their value. */
static bool etag_matches(const char *list, const char *etag) {
    size_t elen = strlen(etag);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        if (!*p) break;
        size_t n = strcspn(p, ",");
        size_t t = n;
        while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t')) t--;
        const char *tag = p;
        if (t >= 2 && tag[0] == 'W' && tag[1] == '/') {
            tag += 2;
            t -= 2;
        }
        if ((t == 1 && tag[0] == '*') || (t == elen && memcmp(tag, etag, elen) == 0)) return true;
        p += n;
    }
    return false;
}

typedef struct mapping {
    srv_static *st;
    void *addr;
    size_t len;
} mapping;

static void unmap(void *ctx) {
    mapping *m = ctx;
    munmap(m->addr, m->len);
    m->st->mapped -= m->len;
    free(m);
}

static void respond_text(srv_conn *c, int status, const char *reason, const char *msg) {
    srv_http_respond(c, status, reason, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Reads size bytes at 0 into b; false when the file came up short (it was truncated). */
static bool read_all(int fd, il_buf *b, size_t size) {
    il_buf_reserve(b, size + 1);
    size_t got = 0;
    while (got < size) {
        ssize_t r = pread(fd, b->data + b->len + got, size - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    b->len += size;
    b->data[b->len] = 0;
    return true;
}

void srv_static_serve(srv_conn *c, srv_static *st, const char *path, size_t len, bool head) {
    char rel[PATH_MAX];
    if (!clean_path(path, len, rel, sizeof rel)) {
        respond_text(c, 400, "Bad Request", "Bad request path");
        return;
    }
    if (hidden(rel)) {
        srv_http_not_found(c);
        return;
    }
    bool fallback = false, was_dir;
    int fd = -1;
    struct stat sb;
    enum found f = open_file(st, rel[0] ? rel : "index.html", &fd, &sb, &was_dir);
    /* A client route (no extension) that names no file is the client's to resolve. */
    if (f == FOUND_NONE && !has_extension(rel)) {
        fallback = true;
        f = open_file(st, "index.html", &fd, &sb, &was_dir);
    }
    if (f == FOUND_OUTSIDE || f == FOUND_DENIED) {
        respond_text(c, 403, "Forbidden", "Forbidden");
        return;
    }
    if (f != FOUND) {
        if (f == FOUND_ERROR)
            respond_text(c, 500, "Internal Server Error", "Cannot read the file");
        else
            srv_http_not_found(c);
        return;
    }
    const char *name = fallback || !rel[0] || was_dir ? "index.html" : rel;
    bool html = strcmp(mime_type(name), "text/html; charset=utf-8") == 0;
    /* Bundlers put content-hashed names under assets/: they never change. Everything
     * else, index.html first, is revalidated each time (the validators make that a 304). */
    const char *cache = !fallback && strncmp(rel, "assets/", 7) == 0 && !html
                            ? "public, max-age=31536000, immutable"
                            : "no-cache";
    char etag[64], modified[64];
    snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)sb.st_size,
             (unsigned long long)sb.st_mtim.tv_sec * 1000000000ull +
                 (unsigned long long)sb.st_mtim.tv_nsec);
    http_date(modified, sizeof modified, sb.st_mtim.tv_sec);
    bool not_modified = false;
    if (c->if_none_match.len) {
        not_modified = etag_matches(c->if_none_match.data, etag);
    } else if (c->if_modified_since.len) {
        time_t since;
        /* A date in the future is no date (RFC 9110 13.1.3). */
        not_modified = parse_http_date(c->if_modified_since.data, &since) && since <= time(NULL) &&
                       sb.st_mtim.tv_sec <= since;
    }
    size_t size = (size_t)sb.st_size;
    if ((uint64_t)sb.st_size > SRV_STATIC_MAPPED_MAX) {
        close(fd);
        respond_text(c, 500, "Internal Server Error", "File too large to serve");
        return;
    }
    bool map = !not_modified && !head && size > SRV_STATIC_COPY_MAX;
    if (map && st->mapped + size > SRV_STATIC_MAPPED_MAX) {
        close(fd);
        respond_text(c, 503, "Service Unavailable", "Too many file transfers in progress");
        return;
    }
    il_buf h;
    il_buf_init(&h);
    if (not_modified)
        il_buf_puts(&h, "HTTP/1.1 304 Not Modified\r\n");
    else
        il_buf_printf(&h, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n",
                      mime_type(name), size);
    il_buf_printf(&h,
                  "Cache-Control: %s\r\nETag: %s\r\nLast-Modified: %s\r\n"
                  "X-Content-Type-Options: nosniff\r\nX-API-Version: v" SRV_VERSION "\r\n",
                  cache, etag, modified);
    srv_cors_headers(c, &h);
    if (!c->keep_alive) il_buf_puts(&h, "Connection: close\r\n");
    il_buf_puts(&h, "\r\n");
    if (not_modified || head || size == 0) {
        srv_conn_write(c, h.data, h.len);
    } else if (!map) {
        if (read_all(fd, &h, size)) {
            srv_conn_write(c, h.data, h.len);
        } else {
            respond_text(c, 500, "Internal Server Error", "Cannot read the file");
        }
    } else {
        void *addr = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (addr == MAP_FAILED) {
            respond_text(c, 500, "Internal Server Error", "Cannot read the file");
        } else {
            mapping *m = malloc(sizeof *m);
            *m = (mapping){st, addr, size};
            st->mapped += size;
            srv_conn_cork(c);
            srv_conn_write(c, h.data, h.len);
            srv_conn_write_ref(c, addr, size, unmap, m);
            srv_conn_uncork(c);
        }
    }
    il_buf_free(&h);
    close(fd);
}

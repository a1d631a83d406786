/* inotify on the data directory for the WebSocket crash test (crash_watch.h). */
#include "crash_watch.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool watch_open(crash_watch *w, const char *data, char *err, unsigned long errlen) {
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ckpt", data);
    bool ok = w->fd >= 0 && inotify_add_watch(w->fd, dir, IN_CREATE | IN_MOVED_TO | IN_DELETE) >= 0;
    snprintf(dir, sizeof dir, "%s/wal", data);
    ok = ok && inotify_add_watch(w->fd, dir, IN_DELETE) >= 0;
    if (!ok) snprintf(err, errlen, "inotify on %s: %s", data, strerror(errno));
    return ok;
}

/* Reads the events there are; true when one of them is the aimed one. */
static bool read_events(crash_watch *w, watch_aim aim) {
    bool hit = false;
    char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n <= 0) return hit;
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            const char *name = e->len ? e->name : "";
            if ((e->mask & IN_MOVED_TO) && ends_with(name, ".ckpt")) w->checkpoints++;
            if ((e->mask & IN_CREATE) && ends_with(name, ".ckpt.tmp") && aim == AIM_CKPT_WRITE)
                hit = true;
            if ((e->mask & IN_DELETE) && strncmp(name, "wal-", 4) == 0 && ends_with(name, ".log"))
                w->segments_deleted++;
            if ((e->mask & IN_DELETE) && aim == AIM_DELETE &&
                (ends_with(name, ".log") || ends_with(name, ".ckpt")))
                hit = true;
            p += sizeof *e + e->len;
        }
    }
}

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

bool watch_wait(crash_watch *w, watch_aim aim, long ms) {
    long end = now_ms() + ms;
    for (long left = ms; left > 0; left = end - now_ms()) {
        struct pollfd p = {w->fd, POLLIN, 0};
        if (poll(&p, 1, (int)left) > 0 && read_events(w, aim) && aim != AIM_TIME) return true;
    }
    return false;
}

void watch_drain(crash_watch *w) {
    (void)read_events(w, AIM_TIME);
}

void watch_close(crash_watch *w) {
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}

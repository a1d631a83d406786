/* fsync_probe: the floor a durable write stands on, on this disk. It writes records into
 * a preallocated file, as the write-ahead log does (src/store/wal_log.c), each followed by
 * fdatasync, and prints the sync latency's percentiles:
 *
 *   fsync_probe [--dir D (.)] [--count N (2000)] [--bytes B (128)]
 *               [--prealloc fallocate|zeros (fallocate)] [--interval-us I (0)]
 *               [--method fdatasync|direct (fdatasync)]
 *
 * The file is preallocated as the log's segments are, with posix_fallocate (its blocks
 * allocated, unwritten), or with zeros written and synced first. The two differ on some
 * disks, hence the choice.
 *
 * With --method direct, each record is made durable without fdatasync: the 4 KiB blocks
 * from the one holding the previous record's end to the new end are written through a
 * descriptor opened O_DIRECT | O_DSYNC (the last block again and again while records fill
 * it), as a log synced that way would. It measured no faster here (BENCHMARKS.md, "Direct
 * log writes, tried"), which is why the log keeps fdatasync.
 *
 * With --interval-us, a write starts every I µs (none waits when the last took longer), as a
 * writer paced like the standing-query fixtures' makes the log's syncs: on a virtual machine
 * an idle CPU between syncs makes each one cost more CPU and time than back to back.
 *
 * One JSON line and one line for people, times in µs, with the CPU time the process spent
 * per write and sync (mostly the kernel's work for the sync: part of what a durable write
 * costs the server's CPU). The file is removed at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double pct(const uint64_t *sorted, size_t n, double p) {
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return (double)sorted[i] / 1000.0;
}

int main(int argc, char **argv) {
    const char *dir = ".";
    const char *prealloc = "fallocate";
    const char *method = "fdatasync";
    long count = 2000, bytes = 128, interval_us = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
        else if (strcmp(argv[i], "--prealloc") == 0)
            prealloc = argv[i + 1];
        else if (strcmp(argv[i], "--method") == 0)
            method = argv[i + 1];
        else if (strcmp(argv[i], "--count") == 0)
            count = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--bytes") == 0)
            bytes = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--interval-us") == 0)
            interval_us = strtol(argv[i + 1], NULL, 10);
        else {
            fprintf(stderr, "usage: fsync_probe [--dir D] [--count N] [--bytes B] "
                            "[--prealloc fallocate|zeros] [--interval-us I] "
                            "[--method fdatasync|direct]\n");
            return 2;
        }
    }
    bool zero_fill = strcmp(prealloc, "zeros") == 0, direct = strcmp(method, "direct") == 0;
    if (count < 100 || bytes < 1 || bytes > 1 << 20 || interval_us < 0 || interval_us > 10000000 ||
        (!zero_fill && strcmp(prealloc, "fallocate") != 0) ||
        (!direct && strcmp(method, "fdatasync") != 0)) {
        fprintf(stderr, "fsync_probe: --count at least 100, --bytes 1 to 1048576, --prealloc "
                        "fallocate or zeros, --interval-us 0 to 10000000, --method fdatasync "
                        "or direct\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/fsync_probe.%ld", dir, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "fsync_probe: %s: %s\n", path, strerror(errno));
        return 1;
    }
    /* Preallocated and synced first, so that no record's sync has a size change to write. */
    size_t total = (size_t)count * (size_t)bytes;
    char *zeros = calloc(1, zero_fill ? total : 1);
    /* direct: the file's bytes from the block holding the last record's end on */
    enum { BLOCK = 4096 };
    size_t tail_cap = ((size_t)bytes / BLOCK + 2) * BLOCK;
    void *tail = NULL;
    if (posix_memalign(&tail, BLOCK, tail_cap) != 0) tail = NULL;
    if (tail) memset(tail, 0, tail_cap);
    int dfd = -1;
    char *rec = malloc((size_t)bytes);
    uint64_t *lat = malloc((size_t)count * sizeof *lat);
    int rc = zeros && rec && lat && tail ? 0 : 1;
    if (rc != 0) fprintf(stderr, "fsync_probe: out of memory\n");
    if (rc == 0) memset(rec, 'r', (size_t)bytes);
    int err = rc != 0     ? 0
              : zero_fill ? (pwrite(fd, zeros, total, 0) == (ssize_t)total ? 0 : errno)
                          : posix_fallocate(fd, 0, (off_t)total);
    if (rc == 0 && (err != 0 || fsync(fd) != 0)) {
        fprintf(stderr, "fsync_probe: preallocating %s: %s\n", path, strerror(err ? err : errno));
        rc = 1;
    }
    if (rc == 0 && direct && (dfd = open(path, O_RDWR | O_DIRECT | O_DSYNC | O_CLOEXEC)) < 0) {
        fprintf(stderr, "fsync_probe: %s: O_DIRECT refused: %s\n", path, strerror(errno));
        rc = 1;
    }
    size_t base = 0; /* the file offset of tail's first byte */
    uint64_t cpu_start = cpu_ns(), first = now_ns();
    for (long i = 0; i < count && rc == 0; i++) {
        uint64_t due = first + (uint64_t)i * (uint64_t)interval_us * 1000u;
        if (interval_us > 0 && now_ns() < due) {
            struct timespec ts = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
            }
        }
        uint64_t t0 = now_ns();
        if (direct) {
            size_t end = (size_t)(i + 1) * (size_t)bytes,
                   len = (end - base + BLOCK - 1) / BLOCK * BLOCK;
            memcpy((char *)tail + (end - base - (size_t)bytes), rec, (size_t)bytes);
            if (pwrite(dfd, tail, len, (off_t)base) != (ssize_t)len) {
                fprintf(stderr, "fsync_probe: %s: %s\n", path, strerror(errno));
                rc = 1;
            }
            /* The last, partial block is written again. Past the bytes in use the tail
               holds zeros, so only those the move leaves behind are cleared. */
            size_t keep = end / BLOCK * BLOCK;
            memmove(tail, (char *)tail + (keep - base), end - keep);
            memset((char *)tail + (end - keep), 0, (end - base) - (end - keep));
            base = keep;
        } else if (pwrite(fd, rec, (size_t)bytes, (off_t)i * bytes) != bytes ||
                   fdatasync(fd) != 0) {
            fprintf(stderr, "fsync_probe: %s: %s\n", path, strerror(errno));
            rc = 1;
        }
        lat[i] = now_ns() - t0;
    }
    double cpu_per_sync = (double)(cpu_ns() - cpu_start) / 1000.0 / (double)count;
    close(fd);
    if (dfd >= 0) close(dfd);
    unlink(path);
    if (rc == 0) {
        qsort(lat, (size_t)count, sizeof *lat, cmp_u64);
        double p50 = pct(lat, (size_t)count, 0.50), p99 = pct(lat, (size_t)count, 0.99);
        double max = (double)lat[count - 1] / 1000.0;
        printf("{\"probe\":\"fsync\",\"count\":%ld,\"bytes\":%ld,\"prealloc\":\"%s\","
               "\"method\":\"%s\",\"interval_us\":%ld,\"p50_us\":%.1f,\"p99_us\":%.1f,"
               "\"max_us\":%.1f,\"cpu_us_per_sync\":%.1f}\n",
               count, bytes, prealloc, method, interval_us, p50, p99, max, cpu_per_sync);
        printf(
            "%s floor: %ld writes of %ld bytes (%s)%s, each %s: p50 %.1f µs, p99 %.1f µs, "
            "max %.1f µs; CPU %.1f µs per sync\n",
            direct ? "direct-write" : "fsync", count, bytes, prealloc, interval_us ? ", paced" : "",
            direct ? "written O_DIRECT | O_DSYNC" : "then fdatasync", p50, p99, max, cpu_per_sync);
    }
    free(zeros);
    free(tail);
    free(rec);
    free(lat);
    return rc;
}

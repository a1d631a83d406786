/* Watching the data directory (inotify) while the WebSocket crash test writes: counts the
 * checkpoints completed and the log segments deleted, and lets a kill be aimed at the
 * moment a checkpoint file starts being written or old log or checkpoints are deleted,
 * so that those windows are hit on purpose rather than by luck. */
#ifndef IL_CRASH_WATCH_H
#define IL_CRASH_WATCH_H

#include <stdbool.h>

typedef enum watch_aim {
    AIM_TIME,       /* no event: the time alone */
    AIM_CKPT_WRITE, /* a checkpoint's temporary file was created */
    AIM_DELETE,     /* a log segment or an old checkpoint was deleted */
} watch_aim;

typedef struct crash_watch {
    int fd;
    long checkpoints;      /* checkpoint files renamed into place */
    long segments_deleted; /* log segments deleted */
} crash_watch;

/* Watches DATA/ckpt and DATA/wal (both exist once a server started on DATA). */
bool watch_open(crash_watch *w, const char *data, char *err, unsigned long errlen);
/* Waits up to ms for the aimed event, counting every event seen; true when it came. */
bool watch_wait(crash_watch *w, watch_aim aim, long ms);
/* Counts the events that are already there, without waiting. */
void watch_drain(crash_watch *w);
void watch_close(crash_watch *w);

#endif

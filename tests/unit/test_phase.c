/* Tests of base/phase.c, the I/O thread's phase recorder: the CPU between two marks goes to
 * the phase of the second, only the claimed thread records, a new start forgets what was
 * recorded, the signals take effect at the next mark, and the table is per statement. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/phase.h"

static uint64_t cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spends about ns of this thread's CPU. */
static void spin(uint64_t ns) {
    uint64_t end = cpu_ns() + ns;
    volatile uint64_t x = 0;
    while (cpu_ns() < end) x++;
}

Test(phase, the_cpu_between_two_marks_goes_to_the_second_marks_phase) {
    il_phase_claim_thread();
    il_phase_record_start();
    il_phase_record(IL_PHASE_WAIT); /* the first mark only starts the clock */
    spin(20000000);
    il_phase_record(IL_PHASE_STATEMENT);
    spin(2000000);
    il_phase_record(IL_PHASE_LOG_SYNC);
    il_phase_totals t = il_phase_record_stop();
    cr_assert_eq(t.marks[IL_PHASE_WAIT], 0);
    cr_assert_eq(t.marks[IL_PHASE_STATEMENT], 1);
    cr_assert_eq(t.marks[IL_PHASE_LOG_SYNC], 1);
    cr_assert_geq(t.ns[IL_PHASE_STATEMENT], 20000000u);
    cr_assert_lt(t.ns[IL_PHASE_STATEMENT], 200000000u);
    cr_assert_geq(t.ns[IL_PHASE_LOG_SYNC], 2000000u);
    cr_assert_lt(t.ns[IL_PHASE_LOG_SYNC], t.ns[IL_PHASE_STATEMENT]);
    /* stopped: nothing more is recorded */
    il_phase_record(IL_PHASE_SEND);
    cr_assert_eq(il_phase_record_stop().marks[IL_PHASE_SEND], 0);
}

Test(phase, a_new_start_forgets_what_was_recorded) {
    il_phase_claim_thread();
    il_phase_record_start();
    il_phase_record(IL_PHASE_WAIT);
    il_phase_record(IL_PHASE_SEND);
    il_phase_record(IL_PHASE_SEND);
    cr_assert_eq(il_phase_record_stop().marks[IL_PHASE_SEND], 2);
    il_phase_record_start();
    il_phase_record(IL_PHASE_SEND); /* the first after a start only starts the clock */
    il_phase_record(IL_PHASE_PUBLISH);
    il_phase_totals t = il_phase_record_stop();
    cr_assert_eq(t.marks[IL_PHASE_SEND], 0);
    cr_assert_eq(t.marks[IL_PHASE_PUBLISH], 1);
}

static void *mark_elsewhere(void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) il_phase_record(IL_PHASE_PUBLISH);
    return NULL;
}

Test(phase, only_the_claimed_thread_records) {
    il_phase_claim_thread();
    il_phase_record_start();
    il_phase_record(IL_PHASE_WAIT);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, mark_elsewhere, NULL), 0);
    pthread_join(th, NULL);
    il_phase_record(IL_PHASE_FRAME);
    il_phase_totals t = il_phase_record_stop();
    cr_assert_eq(t.marks[IL_PHASE_PUBLISH], 0);
    cr_assert_eq(t.marks[IL_PHASE_FRAME], 1);
}

/* The marks per write printed on the table's line for phase `name`, or -1. */
static double marks_per_write(const char *text, const char *name) {
    char head[64];
    snprintf(head, sizeof head, "\n| %s | ", name);
    const char *line = strstr(text, head);
    double us, marks;
    if (!line || sscanf(line + strlen(head), "%lf | %lf |", &us, &marks) != 2) return -1;
    return marks;
}

/* The server's way: INPUTLAYER_PHASE_CPU=1, SIGUSR1 to start, SIGUSR2 to print. */
Test(phase, the_signals_start_and_print_at_the_next_mark) {
    setenv("INPUTLAYER_PHASE_CPU", "1", 1);
    il_phase_setup();
    cr_assert(il_phase_enabled);
    char path[] = "/tmp/il_phase_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_not_null(freopen(path, "w", stderr));
    il_phase_begin(); /* not recording yet */
    raise(SIGUSR1);
    il_phase_begin(); /* starts here: only starts the clock */
    il_phase_mark(IL_PHASE_PREPARE);
    il_phase_mark(IL_PHASE_STATEMENT);
    il_phase_mark(IL_PHASE_SEND);
    il_phase_mark(IL_PHASE_SEND);
    il_phase_begin();
    il_phase_mark(IL_PHASE_PREPARE);
    il_phase_mark(IL_PHASE_STATEMENT);
    raise(SIGUSR2);
    il_phase_mark(IL_PHASE_SEND); /* prints what came before, and stops */
    il_phase_mark(IL_PHASE_SEND);
    fflush(stderr);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char text[4096] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    unlink(path);
    text[n] = 0;
    cr_assert(strstr(text, "over 2 statements, in us per statement"), "%s", text);
    cr_assert_float_eq(marks_per_write(text, "send"), 1.0, 1e-9, "%s", text);
    cr_assert_float_eq(marks_per_write(text, "wait and read"), 0.5, 1e-9, "%s", text);
    cr_assert_float_eq(marks_per_write(text, "statement"), 1.0, 1e-9, "%s", text);
    cr_assert_float_eq(marks_per_write(text, "publish"), -1.0, 1e-9, "%s", text); /* none */
    cr_assert(strstr(text, "\n| all | "), "%s", text);
    /* printed once: the marks after it record nothing */
    cr_assert_eq(il_phase_record_stop().marks[IL_PHASE_SEND], 2);
}

Test(phase, without_the_variable_nothing_is_recorded) {
    unsetenv("INPUTLAYER_PHASE_CPU");
    il_phase_setup();
    cr_assert_not(il_phase_enabled);
    il_phase_claim_thread();
    il_phase_record_start();
    il_phase_mark(IL_PHASE_WAIT);
    il_phase_mark(IL_PHASE_SEND);
    cr_assert_eq(il_phase_record_stop().marks[IL_PHASE_SEND], 0);
}

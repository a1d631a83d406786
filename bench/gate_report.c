/* The perf gate's measurements and their JSON form; see gate_report.h. */
#include "gate_report.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gr_set(char **field, const char *value) {
    free(*field);
    *field = value ? strdup(value) : NULL;
}

gr_result *gr_add_result(gr_report *r, const char *fixture, int round, int arm, int order) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        gr_result *grown = realloc(r->results, cap * sizeof *grown);
        if (!grown) return NULL;
        r->results = grown;
        r->cap = cap;
    }
    gr_result *res = &r->results[r->n];
    *res = (gr_result){.round = round, .arm = arm, .order = order, .status = GR_OK};
    res->fixture = strdup(fixture);
    if (!res->fixture) return NULL;
    r->n++;
    return res;
}

bool gr_add_metric(gr_result *res, const char *name, double value, long samples,
                   bool higher_is_better) {
    if (res->nmetrics == res->cap) {
        size_t cap = res->cap ? 2 * res->cap : 16;
        gr_metric *grown = realloc(res->metrics, cap * sizeof *grown);
        if (!grown) return false;
        res->metrics = grown;
        res->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return false;
    res->metrics[res->nmetrics++] = (gr_metric){copy, value, samples, higher_is_better, NAN};
    return true;
}

bool gr_set_paired_ratio(gr_result *res, const char *name, double ratio) {
    gr_metric *m = (gr_metric *)gr_find_metric(res, name);
    if (m) m->paired_ratio = ratio;
    return m != NULL;
}

void gr_fail(gr_result *res, int status, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    res->status = status;
    gr_set(&res->message, buf);
}

void gr_fail_exit(gr_result *res, const char *name, int rc, const char *why, const char *tail) {
    if (rc == 3)
        gr_fail(res, GR_INVALID, "%s: %s", name, tail);
    else
        gr_fail(res, GR_FAILED, "%s exited with %d: %s %s", name, rc,
                rc < 0 || rc == 124 ? why : "", tail);
}

const gr_metric *gr_find_metric(const gr_result *res, const char *name) {
    for (size_t i = 0; i < res->nmetrics; i++)
        if (strcmp(res->metrics[i].name, name) == 0) return &res->metrics[i];
    return NULL;
}

bool gr_add_fixture(gr_report *r, const char *name) {
    if (gr_has_fixture(r, name)) return true;
    char **grown = realloc(r->fixtures, (r->nfixtures + 1) * sizeof *grown);
    if (!grown) return false;
    r->fixtures = grown;
    r->fixtures[r->nfixtures] = strdup(name);
    return r->fixtures[r->nfixtures++] != NULL;
}

bool gr_has_fixture(const gr_report *r, const char *name) {
    for (size_t i = 0; i < r->nfixtures; i++)
        if (strcmp(r->fixtures[i], name) == 0) return true;
    return false;
}

void gr_free(gr_report *r) {
    for (size_t i = 0; i < r->n; i++) {
        gr_result *res = &r->results[i];
        for (size_t m = 0; m < res->nmetrics; m++) free(res->metrics[m].name);
        free(res->metrics);
        free(res->fixture);
        free(res->message);
    }
    free(r->results);
    for (size_t i = 0; i < r->nfixtures; i++) free(r->fixtures[i]);
    free(r->fixtures);
    free(r->kind), free(r->profile), free(r->arms[0]), free(r->arms[1]);
    free(r->started), free(r->machine), free(r->layout);
    *r = (gr_report){0};
}

static json_t *string_or_null(const char *s) {
    return s ? json_string(s) : json_null();
}

void *gr_to_json(const gr_report *r) {
    json_t *o = json_object(), *results = json_array();
    json_object_set_new(o, "kind", string_or_null(r->kind));
    json_object_set_new(o, "profile", string_or_null(r->profile));
    json_object_set_new(o, "baseline", string_or_null(r->arms[0]));
    json_object_set_new(o, "candidate", string_or_null(r->arms[1]));
    json_object_set_new(o, "started", string_or_null(r->started));
    json_object_set_new(o, "machine", string_or_null(r->machine));
    json_object_set_new(o, "layout", string_or_null(r->layout));
    json_object_set_new(o, "rounds", json_integer(r->rounds));
    json_t *fixtures = json_array();
    for (size_t i = 0; i < r->nfixtures; i++)
        json_array_append_new(fixtures, json_string(r->fixtures[i]));
    json_object_set_new(o, "fixtures", fixtures);
    for (size_t i = 0; i < r->n; i++) {
        const gr_result *res = &r->results[i];
        json_t *metrics = json_object();
        for (size_t m = 0; m < res->nmetrics; m++) {
            const gr_metric *mt = &res->metrics[m];
            json_t *one = json_pack(
                "{s:o,s:I,s:b}", "value", isnan(mt->value) ? json_null() : json_real(mt->value),
                "samples", (json_int_t)mt->samples, "higher_is_better", mt->higher_is_better);
            if (!isnan(mt->paired_ratio))
                json_object_set_new(one, "paired_ratio", json_real(mt->paired_ratio));
            json_object_set_new(metrics, mt->name, one);
        }
        json_array_append_new(results, json_pack("{s:s,s:i,s:s,s:i,s:i,s:o,s:f,s:o}", "fixture",
                                                 res->fixture, "round", res->round, "arm",
                                                 res->arm ? "candidate" : "baseline", "order",
                                                 res->order, "status", res->status, "message",
                                                 string_or_null(res->message), "seconds",
                                                 res->seconds, "metrics", metrics));
    }
    json_object_set_new(o, "results", results);
    return o;
}

static void set_from(char **field, const json_t *o, const char *key) {
    gr_set(field, json_string_value(json_object_get(o, key)));
}

static bool read_result(gr_report *r, const json_t *v, size_t index, char *err, size_t errlen) {
    const char *fixture = json_string_value(json_object_get(v, "fixture"));
    const char *arm = json_string_value(json_object_get(v, "arm"));
    const json_t *round = json_object_get(v, "round"), *status = json_object_get(v, "status");
    const json_t *metrics = json_object_get(v, "metrics");
    if (!fixture || !arm || (strcmp(arm, "baseline") != 0 && strcmp(arm, "candidate") != 0) ||
        !json_is_integer(round) || json_integer_value(round) < 0 || !json_is_integer(status) ||
        !json_is_object(metrics)) {
        snprintf(err, errlen,
                 "results[%zu]: needs fixture, arm (baseline or candidate), round, status and "
                 "metrics",
                 index);
        return false;
    }
    gr_result *res =
        gr_add_result(r, fixture, (int)json_integer_value(round), strcmp(arm, "candidate") == 0,
                      (int)json_integer_value(json_object_get(v, "order")));
    if (!res) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    res->status = (int)json_integer_value(status);
    set_from(&res->message, v, "message");
    res->seconds = json_number_value(json_object_get(v, "seconds"));
    const char *name;
    const json_t *m;
    json_object_foreach((json_t *)metrics, name, m) {
        const json_t *value = json_object_get(m, "value");
        const json_t *paired = json_object_get(m, "paired_ratio");
        if (!json_is_object(m) || (!json_is_number(value) && !json_is_null(value)) ||
            (paired && !json_is_number(paired)) ||
            !json_is_integer(json_object_get(m, "samples")) ||
            !json_is_boolean(json_object_get(m, "higher_is_better"))) {
            snprintf(err, errlen,
                     "results[%zu].metrics.%s: needs value (a number or null), samples and "
                     "higher_is_better (and paired_ratio is a number when present)",
                     index, name);
            return false;
        }
        if (!gr_add_metric(res, name, json_is_null(value) ? NAN : json_number_value(value),
                           (long)json_integer_value(json_object_get(m, "samples")),
                           json_is_true(json_object_get(m, "higher_is_better")))) {
            snprintf(err, errlen, "out of memory");
            return false;
        }
        if (paired) gr_set_paired_ratio(res, name, json_number_value(paired));
    }
    return true;
}

bool gr_read_file(const char *path, gr_report *r, char *err, size_t errlen) {
    json_error_t jerr;
    json_t *o = json_load_file(path, 0, &jerr);
    *r = (gr_report){0};
    err[0] = 0;
    if (!o) {
        snprintf(err, errlen, "%s: line %d: %s", path, jerr.line, jerr.text);
        return false;
    }
    const json_t *results = json_object_get(o, "results");
    bool ok = json_is_object(o) && json_is_array(results) &&
              json_is_integer(json_object_get(o, "rounds"));
    if (!ok) snprintf(err, errlen, "%s: not a perf-gate report (no rounds or results)", path);
    if (ok) {
        set_from(&r->kind, o, "kind");
        set_from(&r->profile, o, "profile");
        set_from(&r->arms[0], o, "baseline");
        set_from(&r->arms[1], o, "candidate");
        set_from(&r->started, o, "started");
        set_from(&r->machine, o, "machine");
        set_from(&r->layout, o, "layout");
        r->rounds = (long)json_integer_value(json_object_get(o, "rounds"));
        /* A report without the list asked for the fixtures it has results of. */
        const json_t *fixtures = json_object_get(o, "fixtures");
        for (size_t i = 0; ok && i < json_array_size(fixtures); i++) {
            const char *name = json_string_value(json_array_get(fixtures, i));
            if (name) ok = gr_add_fixture(r, name);
        }
        char inner[400];
        for (size_t i = 0; ok && i < json_array_size(results); i++) {
            ok = read_result(r, json_array_get(results, i), i, inner, sizeof inner);
            if (!ok) snprintf(err, errlen, "%s: %s", path, inner);
        }
        for (size_t i = 0; ok && !json_is_array(fixtures) && i < r->n; i++)
            ok = gr_add_fixture(r, r->results[i].fixture);
        if (!ok && !err[0]) snprintf(err, errlen, "out of memory");
    }
    json_decref(o);
    if (!ok) gr_free(r);
    return ok;
}

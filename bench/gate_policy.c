/* The perf gate's policy; see gate_policy.h. */
#include "gate_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_toml.h"

void gp_defaults(gp_policy *p) {
    *p = (gp_policy){
        .confidence = 0.95,
        .simultaneous = true,
        .min_rounds = 6,
        .min_samples_p50 = 20,
        .min_samples_p99 = 100,
        .budget_p50 = 1.05,
        .budget_p99 = 1.10,
        .budget_rate = 1.05,
        .budget_other = 1.10,
    };
}

void gp_free(gp_policy *p) {
    for (size_t i = 0; i < p->nbudgets; i++) free(p->budgets[i].metric);
    for (size_t i = 0; i < p->nceilings; i++) free(p->ceilings[i].metric);
    for (size_t i = 0; i < p->nrequired; i++) free(p->required[i]);
    free(p->budgets);
    free(p->ceilings);
    free(p->required);
    p->budgets = p->ceilings = NULL;
    p->required = NULL;
    p->nbudgets = p->nceilings = p->nrequired = 0;
}

static bool number_of(const srv_toml_entry *e, double *out) {
    if (e->v.type == SRV_TOML_FLOAT)
        *out = e->v.f;
    else if (e->v.type == SRV_TOML_INT)
        *out = (double)e->v.i;
    else
        return false;
    return true;
}

/* A metric name: fixture.metric[.stat], letters, digits and _ between the dots. */
static bool metric_name_ok(const char *s, size_t len) {
    if (len == 0 || s[0] == '.' || s[len - 1] == '.') return false;
    bool dot = false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (i > 0 && s[i - 1] == '.') return false;
            dot = true;
        } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_')) {
            return false;
        }
    }
    return dot;
}

/* "metric OP number" items: OP is "=" for budgets, "<=" for ceilings. */
static bool parse_pairs(const srv_toml_entry *e, const char *op, gp_override **out, size_t *n,
                        char *err, size_t errlen) {
    if (e->v.type != SRV_TOML_ARRAY) {
        snprintf(err, errlen, "line %d: %s must be an array of strings", e->line, e->key);
        return false;
    }
    gp_override *items = calloc(e->v.nitems ? e->v.nitems : 1, sizeof *items);
    if (!items) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < e->v.nitems; i++) {
        const char *s = e->v.items[i], *at = strstr(s, op);
        size_t name_len = at ? (size_t)(at - s) : 0;
        while (name_len && s[name_len - 1] == ' ') name_len--;
        char *end = NULL;
        double v = at ? (errno = 0, strtod(at + strlen(op), &end)) : 0;
        while (end && *end == ' ') end++;
        if (!at || !metric_name_ok(s, name_len) || !end || end == at + strlen(op) || *end ||
            errno || !(v > 0)) {
            snprintf(err, errlen,
                     "line %d: %s: '%s' is not \"fixture.metric %s number\" with a positive "
                     "number",
                     e->line, e->key, s, op);
            for (size_t j = 0; j < k; j++) free(items[j].metric);
            free(items);
            return false;
        }
        items[k].metric = strndup(s, name_len);
        items[k++].value = v;
    }
    *out = items;
    *n = k;
    return true;
}

static bool parse_entry(const srv_toml_entry *e, gp_policy *p, char *err, size_t errlen) {
    struct {
        const char *key;
        double *target;
        double min, max;
    } numbers[] = {
        {"gate.confidence", &p->confidence, 0.5, 0.9999},
        {"budget.p50", &p->budget_p50, 1.0, 100},
        {"budget.p99", &p->budget_p99, 1.0, 100},
        {"budget.rate", &p->budget_rate, 1.0, 100},
        {"budget.other", &p->budget_other, 1.0, 100},
    };
    struct {
        const char *key;
        long *target;
        long min, max;
    } counts[] = {
        {"gate.min_rounds", &p->min_rounds, 1, 10000},
        {"gate.min_samples_p50", &p->min_samples_p50, 1, 100000000},
        {"gate.min_samples_p99", &p->min_samples_p99, 1, 100000000},
    };
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
        if (strcmp(e->key, numbers[i].key) != 0) continue;
        double v;
        if (!number_of(e, &v) || v < numbers[i].min || v > numbers[i].max) {
            snprintf(err, errlen, "line %d: %s must be a number from %g to %g", e->line, e->key,
                     numbers[i].min, numbers[i].max);
            return false;
        }
        *numbers[i].target = v;
        return true;
    }
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        if (strcmp(e->key, counts[i].key) != 0) continue;
        if (e->v.type != SRV_TOML_INT || e->v.i < counts[i].min || e->v.i > counts[i].max) {
            snprintf(err, errlen, "line %d: %s must be an integer from %ld to %ld", e->line, e->key,
                     counts[i].min, counts[i].max);
            return false;
        }
        *counts[i].target = (long)e->v.i;
        return true;
    }
    if (strcmp(e->key, "gate.simultaneous") == 0) {
        if (e->v.type != SRV_TOML_BOOL) {
            snprintf(err, errlen, "line %d: %s must be true or false", e->line, e->key);
            return false;
        }
        p->simultaneous = e->v.b;
        return true;
    }
    if (strcmp(e->key, "budget.overrides") == 0) {
        for (size_t i = 0; i < p->nbudgets; i++) free(p->budgets[i].metric);
        free(p->budgets);
        p->budgets = NULL, p->nbudgets = 0;
        return parse_pairs(e, "=", &p->budgets, &p->nbudgets, err, errlen);
    }
    if (strcmp(e->key, "ceilings.limits") == 0) {
        for (size_t i = 0; i < p->nceilings; i++) free(p->ceilings[i].metric);
        free(p->ceilings);
        p->ceilings = NULL, p->nceilings = 0;
        return parse_pairs(e, "<=", &p->ceilings, &p->nceilings, err, errlen);
    }
    if (strcmp(e->key, "required.metrics") == 0) {
        if (e->v.type != SRV_TOML_ARRAY) {
            snprintf(err, errlen, "line %d: %s must be an array of strings", e->line, e->key);
            return false;
        }
        for (size_t i = 0; i < e->v.nitems; i++)
            if (!metric_name_ok(e->v.items[i], strlen(e->v.items[i]))) {
                snprintf(err, errlen, "line %d: '%s' is not a metric name (fixture.metric)",
                         e->line, e->v.items[i]);
                return false;
            }
        for (size_t i = 0; i < p->nrequired; i++) free(p->required[i]);
        free(p->required);
        p->required = calloc(e->v.nitems ? e->v.nitems : 1, sizeof *p->required);
        p->nrequired = 0;
        if (!p->required) {
            snprintf(err, errlen, "out of memory");
            return false;
        }
        for (size_t i = 0; i < e->v.nitems; i++)
            p->required[p->nrequired++] = strdup(e->v.items[i]);
        return true;
    }
    snprintf(err, errlen, "line %d: unknown key '%s'", e->line, e->key);
    return false;
}

bool gp_parse(const char *text, size_t len, gp_policy *p, char *err, size_t errlen) {
    srv_toml t;
    if (!srv_toml_parse(text, len, &t, err, errlen)) return false;
    bool ok = true;
    for (size_t i = 0; ok && i < t.n; i++) ok = parse_entry(&t.entries[i], p, err, errlen);
    srv_toml_free(&t);
    return ok;
}

bool gp_load(const char *path, gp_policy *p, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? 2 * cap : 16384;
            char *grown = realloc(text, cap);
            if (!grown) break;
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool read_ok = !ferror(f) && text;
    fclose(f);
    if (!read_ok) {
        free(text);
        snprintf(err, errlen, "cannot read %s", path);
        return false;
    }
    char inner[400];
    bool ok = gp_parse(text, len, p, inner, sizeof inner);
    if (!ok) snprintf(err, errlen, "%s: %s", path, inner);
    free(text);
    return ok;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

const char *gp_metric_kind(const char *metric) {
    if (ends_with(metric, ".p50")) return "p50";
    if (ends_with(metric, ".p99")) return "p99";
    /* queries_per_sec, facts_per_sec, writes_per_server_cpu_sec ... */
    const char *dot = strrchr(metric, '.');
    if (ends_with(metric, "_sec") && strstr(dot ? dot : metric, "_per_")) return "rate";
    return "other";
}

static const gp_override *find(const gp_override *items, size_t n, const char *metric) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(items[i].metric, metric) == 0) return &items[i];
    return NULL;
}

double gp_budget(const gp_policy *p, const char *metric) {
    const gp_override *o = find(p->budgets, p->nbudgets, metric);
    if (o) return o->value;
    const char *kind = gp_metric_kind(metric);
    if (strcmp(kind, "p50") == 0) return p->budget_p50;
    if (strcmp(kind, "p99") == 0) return p->budget_p99;
    if (strcmp(kind, "rate") == 0) return p->budget_rate;
    return p->budget_other;
}

long gp_min_samples(const gp_policy *p, const char *metric) {
    const char *kind = gp_metric_kind(metric);
    if (strcmp(kind, "p50") == 0) return p->min_samples_p50;
    if (strcmp(kind, "p99") == 0) return p->min_samples_p99;
    return 1;
}

bool gp_is_required(const gp_policy *p, const char *metric) {
    for (size_t i = 0; i < p->nrequired; i++)
        if (strcmp(p->required[i], metric) == 0) return true;
    return false;
}

bool gp_ceiling(const gp_policy *p, const char *metric, double *limit) {
    const gp_override *o = find(p->ceilings, p->nceilings, metric);
    if (o) *limit = o->value;
    return o != NULL;
}

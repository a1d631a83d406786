/* The csv, tsv, json and jsonl output modes (format.h). Cells come as the JSON of their
 * values, so a string is decoded to its bytes for csv and tsv and kept for json. */
#include "client/format.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const NAMES[] = {"table", "csv", "tsv", "json", "jsonl", "box"};

bool cli_mode_parse(const char *name, size_t len, cli_mode *mode) {
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strlen(NAMES[i]) == len && strncasecmp(name, NAMES[i], len) == 0) {
            *mode = (cli_mode)i;
            return true;
        }
    return false;
}

const char *cli_mode_name(cli_mode mode) {
    return NAMES[mode];
}

static void csv_field(FILE *out, const char *p, size_t n) {
    bool quote = n == 0 ? false : (p[0] == ' ' || p[n - 1] == ' ');
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\n' || p[i] == '\r';
    if (!quote) {
        fwrite(p, 1, n, out);
        return;
    }
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"') fputc('"', out);
        fputc(p[i], out);
    }
    fputc('"', out);
}

static void tsv_field(FILE *out, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case '\t':
            fputs("\\t", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        default:
            fputc(p[i], out);
        }
    }
}

/* A cell's text for csv and tsv: a string's bytes, any other value's JSON text. */
static void text_field(FILE *out, const char *json, cli_mode mode) {
    if (!json) return;
    json_t *v = json[0] == '"' ? json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL) : NULL;
    const char *p = v ? json_string_value(v) : json;
    size_t n = v ? json_string_length(v) : strlen(json);
    if (mode == CLI_MODE_CSV)
        csv_field(out, p, n);
    else
        tsv_field(out, p, n);
    json_decref(v);
}

static void json_name(FILE *out, const char *name) {
    json_t *s = json_string(name);
    char *t = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    fputs(t ? t : "\"\"", out);
    free(t);
    json_decref(s);
}

static void json_row(FILE *out, const cli_reply *r, size_t row) {
    fputc('{', out);
    for (size_t c = 0; c < r->ncols; c++) {
        if (c) fputs(", ", out);
        json_name(out, r->cols[c]);
        fputs(": ", out);
        const char *j = r->json ? r->json[row * r->ncols + c] : NULL;
        fputs(j ? j : "null", out);
    }
    fputc('}', out);
}

void cli_print_rows(FILE *out, const cli_reply *r, cli_mode mode) {
    switch (mode) {
    case CLI_MODE_CSV:
    case CLI_MODE_TSV: {
        const char *sep = mode == CLI_MODE_CSV ? "," : "\t";
        for (size_t c = 0; c < r->ncols; c++) {
            if (c) fputs(sep, out);
            if (mode == CLI_MODE_CSV)
                csv_field(out, r->cols[c], strlen(r->cols[c]));
            else
                tsv_field(out, r->cols[c], strlen(r->cols[c]));
        }
        fputc('\n', out);
        for (size_t i = 0; i < r->nrows; i++) {
            for (size_t c = 0; c < r->ncols; c++) {
                if (c) fputs(sep, out);
                text_field(out, r->json ? r->json[i * r->ncols + c] : NULL, mode);
            }
            fputc('\n', out);
        }
        break;
    }
    case CLI_MODE_JSON:
        fputc('[', out);
        for (size_t i = 0; i < r->nrows; i++) {
            fputs(i ? ",\n  " : "\n  ", out);
            json_row(out, r, i);
        }
        fputs(r->nrows ? "\n]\n" : "]\n", out);
        break;
    case CLI_MODE_JSONL:
        for (size_t i = 0; i < r->nrows; i++) {
            json_row(out, r, i);
            fputc('\n', out);
        }
        break;
    case CLI_MODE_TABLE:
    case CLI_MODE_BOX:
        break;
    }
}

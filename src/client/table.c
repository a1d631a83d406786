/* Box table rendering (see table.h). */
#include "client/table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t utf8_len(const char *s) {
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* Byte length of the first `chars` characters. */
static size_t utf8_prefix(const char *s, size_t chars) {
    size_t i = 0, c = 0;
    while (s[i] && c < chars) {
        i++;
        while (s[i] && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
        c++;
    }
    return i;
}

static void rule_line(FILE *out, const size_t *w, size_t n, const char *l, const char *m,
                      const char *r) {
    fputs(l, out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(m, out);
        for (size_t k = 0; k < w[i] + 2; k++) fputs("─", out);
    }
    fputs(r, out);
    fputc('\n', out);
}

static void pad(FILE *out, size_t n) {
    for (size_t i = 0; i < n; i++) fputc(' ', out);
}

void cli_print_table(FILE *out, const cli_reply *r, size_t width, bool ruled) {
    size_t max = width ? width : SIZE_MAX;
    size_t ncols = r->ncols, nrows = r->nrows;
    size_t *w = calloc(ncols + 1, sizeof *w);
    bool *numeric = malloc(ncols + 1);
    char **cells = calloc(nrows * ncols + 1, sizeof *cells);
    for (size_t c = 0; c < ncols; c++) {
        w[c] = strlen(r->cols[c]);
        numeric[c] = nrows > 0;
    }
    for (size_t i = 0; i < nrows; i++) {
        for (size_t c = 0; c < ncols; c++) {
            const char *cell = r->cells[i * ncols + c];
            if (!cell) {
                numeric[c] = false;
                cells[i * ncols + c] = strdup("");
                continue;
            }
            char *text = strdup(cell);
            if (!r->numeric[i * ncols + c]) numeric[c] = false;
            size_t chars = utf8_len(text);
            if (chars > max) {
                size_t cut = utf8_prefix(text, max - 1);
                text = realloc(text, cut + 4);
                memcpy(text + cut, "…", 4);
                chars = max;
            }
            cells[i * ncols + c] = text;
            if (chars > w[c]) w[c] = chars;
        }
    }
    for (size_t c = 0; c < ncols; c++)
        if (w[c] > max) w[c] = max;
    rule_line(out, w, ncols, "┌", "┬", "┐");
    fputs("│", out);
    for (size_t c = 0; c < ncols; c++) {
        const char *h = r->cols[c];
        fputc(' ', out);
        fputs(h, out);
        size_t hl = utf8_len(h);
        if (hl < w[c]) pad(out, w[c] - hl);
        fputs(" │", out);
    }
    if (ncols == 0) fputs("│", out); /* a zero-column row is drawn closed: ││ */
    fputc('\n', out);
    rule_line(out, w, ncols, "├", "┼", "┤");
    for (size_t i = 0; i < nrows; i++) {
        if (ruled && i) rule_line(out, w, ncols, "├", "┼", "┤");
        fputs("│", out);
        for (size_t c = 0; c < ncols; c++) {
            const char *t = cells[i * ncols + c];
            size_t l = utf8_len(t);
            fputc(' ', out);
            if (numeric[c] && l < w[c]) pad(out, w[c] - l);
            fputs(t, out);
            if (!numeric[c] && l < w[c]) pad(out, w[c] - l);
            fputs(" │", out);
        }
        if (ncols == 0) fputs("│", out);
        fputc('\n', out);
    }
    rule_line(out, w, ncols, "└", "┴", "┘");
    for (size_t i = 0; i < nrows * ncols; i++) free(cells[i]);
    free(cells);
    free(numeric);
    free(w);
}

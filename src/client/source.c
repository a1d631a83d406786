/* File positions of script statements (source.h). Statements come in file order, so a
 * cursor makes locating them linear in the file size, not quadratic. */
#include "client/source.h"

#include <string.h>

void cli_source_init(cli_source *s, const char *path, const char *text, size_t len) {
    *s = (cli_source){.path = path, .text = text, .len = len, .line = 1};
}

static size_t chars(const char *p, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)p[i] & 0xC0) != 0x80) k++;
    return k;
}

void cli_source_locate(cli_source *s, size_t off, size_t *line, size_t *col) {
    if (off > s->len) off = s->len;
    if (off < s->line_start) {
        s->at = s->line_start = 0;
        s->line = 1;
    }
    for (; s->at < off; s->at++)
        if (s->text[s->at] == '\n') {
            s->line++;
            s->line_start = s->at + 1;
        }
    s->at = off;
    *line = s->line;
    *col = chars(s->text + s->line_start, off - s->line_start) + 1;
}

void cli_source_point(cli_source *s, FILE *out, size_t off) {
    size_t line, col;
    cli_source_locate(s, off, &line, &col);
    const char *b = s->text + s->line_start, *end = s->text + s->len;
    const char *nl = memchr(b, '\n', (size_t)(end - b));
    size_t n = nl ? (size_t)(nl - b) : (size_t)(end - b);
    fprintf(out, "   --> %s:%zu:%zu\n    |\n    | ", s->path, line, col);
    /* Control bytes (NUL, CR) are shown as spaces; tabs are kept so the caret lines up. */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        fputc(c < 0x20 && c != '\t' ? ' ' : c, out);
    }
    fputs("\n    | ", out);
    for (size_t i = 0; i < off - s->line_start && i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        if ((c & 0xC0) != 0x80) fputc(c == '\t' ? '\t' : ' ', out);
    }
    fputs("^\n", out);
}

/* Unit tests of the request frame reader (src/server/srv_jsonflat.c): every frame it
 * reads, it reads exactly as jansson does; it reads the frames clients send (and
 * especially long programs); everything else it leaves to jansson. A randomized part
 * compares it with json_loadb over thousands of generated objects. srv_json_has_nul finds
 * a NUL in any string of a frame, at any depth. srv_frame (src/server/srv_frame.c) reads a
 * request frame as the server does: flat or by jansson, its id and type checked, a NUL
 * refused. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv_frame.h"
#include "server/srv_jsonflat.h"

/* Whatever the fast reader returns equals jansson's reading; returns whether it read. */
static bool agrees(const char *text, size_t len) {
    json_t *flat = srv_json_load_flat(text, len);
    json_error_t je;
    json_t *ref = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    bool read = flat != NULL;
    if (flat) {
        cr_assert_not_null(ref, "read what jansson refuses (%s): %.*s", je.text, (int)len, text);
        cr_assert(json_equal(flat, ref), "differs from jansson: %.*s", (int)len, text);
    }
    json_decref(flat);
    json_decref(ref);
    return read;
}

static bool agrees_s(const char *text) {
    return agrees(text, strlen(text));
}

Test(jsonflat, reads_the_frames_clients_send) {
    cr_assert(agrees_s("{\"type\":\"execute\",\"id\":\"1\",\"program\":\"+edge(1, 2)\"}"));
    cr_assert(agrees_s(" { \"type\" : \"execute\" , \"program\" : \"?a(X)\\n?b(Y)\" ,"
                       " \"timeout_ms\" : 250, \"expect_revision\": 0 } \n"));
    cr_assert(agrees_s("{\"type\":\"authenticate\",\"api_key\":\"k\"}"));
    cr_assert(agrees_s("{\"type\":\"ping\"}"));
    cr_assert(agrees_s("{}"));
    cr_assert(agrees_s("{\"a\":true,\"b\":false,\"c\":null,\"d\":-0,\"e\":-123456789012345678}"));
    cr_assert(agrees_s("{\"s\":\"quote \\\" backslash \\\\ slash \\/ \\b\\f\\n\\r\\t\"}"));
    cr_assert(agrees_s("{\"s\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}"));
    cr_assert(agrees_s("{\"k\":1,\"k\":\"last wins\"}"));
    /* a 1,000-fact insert, the frame this reader exists for */
    static char big[40000];
    size_t n = (size_t)snprintf(big, sizeof big,
                                "{\"type\":\"execute\",\"id\":\"b\",\"program\":\"+event[");
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s(%d, \\\"e%d\\\")", i ? ", " : "", i, i);
    n += (size_t)snprintf(big + n, sizeof big - n, "]\"}");
    cr_assert(agrees(big, n));
}

Test(jsonflat, leaves_the_rest_to_jansson) {
    static const char *const rest[] = {
        "{\"params\":{\"x\":1}}",         /* nested object */
        "{\"expect_relations\":[\"a\"]}", /* array */
        "{\"s\":\"\\u00e9\"}",            /* \u escape */
        "{\"s\":\"nul \\u0000 inside\"}", /* NUL, allowed by JSON_ALLOW_NUL */
        "{\"n\":1.5}",
        "{\"n\":1e3}",                 /* not integers */
        "{\"n\":1234567890123456789}", /* 19 digits */
        "{\"n\":01}",
        "{\"n\":-}",             /* invalid numbers */
        "{\"s\":\"tab\there\"}", /* unescaped control character */
        "{\"s\":\"\xc3\"}",
        "{\"s\":\"\xed\xa0\x80\"}",
        "{\"s\":\"\xc0\xaf\"}", /* bad UTF-8 */
        "{\"s\":\"\\x\"}",      /* unknown escape */
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{\"a\":1",
        "{a:1}",
        "[]",
        "\"s\"",
        "",
        " ",
        "{\"a\":1} x",
        "{\"a\":tru}",
        "{\"a\":nul}",
    };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        cr_assert(!agrees_s(rest[i]), "read: %s", rest[i]);
    /* a NUL byte in the text */
    cr_assert(!agrees("{\"a\":\"x\0y\"}", 11));
}

/* Random flat objects: keys and string values from an alphabet that holds every special
 * case (quotes, backslashes with good and bad escapes, control characters, multi-byte
 * and broken UTF-8), integers around the 18-digit limit, the three words, whitespace. */
static unsigned next(unsigned long long *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(*s >> 33);
}

static void random_string(unsigned long long *seed, char *out, size_t *n) {
    static const char *const pieces[] = {
        "a",
        "Z",
        " ",
        "0",
        "+edge(1, 2)",
        "\\\"",
        "\\\\",
        "\\/",
        "\\n",
        "\\t",
        "\\u0041",
        "\\q",
        "\x01",
        "\t",
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xc3",
        "\xff",
        "\xed\xa0\x80",
        "\"",
        "\\",
    };
    out[(*n)++] = '"';
    unsigned k = next(seed) % 12;
    for (unsigned i = 0; i < k; i++) {
        /* mostly valid pieces, sometimes a breaking one */
        unsigned pick = next(seed) % 8 ? next(seed) % 11 : next(seed) % 22;
        size_t l = strlen(pieces[pick]);
        memcpy(out + *n, pieces[pick], l);
        *n += l;
    }
    out[(*n)++] = '"';
}

Test(jsonflat, agrees_with_jansson_on_random_objects) {
    unsigned long long seed = 42;
    size_t read = 0, total = 20000;
    char text[4096];
    for (size_t t = 0; t < total; t++) {
        size_t n = 0;
        text[n++] = '{';
        unsigned members = next(&seed) % 5;
        for (unsigned m = 0; m < members; m++) {
            if (m) text[n++] = ',';
            if (next(&seed) % 4 == 0) text[n++] = ' ';
            random_string(&seed, text, &n);
            text[n++] = ':';
            switch (next(&seed) % 5) {
            case 0:
            case 1:
                random_string(&seed, text, &n);
                break;
            case 2: {
                unsigned digits = 1 + next(&seed) % 20;
                if (next(&seed) % 2) text[n++] = '-';
                for (unsigned d = 0; d < digits; d++) text[n++] = (char)('0' + next(&seed) % 10);
                break;
            }
            case 3: {
                static const char *const w[] = {"true", "false", "null", "1.5", "[1]", "{}"};
                const char *x = w[next(&seed) % 6];
                memcpy(text + n, x, strlen(x));
                n += strlen(x);
                break;
            }
            default:
                memcpy(text + n, "\"v\"", 3);
                n += 3;
            }
        }
        text[n++] = '}';
        read += agrees(text, n);
    }
    /* both paths taken often */
    cr_assert(read > total / 10 && read < total - total / 10, "%zu of %zu read", read, total);
}

static bool has_nul(const char *text) {
    json_error_t je;
    json_t *v = json_loads(text, JSON_ALLOW_NUL, &je);
    cr_assert_not_null(v, "%s: %s", text, je.text);
    bool found = srv_json_has_nul(v);
    json_decref(v);
    return found;
}

Test(jsonflat, finds_a_nul_in_any_string_at_any_depth) {
    cr_assert(has_nul("{\"program\":\"?m\\u0000(1)\"}"));
    cr_assert(has_nul("{\"a\":1,\"b\":\"\\u0000\"}"));
    cr_assert(has_nul("{\"queries\":[{\"name\":\"q\",\"query\":\"?m(X)\\u0000\"}]}"));
    cr_assert(has_nul("{\"r\":[1,[true,[\"x\\u0000\"]]]}"));
    cr_assert(has_nul("[\"\\u0000\"]"));
    cr_assert_not(has_nul("{\"program\":\"?m(1)\\u0001\\u001f\",\"n\":0,\"z\":null}"));
    cr_assert_not(has_nul("{\"queries\":[{\"name\":\"q\",\"query\":\"\\u0030\"}],\"e\":{}}"));
    cr_assert_not(has_nul("{}"));
}

/* The members as proto.c reads them: by key, the last of a repeated key, each kind with
 * its value; strings decoded, their lengths exact; keys and strings kept past the first
 * kilobyte (the buffer grows); more members than SRV_FLAT_MAX are left to jansson. */
Test(jsonflat, members_by_key) {
    srv_flat f;
    const char *text = "{\"type\":\"execute\",\"id\":\"7\",\"program\":\"?a(X)\\n\\\"q\\\"\","
                       "\"timeout_ms\":250,\"neg\":-12,\"t\":true,\"f\":false,\"z\":null,"
                       "\"id\":\"last\"}";
    cr_assert(srv_flat_read(&f, text, strlen(text)));
    cr_assert_eq(f.n, 9);
    const srv_flat_member *m = srv_flat_get(&f, "program");
    cr_assert(m && m->kind == SRV_FLAT_STRING && m->len == 9);
    cr_assert_str_eq(m->str, "?a(X)\n\"q\"");
    m = srv_flat_get(&f, "id");
    cr_assert(m && m->kind == SRV_FLAT_STRING);
    cr_assert_str_eq(m->str, "last");
    m = srv_flat_get(&f, "timeout_ms");
    cr_assert(m && m->kind == SRV_FLAT_INT && m->num == 250);
    m = srv_flat_get(&f, "neg");
    cr_assert(m && m->kind == SRV_FLAT_INT && m->num == -12);
    cr_assert_eq(srv_flat_get(&f, "t")->kind, SRV_FLAT_TRUE);
    cr_assert_eq(srv_flat_get(&f, "f")->kind, SRV_FLAT_FALSE);
    cr_assert_eq(srv_flat_get(&f, "z")->kind, SRV_FLAT_NULL);
    cr_assert_null(srv_flat_get(&f, "i"));
    cr_assert_null(srv_flat_get(&f, "typ"));
    cr_assert_null(srv_flat_get(&f, "types"));
    srv_flat_free(&f);

    /* past the buffer's first kilobyte: every member still reads */
    static char big[8192];
    size_t n = (size_t)snprintf(big, sizeof big, "{");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"key%02d\":\"%0200d\"", i ? "," : "", i,
                              i);
    big[n++] = '}';
    cr_assert(srv_flat_read(&f, big, n));
    for (int i = 0; i < 20; i++) {
        char key[8], want[201];
        snprintf(key, sizeof key, "key%02d", i);
        snprintf(want, sizeof want, "%0200d", i);
        m = srv_flat_get(&f, key);
        cr_assert(m && m->len == 200, "%s", key);
        cr_assert_str_eq(m->str, want);
    }
    srv_flat_free(&f);

    n = (size_t)snprintf(big, sizeof big, "{");
    for (int i = 0; i <= SRV_FLAT_MAX; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    big[n++] = '}';
    cr_assert_not(srv_flat_read(&f, big, n), "more members than SRV_FLAT_MAX");
    cr_assert(agrees(big, n) == false);
    const char *nested = "{\"type\":\"read\",\"queries\":[]}";
    cr_assert_not(srv_flat_read(&f, nested, strlen(nested)));
}

/* ---- srv_frame: a request frame as srv_proto_message reads it ---- */

static void frame_of(srv_frame *f, const char *text) {
    srv_frame_read(f, text, strlen(text));
}

Test(frame, a_flat_frame_is_read_without_jansson) {
    srv_frame f;
    frame_of(&f,
             "{\"type\":\"execute\",\"id\":\"q1\",\"program\":\"+e(1, 2)\",\"timeout_ms\":250}");
    cr_assert(f.is_flat);
    cr_assert_null(f.root);
    cr_assert_str_empty(f.bad);
    cr_assert_str_eq(f.type, "execute");
    cr_assert_str_eq(f.id, "q1");
    size_t n = 0;
    cr_assert_str_eq(srv_frame_str(&f, "program", &n), "+e(1, 2)");
    cr_assert_eq(n, 8);
    cr_assert(srv_frame_has(&f, "timeout_ms"));
    cr_assert_not(srv_frame_has(&f, "params"));
    cr_assert_null(srv_frame_str(&f, "timeout_ms", NULL)); /* not a string */
    int64_t ms = -1;
    cr_assert(srv_frame_timeout(&f, &ms));
    cr_assert_eq(ms, 250);
    json_t *o = srv_frame_json(&f); /* made from the flat reading */
    cr_assert_eq(json_integer_value(json_object_get(o, "timeout_ms")), 250);
    srv_frame_free(&f);
}

Test(frame, a_nested_frame_is_read_by_jansson) {
    srv_frame f;
    frame_of(&f,
             "{\"type\":\"read\",\"id\":\"r\",\"queries\":[{\"name\":\"a\",\"query\":\"?a(X)\"}],"
             "\"timeout_ms\":-1}");
    cr_assert_not(f.is_flat);
    cr_assert_str_empty(f.bad);
    cr_assert_str_eq(f.type, "read");
    cr_assert_str_eq(f.id, "r");
    cr_assert(json_is_array(json_object_get(srv_frame_json(&f), "queries")));
    int64_t ms;
    cr_assert_not(srv_frame_timeout(&f, &ms)); /* below 0 */
    srv_frame_free(&f);
}

Test(frame, what_is_refused_and_why) {
    static const struct {
        const char *text, *bad, *id;
    } cases[] = {
        {"[1, 2]", "Invalid message format: not a JSON object", NULL},
        {"{\"id\":\"x\"}", "Invalid message format: missing type", "x"},
        {"{\"type\":\"ping\",\"id\":\"\"}",
         "Invalid message format: id must be a string of 1 to 64 bytes", NULL},
        {"{\"type\":\"ping\",\"id\":7}",
         "Invalid message format: id must be a string of 1 to 64 bytes", NULL},
        {"{\"type\":\"ping\",\"id\":\"a\\u0000b\"}",
         "Invalid message format: id must be a string of 1 to 64 bytes", NULL},
        {"{\"type\":\"execute\",\"id\":\"n\",\"program\":\"+e(\\u0000)\"}",
         "Invalid message format: strings may not contain the NUL character (\\u0000)", "n"},
        {"{\"type\":\"read\",\"queries\":[{\"name\":\"a\\u0000\"}]}",
         "Invalid message format: strings may not contain the NUL character (\\u0000)", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        srv_frame f;
        frame_of(&f, cases[i].text);
        cr_assert_str_eq(f.bad, cases[i].bad, "%s", cases[i].text);
        if (cases[i].id)
            cr_assert_str_eq(f.id, cases[i].id, "%s", cases[i].text);
        else
            cr_assert_null(f.id, "%s", cases[i].text);
        cr_assert_eq(f.refused_nul, strstr(cases[i].bad, "NUL") != NULL, "%s", cases[i].text);
        srv_frame_free(&f);
    }
    /* an id of 64 bytes is taken, one of 65 is not */
    char text[200];
    snprintf(text, sizeof text, "{\"type\":\"ping\",\"id\":\"%064d\"}", 0);
    srv_frame f;
    frame_of(&f, text);
    cr_assert_str_empty(f.bad);
    cr_assert_eq(strlen(f.id), 64);
    srv_frame_free(&f);
    snprintf(text, sizeof text, "{\"type\":\"ping\",\"id\":\"%065d\"}", 0);
    frame_of(&f, text);
    cr_assert_str_eq(f.bad, "Invalid message format: id must be a string of 1 to 64 bytes");
    srv_frame_free(&f);
}

Test(frame, a_text_that_is_not_json_keeps_the_id_it_tells) {
    srv_frame f;
    frame_of(&f, "{\"id\":\"q7\",\"type\":\"execute\",\"program\":");
    cr_assert_eq(strncmp(f.bad, "Invalid message format: ", 24), 0, "%s", f.bad);
    cr_assert_gt(strlen(f.bad), 24);
    cr_assert_str_eq(f.id, "q7");
    cr_assert_null(f.type);
    srv_frame_free(&f);
    frame_of(&f, "not json");
    cr_assert_null(f.id);
    srv_frame_free(&f);
}

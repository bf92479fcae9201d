/* The command line's bounded JSON reader (cli/jsonr.c): values, escapes,
 * UTF-8, numbers, limits, and refusals of malformed input (no device needed). */
#include "jsonr.h"
#include "t.h"

#include <string.h>

static int parses(const char *s)
{
    jr_doc d;
    int rc = jr_parse(&d, s, strlen(s), NULL);
    jr_free(&d);
    return rc == 0;
}

int main(void)
{
    jr_doc d;
    const char *req = "{\"requestId\": 12, \"base\": \"a b.png\", \"compare\": \"c\\u00e9\\ud83d\\ude00.png\", "
                      "\"output\": \"d\\\\e\\\"f\\n\", \"options\": {\"threshold\": 0.05, \"antialiasing\": true, "
                      "\"ignoreRegions\": [{\"x1\": 0, \"y1\": 1, \"x2\": 2, \"y2\": 3}, {}], \"x\": null, "
                      "\"neg\": -1.5e2, \"big\": 123456789012345678901234567890}}";
    CHECK(jr_parse(&d, req, strlen(req), NULL) == 0, "%s", d.err);
    const jr_val *r = d.root;
    CHECK(r && r->type == JR_OBJECT && r->n == 5, "root");
    const jr_val *id = jr_get(r, "requestId");
    CHECK(id && id->type == JR_NUMBER && id->is_int && id->i == 12, "requestId");
    CHECK(!strcmp(jr_get(r, "base")->str, "a b.png"), "plain string");
    CHECK(!strcmp(jr_get(r, "compare")->str, "c\xc3\xa9\xf0\x9f\x98\x80.png"), "\\u escapes and a surrogate pair");
    CHECK(!strcmp(jr_get(r, "output")->str, "d\\e\"f\n"), "escapes");
    const jr_val *o = jr_get(r, "options");
    CHECK(o && o->type == JR_OBJECT, "options");
    CHECK(jr_get(o, "threshold")->num == 0.05 && !jr_get(o, "threshold")->is_int, "fraction");
    CHECK(jr_get(o, "antialiasing")->type == JR_TRUE, "true");
    CHECK(jr_get(o, "x")->type == JR_NULL, "null");
    CHECK(jr_get(o, "neg")->num == -150.0, "exponent");
    CHECK(jr_get(o, "big")->type == JR_NUMBER && !jr_get(o, "big")->is_int && jr_get(o, "big")->num > 1e29,
          "an integer over 64 bits is a number, not an int");
    const jr_val *regs = jr_get(o, "ignoreRegions");
    CHECK(regs && regs->type == JR_ARRAY && regs->n == 2, "array");
    CHECK(regs->child && jr_get(regs->child, "y2")->i == 3, "array element");
    CHECK(regs->child->next && regs->child->next->type == JR_OBJECT && regs->child->next->n == 0, "empty object");
    CHECK(!jr_get(o, "missing") && !jr_get(regs, "x1"), "absent members, non-objects");
    jr_free(&d);

    /* the last of duplicate names; \u0000 inside a string (len says so) */
    const char *dup = "{\"a\":1,\"a\":2,\"s\":\"x\\u0000y\"}";
    CHECK(jr_parse(&d, dup, strlen(dup), NULL) == 0 && jr_get(d.root, "a")->i == 2, "duplicates: the last");
    CHECK(jr_get(d.root, "s")->len == 3 && strlen(jr_get(d.root, "s")->str) == 1, "embedded NUL");
    jr_free(&d);

    /* whole-document values and whitespace */
    CHECK(parses(" [1, -0, 0.5e-3, true, false, null, \"\", [], {}] \r\n"), "a mixed array");
    CHECK(parses("\"\xe2\x82\xac\""), "UTF-8 in a string");
    CHECK(parses("-12"), "a bare number");

    /* refusals */
    static const char *const bad[] = {
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.", ".5", "-", "1e", "+1",
        "tru", "nul", "\"abc", "\"a\\x\"", "\"\\u12g4\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\ud800\\u0041\"",
        "\"a\tb\"", "\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"", "1 2", "[1] x", "{\"a\":1}}",
        "// c\n1", "NaN", "Infinity", "1e999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = jr_parse(&d, bad[i], strlen(bad[i]), NULL);
        CHECK(rc == -1 && d.err[0], "refused: '%s'", bad[i]);
        jr_free(&d);
    }
    /* embedded NUL bytes in the text are not whitespace */
    CHECK(jr_parse(&d, "1\0", 2, NULL) == -1, "NUL after the value");
    jr_free(&d);
    /* the text is not read past len */
    CHECK(jr_parse(&d, "[1,2]xyz", 5, NULL) == 0 && d.root->n == 2, "len bounds the text");
    jr_free(&d);

    /* limits: depth and value count */
    char deep[200];
    memset(deep, '[', 40);
    memset(deep + 40, ']', 40);
    deep[80] = 0;
    jr_limits lim = { .max_depth = 16, .max_values = 100 };
    CHECK(jr_parse(&d, deep, 80, &lim) == -1 && strstr(d.err, "deeper"), "depth limit: %s", d.err);
    jr_free(&d);
    CHECK(jr_parse(&d, deep + 24, 32, &lim) == 0, "16 deep is fine: %s", d.err);
    jr_free(&d);
    static char many[4000];
    size_t n = 0;
    many[n++] = '[';
    for (int i = 0; i < 150; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "%s%d", i ? "," : "", i);
    many[n++] = ']';
    CHECK(jr_parse(&d, many, n, &lim) == -1 && strstr(d.err, "values"), "value limit: %s", d.err);
    jr_free(&d);
    lim.max_values = 1000;
    CHECK(jr_parse(&d, many, n, &lim) == 0 && d.root->n == 150, "150 values under 1000");
    jr_free(&d);
    return t_done("test_jsonr");
}

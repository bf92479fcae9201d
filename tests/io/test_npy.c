/* .npy output: headers (magic, version, dict, 64-byte alignment), payloads of
 * every sample format, vki_npy_save's shapes, and its errors (nothing written).
 * No device. */
#include "io/io_priv.h"
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Checks a .npy file: magic, version 1.0, header text (dict + spaces + '\n'), 64-byte
 * alignment and payload. */
static void check_npy(const char *path, const char *want_dict, const void *data, size_t nbytes)
{
    size_t len;
    unsigned char *b = read_all(path, &len);
    CHECK(b && len >= 10, "%s: unreadable", path);
    if (!b || len < 10) {
        free(b);
        return;
    }
    CHECK(!memcmp(b, "\x93NUMPY", 6), "%s: magic", path);
    CHECK(b[6] == 1 && b[7] == 0, "%s: version %d.%d", path, b[6], b[7]);
    size_t hl = b[8] | (size_t)b[9] << 8;
    CHECK((10 + hl) % 64 == 0, "%s: data offset %zu not 64-aligned", path, 10 + hl);
    CHECK(len == 10 + hl + nbytes, "%s: size %zu, want %zu", path, len, 10 + hl + nbytes);
    if (len == 10 + hl + nbytes) {
        size_t dl = strlen(want_dict);
        CHECK(hl > dl && !memcmp(b + 10, want_dict, dl), "%s: header '%.*s', want '%s'", path, (int)(hl < 200 ? hl : 200),
              (const char *)b + 10, want_dict);
        int pad = 1;
        for (size_t i = 10 + dl; i < 10 + hl - 1; i++)
            pad &= b[i] == ' ';
        CHECK(pad && b[10 + hl - 1] == '\n', "%s: header padding", path);
        CHECK(!nbytes || !memcmp(b + 10 + hl, data, nbytes), "%s: payload differs", path);
    }
    free(b);
}

static void test_npy(void)
{
    vkimg_err e;
    vkimg_image im;
    char dict[256];
    static const struct {
        vkimg_fmt fmt;
        int c;
        const char *descr;
    } cases[] = {
        { VKIMG_U8, 1, "|u1" },  { VKIMG_U16, 3, "<u2" }, { VKIMG_F32, 4, "<f4" },
        { VKIMG_U32, 2, "<u4" }, { VKIMG_U64, 1, "<u8" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_image(&im, 13, 7, cases[i].c, cases[i].fmt, 1, 7 + i);
        char name[32];
        snprintf(name, sizeof name, "a%zu.npy", i);
        CHECK(vkimg_save(P(name), &im, NULL, &e) == 0, "save %s: %s", name, e.msg);
        if (cases[i].c == 1)
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (7, 13), }", cases[i].descr);
        else
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (7, 13, %d), }",
                     cases[i].descr, cases[i].c);
        check_npy(P(name), dict, im.data, vkimg_image_bytes(&im));
        CHECK(!strcmp(vki_npy_descr(cases[i].fmt), cases[i].descr), "descr of %s", vkimg_fmt_name(cases[i].fmt));
        vkimg_image_free(&im);
    }

    /* vki_npy_save directly: 1-d (trailing comma), 0-d, big shapes */
    uint64_t v[5] = { 1, 2, 3, 4, 0xffffffffffffffffull };
    size_t shape[4] = { 5 };
    CHECK(vki_npy_save(P("v.npy"), "<u8", 1, shape, v, sizeof v, &e) == 0, "1-d: %s", e.msg);
    check_npy(P("v.npy"), "{'descr': '<u8', 'fortran_order': False, 'shape': (5,), }", v, sizeof v);
    CHECK(vki_npy_save(P("s.npy"), "<u8", 0, NULL, v, 8, &e) == 0, "0-d: %s", e.msg);
    check_npy(P("s.npy"), "{'descr': '<u8', 'fortran_order': False, 'shape': (), }", v, 8);
    size_t sh4[4] = { 1, 1, 5, 1 };
    CHECK(vki_npy_save(P("d4.npy"), "<f8", 4, sh4, v, sizeof v, &e) == 0, "4-d: %s", e.msg);
    check_npy(P("d4.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 5, 1), }", v, sizeof v);

    /* errors: size mismatch, overflowing shape, bad dtype: nothing written */
    shape[0] = 4;
    int rc = vki_npy_save(P("bad.npy"), "<u8", 1, shape, v, sizeof v, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "32 bytes, got 40", NULL, 0);
    size_t huge[2] = { SIZE_MAX / 2, 4 };
    rc = vki_npy_save(P("bad.npy"), "|u1", 2, huge, v, sizeof v, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "overflow", NULL, 0);
    rc = vki_npy_save(P("bad.npy"), "u8", 1, shape, v, 32, &e);
    FAILED(g_dir, P("bad.npy"), rc, VKIMG_E_RUNTIME, &e, "dtype", NULL, 0);
    rc = vki_npy_save(P("bad.npy"), "<u8", 1, shape, v, 32, &e);
    CHECK(rc == 0, "4 x u8: %s", e.msg);
}

int main(void)
{
    static void (*const tests[])(void) = { test_npy };
    return io_main("test_npy", tests, 1);
}

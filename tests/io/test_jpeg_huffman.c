/* The device's Huffman decoding of JPEG scans (vkimg_load_opts.jpeg_entropy,
 * src/io/jpeg_entropy.c, shaders/codec/jpeg_huff.comp and jpeg_scan.comp), with
 * libjpeg-turbo as the independent reference:
 *  - baseline files (TurboJPEG's: 4:4:4, 4:2:2, 4:2:0, gray; libjpeg's with restart
 *    intervals of 1, 5 and a row of MCUs, and with optimized Huffman tables) of 1x1,
 *    1xN, Nx1, prime and larger sizes, smooth, noisy, random and 0/255
 *    checkerboards, qualities 30..100: taken by the device (coded->entropy) and
 *    decoded to exactly tjDecompress2's pixels (the same coefficients, then the
 *    same transforms), with subsequences of 8, 61 and 1024 bits (many
 *    subsequences for small files: synchronization is exercised) and 2 or 6
 *    rounds; where 2 rounds are too few the run says so (VKIMG_E_AGAIN), never
 *    a wrong image;
 *  - files the device does not take (progressive, arithmetic-coded is not written
 *    by TurboJPEG: progressive stands for it) load as coefficients, as before;
 *  - damage: each file with a byte of its scan changed, cut short, or with bytes
 *    added before EOI: where libjpeg (jpeg_read_coefficients, warnings as errors)
 *    decodes it, the device gives the image of its coefficients or VKIMG_E_AGAIN
 *    (libjpeg-turbo's fast path takes a code that is none as a 0 and says
 *    nothing; the device says so); where libjpeg refuses it, the device never
 *    gives an image (VKIMG_E_AGAIN, or the load refuses it). */
#include "core/coded.h"
#include "gpu_harness.h"
#include "io_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <turbojpeg.h>

/* A JPEG of im written by libjpeg: h x v luma sampling (1x1, 2x1, 2x2; gray for
 * 1 channel), restart interval `ri` MCUs (0: none; < 0: -ri rows of MCUs),
 * optimized Huffman tables or the standard ones, progressive or not. malloc()ed. */
static unsigned char *lj_encode(const vkimg_image *im, int hs, int vs, int q, int ri, bool optimize, bool prog,
                                unsigned long *n)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    unsigned char *mem = NULL;
    *n = 0;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, n);
    c.image_width = (JDIMENSION)im->w;
    c.image_height = (JDIMENSION)im->h;
    c.input_components = im->c;
    c.in_color_space = im->c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, q, TRUE);
    if (im->c == 3) {
        c.comp_info[0].h_samp_factor = hs;
        c.comp_info[0].v_samp_factor = vs;
    }
    if (ri > 0)
        c.restart_interval = (unsigned)ri;
    else if (ri < 0)
        c.restart_in_rows = -ri;
    c.optimize_coding = optimize;
    if (prog)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    const unsigned char *d = im->data;
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(d + (size_t)c.next_scanline * im->w * im->c);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return mem;
}

/* TurboJPEG's decode (warnings are errors): 0, or -1 where it refuses the file */
static int tj_decode(const unsigned char *jpg, unsigned long n, vkimg_image *out)
{
    tjhandle h = tjInitDecompress();
    int w, ht, ss, cs, rc = -1;
    memset(out, 0, sizeof *out);
    if (!tjDecompressHeader3(h, jpg, n, &w, &ht, &ss, &cs)) {
        const int c = ss == TJSAMP_GRAY ? 1 : 3;
        vkimg_err e;
        if (!vkimg_image_alloc(out, w, ht, c, VKIMG_U8, &e)) {
            rc = tjDecompress2(h, jpg, n, out->data, w, 0, ht, c == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_STOPONWARNING);
            if (rc)
                vkimg_image_free(out);
        }
    }
    tjDestroy(h);
    return rc ? -1 : 0;
}

static bool same(const vkimg_image *a, const vkimg_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && !memcmp(a->data, b->data, vkimg_image_bytes(a));
}

static vkimg_pipeline *copy_p;
static int taken, decoded, again;

/* The device's decode of a file (with `entropy`, its Huffman codes too): 1 taken
 * and decoded (*out), 0 not taken by the device (coefficients or pixels; *out
 * from them), -1 VKIMG_E_AGAIN, -2 refused at load, -3 another failure (*e). */
static int device_decode(vkimg_ctx *ctx, const unsigned char *jpg, unsigned long n, bool entropy_on, vkimg_image *out,
                         vkimg_err *e)
{
    vkimg_image im;
    memset(out, 0, sizeof *out);
    vkimg_load_opts lo = { .jpeg_coded = true, .jpeg_entropy = entropy_on };
    if (vkimg_load_memory(jpg, n, "t.jpg", &lo, &im, e))
        return -2;
    const bool entropy = im.coded && im.coded->entropy;
    int rc = vkimg_run(ctx, copy_p, &im, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, out, e);
    vkimg_image_free(&im);
    if (rc == VKIMG_E_AGAIN && entropy)
        return -1;
    return rc ? -3 : entropy;
}

/* One file: taken by the device (where `want_taken`) and decoded to TurboJPEG's pixels */
static void check_file(vkimg_ctx *ctx, const unsigned char *jpg, unsigned long n, bool want_taken, bool may_again)
{
    vkimg_image ref, out;
    vkimg_err e;
    CHECK(tj_decode(jpg, n, &ref) == 0, "%s: TurboJPEG refuses the file", cur_case);
    const int rc = device_decode(ctx, jpg, n, true, &out, &e);
    if (rc == -1 && may_again) {
        again++;
    } else {
        CHECK(rc >= 0, "%s: device decode failed (%d): %s", cur_case, rc, e.msg);
        CHECK(rc == want_taken, "%s: taken by the device %d, want %d", cur_case, rc, want_taken);
        CHECK(rc < 0 || same(&out, &ref), "%s: %dx%dx%d differs from TurboJPEG's %dx%dx%d", cur_case, out.w, out.h,
              out.c, ref.w, ref.h, ref.c);
        taken += rc == 1;
        decoded += rc >= 0;
    }
    vkimg_image_free(&out);
    vkimg_image_free(&ref);
}

static void test_files(vkimg_ctx *ctx)
{
    static const int sz[][2] = { { 1, 1 }, { 1, 23 }, { 23, 1 }, { 8, 8 }, { 17, 9 }, { 33, 31 }, { 131, 67 },
                                 { 300, 200 } };
    static const int tsamp[] = { TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_GRAY };
    static const char *const sname[] = { "444", "422", "420", "gray" };
    static const char *const sbits[] = { "8", "61", "1024" };
    for (size_t bi = 0; bi < sizeof sbits / sizeof sbits[0]; bi++) {
        setenv("VKIMG_JPEG_SYNC_BITS", sbits[bi], 1);
        setenv("VKIMG_JPEG_SYNC_ROUNDS", bi < 2 ? "64" : "6", 1); /* (small subsequences: many workgroups to cross) */
        for (size_t si = 0; si < sizeof sz / sizeof sz[0] - (bi == 0); si++) /* (8-bit: not the largest) */
            for (size_t ss = 0; ss < 4; ss++)
                for (int kind = 0; kind < 4; kind++) {
                    const int w = sz[si][0], h = sz[si][1], q = kind == 3 ? 100 : kind == 2 ? 95 : kind ? 75 : 30;
                    vkimg_image src;
                    jpeg_image(&src, w, h, tsamp[ss] == TJSAMP_GRAY ? 1 : 3, kind, 11 + si * 7 + ss * 3 + (size_t)kind);
                    /* TurboJPEG's baseline file */
                    snprintf(cur_case, sizeof cur_case, "%dx%d %s kind %d q%d, %s-bit subsequences (TurboJPEG)", w,
                             h, sname[ss], kind, q, sbits[bi]);
                    tjhandle th = tjInitCompress();
                    unsigned char *jpg = NULL;
                    unsigned long n = 0;
                    CHECK(!tjCompress2(th, src.data, w, 0, h, src.c == 1 ? TJPF_GRAY : TJPF_RGB, &jpg, &n, tsamp[ss],
                                       q, 0),
                          "%s: tjCompress2", cur_case);
                    tjDestroy(th);
                    /* (a 0/255 checkerboard at q100 has no EOB: every block's 63 AC codes end it, and
                     * a decoder a few coefficients out never finds step in such periodic data; with
                     * subsequences of a few bits the rounds may not reach across: the host's then) */
                    const bool may_again = kind == 3 && bi < 2;
                    check_file(ctx, jpg, n, true, may_again);
                    tjFree(jpg);
                    /* libjpeg's with restart intervals and optimized tables */
                    const int ris[] = { 1, 5, -1 };
                    for (int r = 0; r < 3 && (kind == 1 || kind == 2); r++) {
                        const int hs = ss == 0 || ss == 3 ? 1 : 2, vs = ss == 2 ? 2 : 1;
                        snprintf(cur_case, sizeof cur_case,
                                 "%dx%d %s kind %d q%d restart %d%s, %s-bit subsequences (libjpeg)", w, h, sname[ss],
                                 kind, q, ris[r] < 0 ? -ris[r] : ris[r], ris[r] < 0 ? " row" : "", sbits[bi]);
                        jpg = lj_encode(&src, hs, vs, q, ris[r], r == 1, false, &n);
                        check_file(ctx, jpg, n, true, may_again);
                        free(jpg);
                    }
                    vkimg_image_free(&src);
                }
    }
    unsetenv("VKIMG_JPEG_SYNC_BITS");
    unsetenv("VKIMG_JPEG_SYNC_ROUNDS");
    printf("files: %d decoded, %d by the device; %d checkerboards not synchronized (VKIMG_E_AGAIN)\n", decoded,
           taken, again);
    CHECK(again < 12, "%d checkerboards not synchronized", again);
}

/* Progressive files are the host's (coefficients); too few rounds say so */
static void test_not_taken(vkimg_ctx *ctx)
{
    vkimg_image src;
    jpeg_image(&src, 97, 61, 3, 1, 3);
    unsigned long n;
    snprintf(cur_case, sizeof cur_case, "progressive 97x61");
    unsigned char *jpg = lj_encode(&src, 2, 2, 80, 0, false, true, &n);
    check_file(ctx, jpg, n, false, false);
    free(jpg);
    /* 2 rounds, 8-bit subsequences: a workgroup's first subsequence may not find step in one round */
    setenv("VKIMG_JPEG_SYNC_BITS", "8", 1);
    setenv("VKIMG_JPEG_SYNC_ROUNDS", "2", 1);
    const int before = again;
    for (int kind = 0; kind < 4; kind++) {
        vkimg_image big;
        jpeg_image(&big, 400, 300, 3, kind, 9 + (unsigned)kind);
        snprintf(cur_case, sizeof cur_case, "400x300 kind %d, 2 rounds of 8-bit subsequences", kind);
        jpg = lj_encode(&big, 1, 1, 90, 0, false, false, &n);
        check_file(ctx, jpg, n, true, true);
        free(jpg);
        vkimg_image_free(&big);
    }
    printf("2 rounds: %d of 4 files not synchronized (VKIMG_E_AGAIN)\n", again - before);
    unsetenv("VKIMG_JPEG_SYNC_ROUNDS");
    unsetenv("VKIMG_JPEG_SYNC_BITS");
    vkimg_image_free(&src);
}

/* The entropy-coded data's first and last byte (after SOS, before EOI) */
static void scan_span(const unsigned char *j, unsigned long n, unsigned long *a, unsigned long *b)
{
    unsigned long at = 2;
    *a = *b = 0;
    while (at + 4 <= n && j[at] == 0xff) {
        const unsigned long len = (unsigned long)j[at + 2] << 8 | j[at + 3];
        if (j[at + 1] == 0xda) {
            *a = at + 2 + len;
            *b = n - 2;
            return;
        }
        at += 2 + len;
    }
}

static void test_damage(vkimg_ctx *ctx)
{
    unsigned long long s = 12345;
    int tj_ok = 0, tj_refused = 0, dev_same = 0, dev_again = 0;
    for (int f = 0; f < 6; f++) {
        vkimg_image src;
        jpeg_image(&src, 64 + 7 * f, 48 + 5 * f, f == 5 ? 1 : 3, f % 3, 100 + (unsigned)f);
        unsigned long n;
        unsigned char *jpg = lj_encode(&src, f % 2 ? 2 : 1, f == 2 ? 2 : 1, 85, f == 4 ? 3 : 0, f == 3, false, &n);
        unsigned long a, b;
        scan_span(jpg, n, &a, &b);
        CHECK(a > 0 && b > a, "file %d: no scan", f);
        for (int t = 0; t < 60 && b > a; t++) {
            unsigned char *d = malloc(n + 16);
            memcpy(d, jpg, n);
            unsigned long dn = n;
            const int how = t % 3;
            if (how == 0) { /* a byte of the scan changed */
                const unsigned long at = a + t_rand(&s) % (b - a);
                d[at] = (unsigned char)(d[at] ^ (1u << (t_rand(&s) % 8)));
            } else if (how == 1) { /* cut short, EOI after */
                dn = a + t_rand(&s) % (b - a);
                d[dn++] = 0xff;
                d[dn++] = 0xd9;
            } else { /* bytes before EOI */
                dn = b;
                const int k = 1 + (int)(t_rand(&s) % 3);
                for (int i = 0; i < k; i++)
                    d[dn++] = (unsigned char)(t_rand(&s) % 255);
                d[dn++] = 0xff;
                d[dn++] = 0xd9;
            }
            snprintf(cur_case, sizeof cur_case, "file %d damage %d (%s)", f, t,
                     how == 0 ? "a byte changed" : how == 1 ? "cut short" : "bytes added");
            /* the reference: libjpeg's coefficients (jpeg_read_coefficients, warnings as errors), the
             * same transforms on the device (damaged coefficients leave TurboJPEG's SIMD IDCT's range, and
             * its pixels differ from the C IDCT's the device has) */
            vkimg_image ref, out;
            vkimg_err e;
            const int tr = device_decode(ctx, d, dn, false, &ref, &e);
            const int rc = device_decode(ctx, d, dn, true, &out, &e);
            if (tr == 0) {
                tj_ok++;
                CHECK(rc == -1 || (rc >= 0 && same(&out, &ref)), "%s: libjpeg decodes it, the device gives %d (%s)",
                      cur_case, rc, rc == -3 ? e.msg : "");
                dev_same += rc >= 0;
            } else {
                tj_refused++;
                CHECK(rc < 0 && rc != -3, "%s: libjpeg refuses it, the device gives %d (%s)", cur_case, rc,
                      rc == -3 ? e.msg : "");
            }
            dev_again += rc == -1;
            vkimg_image_free(&ref);
            vkimg_image_free(&out);
            free(d);
        }
        free(jpg);
        vkimg_image_free(&src);
    }
    printf("damage: libjpeg decoded %d (the device the same %d), refused %d; VKIMG_E_AGAIN %d\n", tj_ok, dev_same,
           tj_refused, dev_again);
}

int main(void)
{
    vkimg_err e;
    copy_p = vkimg_pipeline_parse("copy", &e);
    if (!copy_p)
        return 1;
    static const gh_suite suites[] = { { "files", test_files }, { "not_taken", test_not_taken },
                                       { "damage", test_damage } };
    int rc = gh_main("test_jpeg_huffman", suites, sizeof suites / sizeof suites[0]);
    vkimg_pipeline_free(copy_p);
    return rc;
}

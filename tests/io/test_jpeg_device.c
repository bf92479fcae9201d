/* The JPEG codec's transform stages on the device (vkimg_load_opts.jpeg_coded,
 * vkimg_run_opts.jpeg_quality), against TurboJPEG as the independent reference:
 *  - decode: files TurboJPEG writes (4:4:4, 4:2:2, 4:2:0, gray; baseline and
 *    progressive; 1x1, 1xN, Nx1, primes, larger than a block row; smooth, noisy,
 *    and saturated images whose IDCT outputs leave 0..255) decoded coded and
 *    finished on the device, within 1 LSB of tjDecompress2 (the maximum is
 *    printed; it has been 0); 4:4:0 and CMYK files decode as before (not coded);
 *  - encode: pixels coded on the device and entropy-coded by libjpeg give a file
 *    no larger and no further from the source (PSNR) than TurboJPEG's at the same
 *    quality, for 1-4 channels and qualities either side of the 4:4:4 threshold
 *    and of TurboJPEG's switch to the accurate DCT (96); in fact byte-identical,
 *    and that is asserted too;
 *  - a pipeline between the two (decode, blur, encode) equals the same pipeline
 *    run on TurboJPEG's pixels and encoded by TurboJPEG;
 *  - sampling factors TurboJPEG has no name for, against libjpeg's decode. */
#include "core/coded.h"
#include "io/io_priv.h"
#include "gpu_harness.h"
#include "io_util.h"
#include "lj_util.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <turbojpeg.h>

static char tmpdir[64];

static const int samps[] = { TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_GRAY, TJSAMP_440 };
static const char *const samp_name[] = { "444", "422", "420", "gray", "440" };

/* TurboJPEG's file of im (RGB or gray) */
static unsigned char *tj_encode(const vkimg_image *im, int samp, int q, int flags, unsigned long *n)
{
    tjhandle h = tjInitCompress();
    unsigned char *buf = NULL;
    *n = 0;
    int rc = tjCompress2(h, im->data, im->w, 0, im->h, im->c == 1 ? TJPF_GRAY : TJPF_RGB, &buf, n, samp, q, flags);
    CHECK(rc == 0, "tjCompress2: %s", tjGetErrorStr2(h));
    tjDestroy(h);
    return buf;
}

/* TurboJPEG's decode of a file (3 channels, 1 for gray) */
static void tj_decode(const unsigned char *jpg, unsigned long n, vkimg_image *out)
{
    tjhandle h = tjInitDecompress();
    int w, ht, ss, cs;
    memset(out, 0, sizeof *out);
    if (tjDecompressHeader3(h, jpg, n, &w, &ht, &ss, &cs)) {
        CHECK(0, "tjDecompressHeader3: %s", tjGetErrorStr2(h));
        tjDestroy(h);
        return;
    }
    vkimg_err e;
    const int c = ss == TJSAMP_GRAY ? 1 : 3;
    CHECK(vkimg_image_alloc(out, w, ht, c, VKIMG_U8, &e) == 0, "%s", e.msg);
    CHECK(tjDecompress2(h, jpg, n, out->data, w, 0, ht, c == 1 ? TJPF_GRAY : TJPF_RGB, 0) == 0,
          "tjDecompress2: %s", tjGetErrorStr2(h));
    tjDestroy(h);
}

static int max_diff(const vkimg_image *a, const vkimg_image *b)
{
    if (a->w != b->w || a->h != b->h || a->c != b->c)
        return 1000;
    int m = 0;
    const unsigned char *p = a->data, *q = b->data;
    for (size_t i = 0; i < (size_t)a->w * a->h * a->c; i++) {
        int d = abs((int)p[i] - (int)q[i]);
        m = d > m ? d : m;
    }
    return m;
}

static int worst_decode;

static void test_decode(vkimg_ctx *ctx)
{
    static const int sz[][2] = { { 1, 1 }, { 1, 13 }, { 13, 1 }, { 2, 2 }, { 3, 5 }, { 17, 9 }, { 33, 31 },
                                 { 70, 45 }, { 131, 67 }, { 257, 19 } };
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse("copy", &e);
    CHECK(p != NULL, "parse: %s", e.msg);
    int coded = 0, cases = 0;
    for (size_t si = 0; si < sizeof sz / sizeof sz[0]; si++)
        for (size_t ss = 0; ss < sizeof samps / sizeof samps[0]; ss++)
            for (int prog = 0; prog <= 1; prog++)
                for (int kind = 0; kind < 4; kind++) {
                    const int w = sz[si][0], h = sz[si][1], q = kind == 3 ? 100 : kind == 2 ? 95 : 80;
                    snprintf(cur_case, sizeof cur_case, "decode %dx%d %s %s kind %d q%d", w, h, samp_name[ss],
                             prog ? "progressive" : "baseline", kind, q);
                    vkimg_image src, ref, im, out;
                    jpeg_image(&src, w, h, samps[ss] == TJSAMP_GRAY ? 1 : 3, kind, 77 + si * 13 + ss * 5 + kind);
                    unsigned long n;
                    unsigned char *jpg = tj_encode(&src, samps[ss], q, prog ? TJFLAG_PROGRESSIVE : 0, &n);
                    tj_decode(jpg, n, &ref);
                    vkimg_load_opts lo = { .jpeg_coded = true };
                    int rc = vkimg_load_memory(jpg, n, "t.jpg", &lo, &im, &e);
                    CHECK(rc == 0, "%s: load: %s", cur_case, e.msg);
                    const bool want_coded = samps[ss] != TJSAMP_440;
                    CHECK(!rc && (im.coded != NULL) == want_coded, "%s: coded %d", cur_case, im.coded != NULL);
                    coded += im.coded != NULL;
                    cases++;
                    if (!rc) {
                        rc = vkimg_run(ctx, p, &im, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &out, &e);
                        CHECK(rc == 0, "%s: run: %s", cur_case, e.msg);
                        if (!rc) {
                            const int d = max_diff(&out, &ref);
                            worst_decode = d > worst_decode ? d : worst_decode;
                            CHECK(d <= 1, "%s: %dx%dx%d against TurboJPEG's %dx%dx%d: max difference %d", cur_case,
                                  out.w, out.h, out.c, ref.w, ref.h, ref.c, d);
                            vkimg_image_free(&out);
                        }
                    }
                    vkimg_image_free(&im);
                    vkimg_image_free(&ref);
                    vkimg_image_free(&src);
                    tjFree(jpg);
                }
    printf("decode: %d of %d files coded, max difference from TurboJPEG %d\n", coded, cases, worst_decode);
    vkimg_pipeline_free(p);
}

/* Sampling factors TurboJPEG has no name for (libjpeg writes and reads them;
 * the loader decodes them through libjpeg where they are not coded): chroma
 * components subsampled unlike each other are coded when each one is full
 * size, h2v1 or h2v2 (coded_decode), within 1 LSB of libjpeg's decode; 4:1:0
 * (Y 4x2) and a v-only chroma (4:4:0 alike) decode on the host as before. */
static void test_sampling(vkimg_ctx *ctx)
{
    static const struct {
        int hv[3];
        bool coded;
    } cases[] = { { { 0x22, 0x12, 0x11 }, true },  { { 0x22, 0x11, 0x12 }, true }, { { 0x21, 0x11, 0x21 }, true },
                  { { 0x22, 0x21, 0x11 }, false }, { { 0x42, 0x11, 0x11 }, false } };
    static const int sz[][2] = { { 1, 1 }, { 13, 1 }, { 1, 13 }, { 17, 9 }, { 70, 45 }, { 257, 19 } };
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse("copy", &e);
    CHECK(p != NULL, "parse: %s", e.msg);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t si = 0; si < sizeof sz / sizeof sz[0]; si++)
            for (int prog = 0; prog <= 1; prog++) {
                const int *hv = cases[ci].hv;
                snprintf(cur_case, sizeof cur_case, "sampling %x %x %x %dx%d %s", hv[0], hv[1], hv[2], sz[si][0],
                         sz[si][1], prog ? "progressive" : "baseline");
                vkimg_image src, ref, im, out;
                jpeg_image(&src, sz[si][0], sz[si][1], 3, (int)si % 3, 500 + ci * 7 + si);
                size_t n;
                unsigned char *jpg = lj_encode(&src, 90, hv, prog, &n);
                CHECK(lj_decode_rgb(jpg, n, 1, &ref) == 0, "%s: libjpeg's decode", cur_case);
                int rc = vkimg_load_memory(jpg, n, "s.jpg", &(vkimg_load_opts){ .jpeg_coded = true }, &im, &e);
                CHECK(rc == 0, "%s: load: %s", cur_case, e.msg);
                if (!rc) {
                    CHECK((im.coded != NULL) == cases[ci].coded, "%s: coded %d", cur_case, im.coded != NULL);
                    rc = vkimg_run(ctx, p, &im, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &out, &e);
                    CHECK(rc == 0, "%s: run: %s", cur_case, e.msg);
                    if (!rc) {
                        const int d = max_diff(&out, &ref);
                        worst_decode = d > worst_decode ? d : worst_decode;
                        CHECK(d <= 1, "%s: against libjpeg's decode: max difference %d", cur_case, d);
                        vkimg_image_free(&out);
                    }
                    vkimg_image_free(&im);
                }
                vkimg_image_free(&ref);
                vkimg_image_free(&src);
                free(jpg);
            }
    vkimg_pipeline_free(p);
}

/* PSNR of a decoded file against the source's colour channels (gray: the source
 * is gray) */
static double psnr(const vkimg_image *src, const vkimg_image *dec)
{
    double se = 0;
    size_t cnt = 0;
    const unsigned char *s = src->data, *d = dec->data;
    const int cc = dec->c;
    for (size_t i = 0; i < (size_t)src->w * src->h; i++)
        for (int k = 0; k < cc; k++) {
            double x = (double)s[i * src->c + k] - (double)d[i * cc + k];
            se += x * x;
            cnt++;
        }
    return se == 0 ? 999 : 10 * log10(255.0 * 255.0 / (se / (double)cnt));
}

static unsigned char *read_file(const char *path, unsigned long *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (unsigned long)len;
    return b;
}

static void test_encode(vkimg_ctx *ctx)
{
    static const int sz[][2] = { { 1, 1 }, { 1, 11 }, { 11, 1 }, { 9, 7 }, { 17, 16 }, { 33, 31 }, { 131, 67 } };
    static const int quals[] = { 30, 75, 89, 90, 100 };
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse("copy", &e);
    int same = 0, cases = 0;
    char path[128];
    snprintf(path, sizeof path, "%s/o.jpg", tmpdir);
    for (int huff = 0; huff <= 1; huff++) /* the Huffman coding on the host (libjpeg), then on the device */
    for (size_t si = 0; si < sizeof sz / sizeof sz[0]; si++)
        for (int c = 1; c <= 4; c++)
            for (size_t qi = 0; qi < sizeof quals / sizeof quals[0]; qi++)
                for (int kind = 0; kind < 3; kind++) {
                    const int w = sz[si][0], h = sz[si][1], q = quals[qi];
                    snprintf(cur_case, sizeof cur_case, "encode %dx%dx%d q%d kind %d%s", w, h, c, q, kind,
                             huff ? ", Huffman-coded on the device" : "");
                    vkimg_image src, out, tjsrc, a, b;
                    jpeg_image(&src, w, h, c, kind, 991 + si * 7 + (size_t)c * 3 + qi + (size_t)kind * 11);
                    int rc = vkimg_run(ctx, p, &src,
                                       &(vkimg_run_opts){ .out_fmt = VKIMG_U8, .jpeg_quality = q, .jpeg_entropy = huff },
                                       &out, &e);
                    CHECK(rc == 0 && out.coded, "%s: run: %s", cur_case, rc ? e.msg : "not coded");
                    CHECK(rc || out.coded->entropy == huff, "%s: entropy-coded %d", cur_case, out.coded->entropy);
                    if (rc)
                        continue;
                    rc = vkimg_save(path, &out, &(vkimg_save_opts){ .quality = q, .png_level = -1 }, &e);
                    CHECK(rc == 0, "%s: save: %s", cur_case, e.msg);
                    unsigned long n_dev = 0, n_tj = 0;
                    unsigned char *dev = read_file(path, &n_dev);
                    /* TurboJPEG's file of the same pixels, as vkimg's CPU encoder makes it */
                    const int gray = c <= 2;
                    jpeg_image(&tjsrc, w, h, gray ? 1 : 3, kind, 1); /* the colour channels of src, below */
                    for (size_t i = 0; i < (size_t)w * h; i++)
                        for (int k = 0; k < tjsrc.c; k++)
                            ((unsigned char *)tjsrc.data)[i * tjsrc.c + k] = ((unsigned char *)src.data)[i * c + k];
                    unsigned char *tj = tj_encode(&tjsrc, gray ? TJSAMP_GRAY : q < 90 ? TJSAMP_420 : TJSAMP_444, q, 0,
                                                  &n_tj);
                    CHECK(dev != NULL, "%s: no file", cur_case);
                    if (dev) {
                        tj_decode(dev, n_dev, &a);
                        tj_decode(tj, n_tj, &b);
                        const double pa = psnr(&tjsrc, &a), pb = psnr(&tjsrc, &b);
                        CHECK(n_dev <= n_tj, "%s: %lu bytes, TurboJPEG %lu", cur_case, n_dev, n_tj);
                        CHECK(pa >= pb - 1e-9, "%s: PSNR %.4f dB, TurboJPEG %.4f", cur_case, pa, pb);
                        same += n_dev == n_tj && !memcmp(dev, tj, n_dev);
                        cases++;
                        vkimg_image_free(&a);
                        vkimg_image_free(&b);
                    }
                    free(dev);
                    tjFree(tj);
                    vkimg_image_free(&tjsrc);
                    vkimg_image_free(&out);
                    vkimg_image_free(&src);
                }
    printf("encode: %d of %d files byte-identical to TurboJPEG's\n", same, cases);
    CHECK(same == cases, "%d of %d files differ from TurboJPEG's", cases - same, cases);
    /* the buffer the device writes the entropy-coded data into: the data of just its size fits (the
     * same bytes as libjpeg's), a byte more gives VKIMG_E_AGAIN and no image */
    vkimg_image src, out;
    jpeg_image(&src, 64, 48, 3, 2, 5);
    int rc = vkimg_run(ctx, p, &src, &(vkimg_run_opts){ .out_fmt = VKIMG_U8, .jpeg_quality = 90 }, &out, &e);
    unsigned char *host = NULL;
    size_t nh = 0;
    CHECK(rc == 0 && vki_jpeg_encode_coded(&out, &host, &nh, &e) == 0, "coded on the host: %s", e.msg);
    vkimg_image_free(&out);
    const size_t data0 = lj_scan_data(host, nh), len = nh - 2 - data0; /* the entropy-coded segment, before EOI */
    for (int more = 0; more <= 1; more++) {
        char cap[32];
        snprintf(cap, sizeof cap, "%zu", len - (size_t)more);
        setenv("VKIMG_JPEG_CODED_MAX", cap, 1);
        rc = vkimg_run(ctx, p, &src, &(vkimg_run_opts){ .out_fmt = VKIMG_U8, .jpeg_quality = 90, .jpeg_entropy = true },
                       &out, &e);
        if (!more) {
            unsigned char *dev = NULL;
            size_t nd = 0;
            CHECK(rc == 0 && out.coded->entropy && vki_jpeg_encode_coded(&out, &dev, &nd, &e) == 0 && nd == nh &&
                      !memcmp(dev, host, nh),
                  "a segment of %zu bytes into a buffer of as many: rc %d (%s)", len, rc, rc ? e.msg : "");
            free(dev);
        } else {
            char want[64];
            snprintf(want, sizeof want, "larger than the %zu bytes", len - 1);
            CHECK(rc == VKIMG_E_AGAIN && strstr(e.msg, want) && !out.data && !out.coded,
                  "a segment of %zu bytes into a buffer of a byte fewer: rc %d (%s)", len, rc, e.msg);
        }
        vkimg_image_free(&out);
    }
    unsetenv("VKIMG_JPEG_CODED_MAX");
    free(host);
    vkimg_image_free(&src);
    vkimg_pipeline_free(p);
}

static void test_pipeline(vkimg_ctx *ctx)
{
    vkimg_err e;
    vkimg_pipeline *p = vkimg_pipeline_parse("blur=2,gray", &e);
    char path[128];
    snprintf(path, sizeof path, "%s/p.jpg", tmpdir);
    static const int sz[][2] = { { 64, 40 }, { 97, 53 } };
    for (size_t si = 0; si < 2; si++)
        for (int ss = 0; ss < 3; ss++) {
            const int w = sz[si][0], h = sz[si][1];
            snprintf(cur_case, sizeof cur_case, "pipeline %dx%d %s", w, h, samp_name[ss]);
            vkimg_image src, ref, im, out, want;
            jpeg_image(&src, w, h, 3, 1, 5 + si + (size_t)ss);
            unsigned long n;
            unsigned char *jpg = tj_encode(&src, samps[ss], 85, 0, &n);
            tj_decode(jpg, n, &ref);
            CHECK(vkimg_load_memory(jpg, n, "p.jpg", &(vkimg_load_opts){ .jpeg_coded = true }, &im, &e) == 0 &&
                      im.coded,
                  "%s: load", cur_case);
            int rc = vkimg_run(ctx, p, &im, &(vkimg_run_opts){ .out_fmt = VKIMG_U8, .jpeg_quality = 85 }, &out, &e);
            CHECK(rc == 0 && out.coded, "%s: run: %s", cur_case, e.msg);
            rc = vkimg_run(ctx, p, &ref, &(vkimg_run_opts){ .out_fmt = VKIMG_U8 }, &want, &e);
            CHECK(rc == 0, "%s: run: %s", cur_case, e.msg);
            CHECK(vkimg_save(path, &out, NULL, &e) == 0, "%s: save: %s", cur_case, e.msg);
            unsigned long nd = 0, nt = 0;
            unsigned char *dev = read_file(path, &nd), *tj = tj_encode(&want, TJSAMP_GRAY, 85, 0, &nt);
            CHECK(dev && nd == nt && !memcmp(dev, tj, nd), "%s: the file differs from TurboJPEG's (%lu, %lu bytes)",
                  cur_case, nd, nt);
            free(dev);
            tjFree(tj);
            tjFree(jpg);
            vkimg_image_free(&src);
            vkimg_image_free(&ref);
            vkimg_image_free(&im);
            vkimg_image_free(&out);
            vkimg_image_free(&want);
        }
    vkimg_pipeline_free(p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vkimg-test-jpegdev-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    static const gh_suite suites[] = { { "decode", test_decode }, { "encode", test_encode },
                                       { "pipeline", test_pipeline }, { "sampling", test_sampling } };
    int rc = gh_main("test_jpeg_device", suites, sizeof suites / sizeof suites[0]);
    char path[128];
    snprintf(path, sizeof path, "%s/o.jpg", tmpdir);
    unlink(path);
    snprintf(path, sizeof path, "%s/p.jpg", tmpdir);
    unlink(path);
    rmdir(tmpdir);
    return rc;
}

/* The helper of test_meta_cli.sh: makes JPEG and PNG files that carry an EXIF
 * block (with an orientation tag, or none), an XMP packet (with tiff:Orientation
 * where the EXIF has the tag; present where the EXIF block is) and an ICC profile,
 * written here by hand around TurboJPEG's and vkimg's plain encodings (an APP1
 * "Exif", an APP1 XMP and APP2 "ICC_PROFILE" segments after SOI; iCCP, eXIf and iTXt
 * chunks, eXIf and a compressed iTXt before IDAT or after it as libpng writes them),
 * and checks what vkimg wrote from them: pixels (the stored ones, or upright by the
 * reference of the EXIF orientations, tests/ops/remap_ref.h), orientation, and the
 * EXIF, XMP and ICC bytes. The JPEGs carry Photoshop's image resources too (APP13
 * segments, an IPTC record; over two segments beside a profile of over 65519 bytes),
 * which JPEG and TIFF outputs keep and the others cannot.
 *
 *   meta_tool make FILE KIND W H C BITS ORIENT ORDER ICC SEED
 *       KIND jpg | png | png-late (eXIf after IDAT); ORIENT 0: no EXIF block, 1..8:
 *       the tag, 9: EXIF without the tag; ORDER II | MM; ICC: profile bytes (0: none)
 *   meta_tool check IN OUT ORIENT ORDER ICC SEED MODE
 *       MODE auto | noauto | strip | strip-noauto (what the CLI was told), or
 *       auto-lossy (a JPEG output: of the eight orientations of the input, the
 *       upright one is the closest to its pixels)
 *   meta_tool icc FILE: the ICC profile's size and colour space
 *   meta_tool xmp FILE: the XMP packet's size, a hash of its bytes with its
 *       tiff:Orientation set to 1, and that orientation as it is (0: none)
 *   meta_tool iptc FILE: the Photoshop resources' size and a hash of their bytes
 * Exit 0 when everything matches; otherwise each difference on stderr, exit 1. */
#include "bbuf.h"
#include "io_util.h"
#include "remap_ref.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <turbojpeg.h>

static int fails;
#define EXPECT(cond, ...)                                                                                          \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fails++;                                                                                               \
            fprintf(stderr, "meta_tool: ");                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fprintf(stderr, "\n");                                                                                 \
        }                                                                                                          \
    } while (0)

/* ---------------------------------------------------------------- EXIF and ICC */

static int le;
static void t16(bbuf *b, unsigned v)
{
    if (le) {
        bb_u8(b, v & 255);
        bb_u8(b, v >> 8);
    } else {
        bb_be16(b, v);
    }
}
static void t32(bbuf *b, uint32_t v)
{
    if (le) {
        t16(b, v & 0xffff);
        t16(b, v >> 16);
    } else {
        bb_be32(b, v);
    }
}

/* A TIFF block: IFD0 with ImageDescription, Make, Orientation (orient 1..8; none for
 * 9), X/YResolution and ResolutionUnit, and its data; order "II" or "MM". */
static bbuf exif_block(int orient, const char *order)
{
    static const char desc[] = "vkimg metadata test: an upright F", make[] = "vkimg";
    bbuf b = { 0 };
    le = !strcmp(order, "II");
    bb_put(&b, le ? "II*\0" : "MM\0*", 4);
    t32(&b, 8);
    int n = orient >= 1 && orient <= 8 ? 6 : 5;
    uint32_t data = 8 + 2 + 12 * (uint32_t)n + 4; /* the values after IFD0 */
    t16(&b, (unsigned)n);
    t16(&b, 0x010e), t16(&b, 2), t32(&b, sizeof desc), t32(&b, data);
    t16(&b, 0x010f), t16(&b, 2), t32(&b, sizeof make), t32(&b, data + sizeof desc);
    if (n == 6) { /* SHORT, count 1: the value in the first two bytes of the field */
        t16(&b, 0x0112), t16(&b, 3), t32(&b, 1), t16(&b, (unsigned)orient), t16(&b, 0);
    }
    uint32_t rat = data + sizeof desc + sizeof make;
    rat += rat & 1;
    t16(&b, 0x011a), t16(&b, 5), t32(&b, 1), t32(&b, rat);
    t16(&b, 0x011b), t16(&b, 5), t32(&b, 1), t32(&b, rat + 8);
    t16(&b, 0x0128), t16(&b, 3), t32(&b, 1), t16(&b, 2), t16(&b, 0);
    t32(&b, 0); /* no IFD1 */
    bb_put(&b, desc, sizeof desc);
    bb_put(&b, make, sizeof make);
    if (b.n & 1)
        bb_u8(&b, 0);
    t32(&b, 72), t32(&b, 1), t32(&b, 300), t32(&b, 4);
    return b;
}

/* An XMP packet as Adobe's tools write one (the properties as attributes of one
 * rdf:Description): tiff:Orientation orient (none for 9), dc:rights from the seed. */
static bbuf xmp_packet(int orient, unsigned long long seed)
{
    char s[1024];
    char o[40] = "";
    if (orient >= 1 && orient <= 8)
        snprintf(o, sizeof o, "\n   tiff:Orientation=\"%d\"", orient);
    int n = snprintf(s, sizeof s,
                     "<?xpacket begin=\"\xef\xbb\xbf\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
                     "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n"
                     " <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n"
                     "  <rdf:Description rdf:about=\"\"\n"
                     "    xmlns:tiff=\"http://ns.adobe.com/tiff/1.0/\"\n"
                     "    xmlns:dc=\"http://purl.org/dc/elements/1.1/\"%s>\n"
                     "   <dc:rights><rdf:Alt><rdf:li xml:lang=\"x-default\">vkimg test %llu</rdf:li></rdf:Alt>"
                     "</dc:rights>\n"
                     "  </rdf:Description>\n"
                     " </rdf:RDF>\n"
                     "</x:xmpmeta>\n"
                     "<?xpacket end=\"w\"?>",
                     o, seed);
    bbuf b = { 0 };
    bb_put(&b, s, (size_t)n);
    return b;
}

/* Photoshop's image resources as an APP13 holds them: an IPTC record (its version and a
 * caption from the seed), and where big is set a second resource of 70001 bytes (an
 * odd size: a padding byte follows). */
static bbuf photoshop_irb(unsigned long long seed, int big)
{
    bbuf iim = { 0 }, b = { 0 };
    char caption[64];
    const int cn = snprintf(caption, sizeof caption, "vkimg test caption %llu", seed);
    bb_put(&iim, "\x1c\x02\x00\x00\x02\x00\x04\x1c\x02\x78", 10); /* ApplicationRecordVersion 4, Caption */
    bb_be16(&iim, (unsigned)cn);
    bb_put(&iim, caption, (size_t)cn);
    bb_put(&b, "8BIM\x04\x04\x00\x00", 8); /* IPTC-NAA, no name */
    bb_be32(&b, (uint32_t)iim.n);
    bb_put(&b, iim.p, iim.n);
    if (iim.n & 1)
        bb_u8(&b, 0);
    if (big) {
        bb_put(&b, "8BIM\x0f\xa0\x03" "abc", 10); /* a name of 3 bytes: no padding */
        bb_be32(&b, 70001);
        for (uint32_t i = 0; i < 70001; i++)
            bb_u8(&b, (unsigned)(i * 7 + seed) & 255);
        bb_u8(&b, 0);
    }
    free(iim.p);
    return b;
}

/* An ICC profile's bytes for an image of c channels: its size, the colour space
 * ('GRAY' or 'RGB ') and 'acsp' where a profile has them, the rest random. */
static bbuf icc_profile(size_t n, unsigned long long seed, int c)
{
    bbuf b = { 0 };
    if (!n)
        return b;
    unsigned long long s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        bb_u8(&b, (unsigned)((s * 2685821657736338717ull) >> 56));
    }
    if (n >= 40) {
        for (int k = 0; k < 4; k++)
            b.p[k] = (unsigned char)(n >> (24 - 8 * k));
        memcpy(b.p + 16, c <= 2 ? "GRAY" : "RGB ", 4);
        memcpy(b.p + 36, "acsp", 4);
    }
    return b;
}

/* ---------------------------------------------------------------- files */

static vkimg_image pixels(int w, int h, int c, int bits, unsigned long long seed)
{
    vkimg_image im;
    make_image(&im, w, h, c, bits == 16 ? VKIMG_U16 : VKIMG_U8, 40, seed);
    return im;
}

static int make_jpeg(const char *path, const vkimg_image *im, const bbuf *exif, const bbuf *xmp, const bbuf *irb,
                     const bbuf *icc)
{
    tjhandle tj = tjInitCompress();
    unsigned char *jpg = NULL;
    unsigned long len = 0;
    int pf = im->c == 1 ? TJPF_GRAY : TJPF_RGB;
    if (!tj || (im->c != 1 && im->c != 3) ||
        tjCompress2(tj, im->data, im->w, 0, im->h, pf, &jpg, &len, im->c == 1 ? TJSAMP_GRAY : TJSAMP_444, 95, 0)) {
        fprintf(stderr, "meta_tool: TurboJPEG: %s\n", tj ? tjGetErrorStr2(tj) : "init");
        return -1;
    }
    bbuf f = { 0 };
    bb_put(&f, jpg, 2); /* SOI */
    if (exif->n) {
        bb_be16(&f, 0xffe1);
        bb_be16(&f, (unsigned)(2 + 6 + exif->n));
        bb_put(&f, "Exif\0\0", 6);
        bb_put(&f, exif->p, exif->n);
    }
    if (xmp->n) {
        bb_be16(&f, 0xffe1);
        bb_be16(&f, (unsigned)(2 + 29 + xmp->n));
        bb_put(&f, "http://ns.adobe.com/xap/1.0/", 29);
        bb_put(&f, xmp->p, xmp->n);
    }
    for (size_t at = 0; at < irb->n; at += 65519) {
        const size_t m = irb->n - at < 65519 ? irb->n - at : 65519;
        bb_be16(&f, 0xffed);
        bb_be16(&f, (unsigned)(2 + 14 + m));
        bb_put(&f, "Photoshop 3.0\0", 14);
        bb_put(&f, irb->p + at, m);
    }
    size_t chunk = 65519, nseg = (icc->n + chunk - 1) / chunk;
    for (size_t k = 0; k < nseg; k++) {
        size_t m = icc->n - k * chunk < chunk ? icc->n - k * chunk : chunk;
        bb_be16(&f, 0xffe2);
        bb_be16(&f, (unsigned)(2 + 14 + m));
        bb_put(&f, "ICC_PROFILE\0", 12);
        bb_u8(&f, (unsigned)(k + 1));
        bb_u8(&f, (unsigned)nseg);
        bb_put(&f, icc->p + k * chunk, m);
    }
    bb_put(&f, jpg + 2, len - 2);
    tjFree(jpg);
    tjDestroy(tj);
    int rc = write_file(path, f.p, f.n);
    free(f.p);
    return rc;
}

static void chunk(bbuf *f, const char *type, const unsigned char *d, size_t n)
{
    bb_be32(f, (uint32_t)n);
    size_t at = f->n;
    bb_put(f, type, 4);
    if (n)
        bb_put(f, d, n);
    bb_be32(f, libdeflate_crc32(0, f->p + at, n + 4));
}

/* The XMP iTXt: uncompressed, or zlib-compressed (as libpng can write it) */
static void xmp_itxt(bbuf *f, const bbuf *xmp, int compressed)
{
    bbuf d = { 0 };
    bb_put(&d, "XML:com.adobe.xmp", 18);
    bb_u8(&d, (unsigned)compressed);
    bb_u8(&d, 0);
    bb_put(&d, "\0\0", 2); /* no language tag, no translated keyword */
    if (compressed) {
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
        size_t cap = libdeflate_zlib_compress_bound(c, xmp->n);
        unsigned char *z = malloc(cap);
        size_t zn = z ? libdeflate_zlib_compress(c, xmp->p, xmp->n, z, cap) : 0;
        libdeflate_free_compressor(c);
        bb_put(&d, z, zn);
        free(z);
    } else {
        bb_put(&d, xmp->p, xmp->n);
    }
    chunk(f, "iTXt", d.p, d.n);
    free(d.p);
}

static int make_png(const char *path, const vkimg_image *im, const bbuf *exif, const bbuf *xmp, const bbuf *icc,
                    int late)
{
    /* vkimg's plain PNG, then the chunks put in by hand */
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.plain.png", path);
    vkimg_err e;
    memset(&e, 0, sizeof e);
    if (vkimg_save(tmp, im, NULL, &e)) {
        fprintf(stderr, "meta_tool: %s\n", e.msg);
        return -1;
    }
    size_t len;
    unsigned char *png = read_all(tmp, &len);
    remove(tmp);
    if (!png || len < 33)
        return -1;
    bbuf f = { 0 };
    bb_put(&f, png, 33); /* signature, IHDR */
    if (icc->n) {
        bbuf d = { 0 };
        bb_put(&d, "vkimg test profile", 19);
        bb_u8(&d, 0);
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
        size_t cap = libdeflate_zlib_compress_bound(c, icc->n);
        unsigned char *z = malloc(cap);
        size_t zn = z ? libdeflate_zlib_compress(c, icc->p, icc->n, z, cap) : 0;
        libdeflate_free_compressor(c);
        if (!zn)
            return -1;
        bb_put(&d, z, zn);
        free(z);
        chunk(&f, "iCCP", d.p, d.n);
        free(d.p);
    }
    if (exif->n && !late)
        chunk(&f, "eXIf", exif->p, exif->n);
    if (xmp->n && !late)
        xmp_itxt(&f, xmp, 0);
    bb_put(&f, png + 33, len - 33 - 12); /* up to IEND */
    if (exif->n && late)
        chunk(&f, "eXIf", exif->p, exif->n);
    if (xmp->n && late)
        xmp_itxt(&f, xmp, 1);
    chunk(&f, "IEND", NULL, 0);
    free(png);
    int rc = write_file(path, f.p, f.n);
    free(f.p);
    return rc;
}

/* ---------------------------------------------------------------- checks */

static int same_bytes(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    return an == bn && (!an || !memcmp(a, b, an));
}

static int check(const char *in_path, const char *out_path, int orient, const char *order, size_t icc_n,
                 unsigned long long seed, const char *mode)
{
    int strip = !strncmp(mode, "strip", 5), noauto = strstr(mode, "noauto") != NULL;
    int lossy = !strcmp(mode, "auto-lossy");
    int tagged = orient >= 1 && orient <= 8, o = tagged ? orient : 1;
    vkimg_image in, out;
    vkimg_meta mi, mo;
    vkimg_err e;
    memset(&e, 0, sizeof e);
    if (vkimg_load_meta(in_path, NULL, &in, &mi, &e) || vkimg_load_meta(out_path, NULL, &out, &mo, &e)) {
        fprintf(stderr, "meta_tool: %s\n", e.msg);
        return 1;
    }
    bbuf exif = orient ? exif_block(orient, order) : (bbuf){ 0 };
    bbuf xmp = orient ? xmp_packet(orient, seed) : (bbuf){ 0 };
    bbuf icc = icc_profile(icc_n, seed, in.c);
    const int jpeg_in = vkimg_file_kind_of(in_path) == VKIMG_FILE_JPEG;
    const vkimg_file_kind ko = vkimg_file_kind_of(out_path);
    bbuf irb = orient && jpeg_in ? photoshop_irb(seed, icc_n > 65519) : (bbuf){ 0 };
    /* the input is what make wrote */
    EXPECT(same_bytes(mi.iptc, mi.iptc_len, irb.p, irb.n),
           "%s: the input's Photoshop resources (%zu bytes) are not the ones made (%zu)", in_path, mi.iptc_len, irb.n);
    EXPECT(same_bytes(mi.xmp, mi.xmp_len, xmp.p, xmp.n), "%s: the input's XMP (%zu bytes) is not the one made (%zu)",
           in_path, mi.xmp_len, xmp.n);
    EXPECT(mi.orientation == o, "%s: the input's orientation %d, want %d", in_path, mi.orientation, o);
    EXPECT(same_bytes(mi.exif, mi.exif_len, exif.p, exif.n), "%s: the input's EXIF (%zu bytes) is not the one made "
           "(%zu)", in_path, mi.exif_len, exif.n);
    EXPECT(same_bytes(mi.icc, mi.icc_len, icc.p, icc.n), "%s: the input's ICC profile (%zu bytes) is not the one made "
           "(%zu)", in_path, mi.icc_len, icc.n);
    /* pixels: as stored, or upright */
    rm_map m = mv_orientation(noauto ? 1 : o, in.w, in.h);
    vkimg_image want = rm_apply(&m, &in);
    rm_map_free(&m);
    if (lossy) {
        /* re-encoded: the upright input is the closest of the eight orientations (of
         * the output's size), and close */
        EXPECT(out.w == want.w && out.h == want.h && out.c == want.c, "%s: %dx%d c=%d, want %dx%d c=%d", out_path,
               out.w, out.h, out.c, want.w, want.h, want.c);
        double best = 1e9, d_want = 1e9;
        int best_o = 0;
        for (int k = 1; k <= 8 && out.c == want.c; k++) {
            rm_map mk = mv_orientation(k, in.w, in.h);
            if (mk.w == out.w && mk.h == out.h) {
                vkimg_image ik = rm_apply(&mk, &in);
                double d = mean_abs_u8(&ik, &out, ik.c);
                if (d < best)
                    best = d, best_o = k;
                if (k == o)
                    d_want = d;
                vkimg_image_free(&ik);
            }
            rm_map_free(&mk);
        }
        EXPECT(best_o == o && d_want < 12.0, "%s: closest to the input in orientation %d (mean error %.3f of 255), "
               "want %d (%.3f, below 12)", out_path, best_o, best, o, d_want);
    } else {
        EXPECT(same_image(&out, &want), "%s: %dx%d c=%d %s: not the input's pixels %s (%dx%d)", out_path, out.w,
               out.h, out.c, vkimg_fmt_name(out.fmt), noauto ? "as stored" : "made upright", want.w, want.h);
    }
    /* metadata: none with --strip; else the profile as it was, the EXIF as it was but
     * for the orientation, which says 1 once applied */
    if (strip) {
        EXPECT(!mo.exif && !mo.icc && !mo.xmp && !mo.iptc, "%s: --strip, but EXIF %zu, XMP %zu, ICC %zu and "
               "Photoshop %zu bytes", out_path, mo.exif_len, mo.xmp_len, mo.icc_len, mo.iptc_len);
        EXPECT(mo.orientation == 1, "%s: --strip: orientation %d", out_path, mo.orientation);
    } else {
        bbuf ex = orient ? exif_block(noauto || !tagged ? orient : 1, order) : (bbuf){ 0 };
        EXPECT(same_bytes(mo.exif, mo.exif_len, ex.p, ex.n), "%s: EXIF of %zu bytes, want the input's %zu with "
               "orientation %d", out_path, mo.exif_len, ex.n, noauto ? o : 1);
        EXPECT(mo.orientation == (noauto ? o : 1), "%s: orientation %d, want %d", out_path, mo.orientation,
               noauto ? o : 1);
        bbuf xo = orient ? xmp_packet(noauto || !tagged ? orient : 1, seed) : (bbuf){ 0 };
        EXPECT(same_bytes(mo.xmp, mo.xmp_len, xo.p, xo.n), "%s: XMP of %zu bytes, want the input's %zu with "
               "tiff:Orientation %d", out_path, mo.xmp_len, xo.n, noauto ? o : 1);
        free(xo.p);
        const int keeps = ko == VKIMG_FILE_JPEG || ko == VKIMG_FILE_TIFF; /* PNG and WebP have no place */
        EXPECT(keeps ? same_bytes(mo.iptc, mo.iptc_len, irb.p, irb.n) : !mo.iptc,
               "%s: Photoshop resources of %zu bytes, want %zu", out_path, mo.iptc_len, keeps ? irb.n : 0);
        EXPECT(same_bytes(mo.icc, mo.icc_len, icc.p, icc.n), "%s: ICC profile of %zu bytes, want the input's %zu",
               out_path, mo.icc_len, icc.n);
        if (icc.n && mi.icc_name[0] && vkimg_file_kind_of(out_path) == VKIMG_FILE_PNG)
            EXPECT(!strcmp(mo.icc_name, mi.icc_name), "%s: profile name '%s', want '%s'", out_path, mo.icc_name,
                   mi.icc_name);
        free(ex.p);
    }
    free(exif.p);
    free(xmp.p);
    free(irb.p);
    free(icc.p);
    vkimg_image_free(&want);
    vkimg_image_free(&in);
    vkimg_image_free(&out);
    vkimg_meta_free(&mi);
    vkimg_meta_free(&mo);
    return fails ? 1 : 0;
}

/* FNV-1a of n bytes */
static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The metadata of a file (the image loaded and freed): 0, or 1 with the reason on stderr. */
static int load_meta(const char *path, vkimg_meta *m)
{
    vkimg_image im;
    vkimg_err e;
    if (vkimg_load_meta(path, NULL, &im, m, &e)) {
        fprintf(stderr, "meta_tool: %s\n", e.msg);
        return 1;
    }
    vkimg_image_free(&im);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 12 && !strcmp(argv[1], "make")) {
        int w = atoi(argv[4]), h = atoi(argv[5]), c = atoi(argv[6]), bits = atoi(argv[7]), orient = atoi(argv[8]);
        unsigned long long seed = strtoull(argv[11], NULL, 10);
        vkimg_image im = pixels(w, h, c, bits, seed);
        bbuf exif = orient ? exif_block(orient, argv[9]) : (bbuf){ 0 };
        bbuf xmp = orient ? xmp_packet(orient, seed) : (bbuf){ 0 };
        bbuf icc = icc_profile((size_t)strtoull(argv[10], NULL, 10), seed, c);
        bbuf irb = orient ? photoshop_irb(seed, icc.n > 65519) : (bbuf){ 0 };
        int rc = !strcmp(argv[3], "jpg") ? make_jpeg(argv[2], &im, &exif, &xmp, &irb, &icc)
                                          : make_png(argv[2], &im, &exif, &xmp, &icc, !strcmp(argv[3], "png-late"));
        free(exif.p);
        free(xmp.p);
        free(irb.p);
        free(icc.p);
        vkimg_image_free(&im);
        return rc ? 1 : 0;
    }
    if (argc == 9 && !strcmp(argv[1], "check"))
        return check(argv[2], argv[3], atoi(argv[4]), argv[5], (size_t)strtoull(argv[6], NULL, 10),
                     strtoull(argv[7], NULL, 10), argv[8]);
    vkimg_meta m;
    if (argc == 3 && !strcmp(argv[1], "icc")) { /* the profile's size and colour space */
        if (load_meta(argv[2], &m))
            return 1;
        printf("%zu %.4s\n", m.icc_len, m.icc_len >= 20 ? (const char *)m.icc + 16 : "-");
        vkimg_meta_free(&m);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "xmp")) { /* size, hash of the bytes with orientation 1, orientation */
        if (load_meta(argv[2], &m))
            return 1;
        /* the packets xmp_packet makes have tiff:Orientation="N" once */
        static const char key[] = "tiff:Orientation=\"";
        const size_t kn = sizeof key - 1;
        int o = 0;
        for (size_t i = 0; m.xmp_len > kn && i < m.xmp_len - kn; i++)
            if (!memcmp(m.xmp + i, key, kn)) {
                o = m.xmp[i + kn] - '0';
                m.xmp[i + kn] = '1';
                break;
            }
        printf("%zu %016llx %d\n", m.xmp_len, (unsigned long long)fnv(m.xmp, m.xmp_len), o);
        vkimg_meta_free(&m);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "iptc")) {
        if (load_meta(argv[2], &m))
            return 1;
        printf("%zu %016llx\n", m.iptc_len, (unsigned long long)fnv(m.iptc, m.iptc_len));
        vkimg_meta_free(&m);
        return 0;
    }
    fprintf(stderr, "usage: meta_tool make FILE jpg|png|png-late W H C BITS ORIENT II|MM ICC SEED\n"
                    "       meta_tool check IN OUT ORIENT II|MM ICC SEED auto|noauto|strip|strip-noauto|auto-lossy\n"
                    "       meta_tool icc FILE\n"
                    "       meta_tool xmp FILE\n"
                    "       meta_tool iptc FILE\n");
    return 2;
}

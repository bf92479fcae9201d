/* KTX2 (src/io/ktx2.c): mip chains of odd sizes, 1-4 channels, u8/u16/f32 (and the sRGB
 * option) encoded and read back by the strict reader level for level; the header,
 * level index, DFD (against descriptors written out by hand from the KTX 2.0 and
 * Khronos Data Format specifications) and key/value data checked field by field;
 * corrupted files rejected (identifier, every header field, DFD and KVD sizes and
 * contents, level offsets and lengths, misalignment, padding, truncation at every
 * length, trailing bytes); bad chains refused by the writer. No device. */
#include "io/ktx2.h"
#include "t.h"
#include "vkimg/vkimg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long g_seed = 0x2545f4914f6cdd1dull;

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
    p[3] = (unsigned char)(v >> 24);
}

static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* A chain of n levels of a w x h image, random samples. */
static vkimg_image *make_chain(int w, int h, int c, vkimg_fmt f, int n)
{
    vkimg_image *l = calloc((size_t)n, sizeof *l);
    for (int p = 0; p < n; p++) {
        int lw = w >> p > 1 ? w >> p : 1, lh = h >> p > 1 ? h >> p : 1;
        vkimg_image_alloc(&l[p], lw, lh, c, f, NULL);
        unsigned char *d = l[p].data;
        for (size_t i = 0; i < vkimg_image_bytes(&l[p]); i++)
            d[i] = (unsigned char)t_rand(&g_seed);
    }
    return l;
}

static void free_chain(vkimg_image *l, int n)
{
    for (int p = 0; p < n; p++)
        vkimg_image_free(&l[p]);
    free(l);
}

static int max_levels(int w, int h)
{
    int m = w > h ? w : h, r = 1;
    while (m >>= 1)
        r++;
    return r;
}

static uint32_t expect_vk(vkimg_fmt f, int c, int srgb)
{
    static const uint32_t t[4][4] = { { 9, 16, 23, 37 }, { 15, 22, 29, 43 }, { 70, 77, 84, 91 }, { 100, 103, 106, 109 } };
    const int row = f == VKIMG_U8 ? (srgb ? 1 : 0) : f == VKIMG_U16 ? 2 : 3;
    return t[row][(unsigned)(c - 1) % 4];
}

/* The DFD written out by hand from the specifications: dfdTotalSize, the basic block
 * header (6 words), one sample (4 words) per channel. */
static size_t expected_dfd(vkimg_fmt f, int c, int srgb, uint32_t *w)
{
    const uint32_t cs = f == VKIMG_U8 ? 1 : f == VKIMG_U16 ? 2 : 4, bits = 8 * cs;
    size_t k = 0;
    w[k++] = 4 + 24 + 16 * (uint32_t)c;          /* dfdTotalSize */
    w[k++] = 0;                                  /* vendorId 0 (Khronos), descriptorType 0 (basic) */
    w[k++] = 2 | (24 + 16 * (uint32_t)c) << 16;  /* versionNumber 2, descriptorBlockSize */
    w[k++] = 1 | 1 << 8 | (srgb ? 2u : 1u) << 16; /* RGBSDA, BT709, linear/sRGB, flags 0 */
    w[k++] = 0;                                  /* texelBlockDimension 1x1x1x1 (stored minus 1) */
    w[k++] = cs * (uint32_t)c;                   /* bytesPlane0 */
    w[k++] = 0;                                  /* bytesPlane4..7 */
    for (int i = 0; i < c; i++) {
        uint32_t ch = i == 3 ? 15 : (uint32_t)i; /* R, G, B, A(15) */
        uint32_t q = f == VKIMG_F32 ? 0xc0 : 0;  /* FLOAT | SIGNED */
        if (srgb && ch == 15)
            q |= 0x10; /* LINEAR alpha */
        w[k++] = (uint32_t)i * bits | (bits - 1) << 16 | (ch | q) << 24;
        w[k++] = 0;
        w[k++] = f == VKIMG_F32 ? 0xbf800000u : 0;
        w[k++] = f == VKIMG_F32 ? 0x3f800000u : (uint32_t)((1ull << bits) - 1);
    }
    return k;
}

static int decodes(const unsigned char *b, size_t n, char *msg, size_t msgn)
{
    vkimg_image *l = NULL;
    int nl = 0;
    vkimg_err e = { 0 };
    int rc = vki_ktx2_decode(b, n, &l, &nl, NULL, &e);
    if (msg)
        snprintf(msg, msgn, "%s", e.msg);
    if (!rc)
        vki_ktx2_free_levels(l, nl);
    else if (l || nl)
        rc = 99; /* outputs must stay empty on failure */
    return rc;
}

/* Encode, check the file's fields, decode, compare. */
static void check_chain(int w, int h, int c, vkimg_fmt f, int n, int srgb)
{
    char what[80];
    snprintf(what, sizeof what, "%dx%d c%d %s%s %d levels", w, h, c, vkimg_fmt_name(f), srgb ? " srgb" : "", n);
    vkimg_image *l = make_chain(w, h, c, f, n);
    unsigned char *b = NULL;
    size_t len = 0;
    vkimg_err e = { 0 };
    vki_ktx2_opts o = { .srgb = srgb != 0 };
    int rc = vki_ktx2_encode_ex(l, n, &o, &b, &len, &e);
    CHECK(rc == 0, "%s: encode: %s", what, e.msg);
    if (rc) {
        free_chain(l, n);
        return;
    }
    /* header */
    const uint32_t cs = f == VKIMG_U8 ? 1 : f == VKIMG_U16 ? 2 : 4, texel = cs * (uint32_t)c;
    const uint32_t A = texel % 4 == 0 ? texel : texel % 2 == 0 ? 2 * texel : 4 * texel;
    static const unsigned char id[12] = { 0xAB, 'K', 'T', 'X', ' ', '2', '0', 0xBB, '\r', '\n', 0x1A, '\n' };
    CHECK(len >= 80 && memcmp(b, id, 12) == 0, "%s: identifier", what);
    CHECK(rd32(b + 12) == expect_vk(f, c, srgb), "%s: vkFormat %u", what, rd32(b + 12));
    CHECK(rd32(b + 16) == cs, "%s: typeSize", what);
    CHECK(rd32(b + 20) == (uint32_t)w && rd32(b + 24) == (uint32_t)h && rd32(b + 28) == 0, "%s: size", what);
    CHECK(rd32(b + 32) == 0 && rd32(b + 36) == 1 && rd32(b + 40) == (uint32_t)n && rd32(b + 44) == 0,
          "%s: layers 0, faces 1, levels, no supercompression", what);
    const uint32_t dfd_off = rd32(b + 48), dfd_len = rd32(b + 52), kvd_off = rd32(b + 56), kvd_len = rd32(b + 60);
    CHECK(dfd_off == 80 + 24 * (uint32_t)n && kvd_off == dfd_off + dfd_len && rd64(b + 64) == 0 && rd64(b + 72) == 0,
          "%s: index", what);
    uint32_t want[4 + 24 + 64];
    size_t nw = expected_dfd(f, c, srgb, want);
    CHECK(dfd_len == 4 * nw, "%s: dfdByteLength %u", what, dfd_len);
    for (size_t i = 0; i < nw && 4 * i < dfd_len; i++)
        CHECK(rd32(b + dfd_off + 4 * i) == want[i], "%s: DFD word %zu: 0x%08x, expected 0x%08x", what, i,
              rd32(b + dfd_off + 4 * i), want[i]);
    /* key/value data: sorted, KTXwriter */
    char writer[64];
    snprintf(writer, sizeof writer, "vkimg %s", VKIMG_VERSION);
    const char *keys[3] = { "KTXorientation", c <= 2 ? "KTXswizzle" : "KTXwriter", "KTXwriter" };
    const char *vals[3] = { "rd", c == 1 ? "rrr1" : c == 2 ? "rrrg" : writer, writer };
    size_t at = kvd_off;
    for (int i = 0; i < (c <= 2 ? 3 : 2); i++) {
        uint32_t kl = rd32(b + at);
        size_t klen = strlen(keys[i]) + 1, vlen = strlen(vals[i]) + 1;
        CHECK(kl == klen + vlen && memcmp(b + at + 4, keys[i], klen) == 0 && memcmp(b + at + 4 + klen, vals[i], vlen) == 0,
              "%s: key/value %d (%s)", what, i, keys[i]);
        at += 4 + (kl + 3) / 4 * 4;
    }
    CHECK(at == (size_t)kvd_off + kvd_len, "%s: kvdByteLength", what);
    /* levels: smallest first, aligned, the file ending with level 0 */
    uint64_t expect_off = (at + A - 1) / A * A;
    for (int p = n - 1; p >= 0; p--) {
        const unsigned char *li = b + 80 + 24 * p;
        uint64_t size = vkimg_image_bytes(&l[p]);
        CHECK(rd64(li) == expect_off && rd64(li) % A == 0, "%s: level %d at %llu, expected %llu", what, p,
              (unsigned long long)rd64(li), (unsigned long long)expect_off);
        CHECK(rd64(li + 8) == size && rd64(li + 16) == size, "%s: level %d lengths", what, p);
        CHECK(rd64(li) + size <= len && memcmp(b + rd64(li), l[p].data, size) == 0, "%s: level %d bytes in the file",
              what, p);
        expect_off += p ? (size + A - 1) / A * A : size;
    }
    CHECK(expect_off == len, "%s: file ends with level 0", what);

    vkimg_image *d = NULL;
    int nd = 0;
    vki_ktx2_info info;
    rc = vki_ktx2_decode(b, len, &d, &nd, &info, &e);
    CHECK(rc == 0 && nd == n, "%s: decode: %s", what, e.msg);
    for (int p = 0; !rc && p < n && p < nd; p++)
        CHECK(d[p].w == l[p].w && d[p].h == l[p].h && d[p].c == c && d[p].fmt == f &&
                  memcmp(d[p].data, l[p].data, vkimg_image_bytes(&l[p])) == 0,
              "%s: level %d read back identical", what, p);
    if (!rc) {
        CHECK(info.vk_format == expect_vk(f, c, srgb) && info.transfer == (srgb ? 2 : 1) && info.primaries == 1 &&
                  !info.premultiplied && strcmp(info.writer, writer) == 0,
              "%s: info", what);
        vki_ktx2_free_levels(d, nd);
    }
    free(b);
    free_chain(l, n);
}

static void test_chains(void)
{
    static const int sizes[][2] = { { 5, 3 }, { 1, 1 }, { 7, 1 }, { 1, 9 }, { 256, 128 }, { 2, 2 }, { 3, 17 } };
    static const vkimg_fmt fmts[] = { VKIMG_U8, VKIMG_U16, VKIMG_F32 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t f = 0; f < 3; f++)
            for (int c = 1; c <= 4; c++) {
                int w = sizes[s][0], h = sizes[s][1], m = max_levels(w, h);
                check_chain(w, h, c, fmts[f], m, 0); /* full chain */
                if (m > 2)
                    check_chain(w, h, c, fmts[f], 2, 0); /* partial */
                if (fmts[f] == VKIMG_U8 && c != 2)
                    check_chain(w, h, c, fmts[f], m, 1);
            }
    CHECK(max_levels(5, 3) == 3 && max_levels(1, 9) == 4 && max_levels(256, 128) == 9, "level counts");
}

static void test_writer_refuses(void)
{
    unsigned char *b = NULL;
    size_t len;
    vkimg_err e;
    vkimg_image *l = make_chain(5, 3, 3, VKIMG_U8, 3);
    CHECK(vki_ktx2_encode(l, 4, &b, &len, &e) == VKIMG_E_USAGE && !b, "4 levels for 5x3");
    CHECK(vki_ktx2_encode(l, 0, &b, &len, &e) == VKIMG_E_USAGE && !b, "0 levels");
    vkimg_image keep = l[1];
    vkimg_image_alloc(&l[1], 3, 1, 3, VKIMG_U8, NULL);
    CHECK(vki_ktx2_encode(l, 3, &b, &len, &e) == VKIMG_E_USAGE && !b, "level 1 of 3x1 (must be 2x1)");
    vkimg_image_free(&l[1]);
    vkimg_image_alloc(&l[1], 2, 1, 4, VKIMG_U8, NULL);
    CHECK(vki_ktx2_encode(l, 3, &b, &len, &e) == VKIMG_E_USAGE && !b, "mixed channel counts");
    vkimg_image_free(&l[1]);
    vkimg_image_alloc(&l[1], 2, 1, 3, VKIMG_U16, NULL);
    CHECK(vki_ktx2_encode(l, 3, &b, &len, &e) == VKIMG_E_USAGE && !b, "mixed formats");
    vkimg_image_free(&l[1]);
    l[1] = keep;
    free_chain(l, 3);
    l = make_chain(4, 4, 1, VKIMG_U32, 1);
    CHECK(vki_ktx2_encode(l, 1, &b, &len, &e) == VKIMG_E_USAGE && !b, "u32 samples");
    free_chain(l, 1);
    l = make_chain(4, 4, 3, VKIMG_U16, 1);
    vki_ktx2_opts o = { .srgb = true };
    CHECK(vki_ktx2_encode_ex(l, 1, &o, &b, &len, &e) == VKIMG_E_USAGE && !b, "sRGB u16");
    free_chain(l, 1);
    l = make_chain(4, 4, 2, VKIMG_U8, 1);
    CHECK(vki_ktx2_encode_ex(l, 1, &o, &b, &len, &e) == VKIMG_E_USAGE && !b, "sRGB gray + alpha");
    free_chain(l, 1);
}

/* One corruption: apply f to a copy of the file, expect a rejection. */
typedef struct corrupt {
    const char *what;
    size_t off;   /* byte to change, or field offset */
    int kind;     /* 0: set u32 at off to val; 1: set u64; 2: xor byte; 3: add to u32 */
    uint64_t val;
} corrupt;

static void test_corrupt(void)
{
    /* 5x3 RGB8, full chain: texel 3, alignment 12, level 2 (3 bytes) padded with 9 */
    vkimg_image *l = make_chain(5, 3, 3, VKIMG_U8, 3);
    unsigned char *b = NULL;
    size_t len;
    vkimg_err e;
    CHECK(vki_ktx2_encode(l, 3, &b, &len, &e) == 0, "encode");
    char msg[1024];
    CHECK(decodes(b, len, msg, sizeof msg) == 0, "the original is valid: %s", msg);
    const uint32_t dfd = rd32(b + 48), kvd = rd32(b + 56), kvd_len = rd32(b + 60);
    const uint64_t l0 = rd64(b + 80), l2 = rd64(b + 80 + 48);
    const corrupt cs[] = {
        { "identifier byte 0", 0, 2, 0x01 },
        { "identifier byte 5 ('2')", 5, 2, 0x03 },
        { "identifier CR-LF", 8, 2, 0x07 },
        { "vkFormat R8G8B8_SNORM (unsupported)", 12, 0, 24 },
        { "vkFormat R16G16B16_UNORM (other texel size)", 12, 0, 84 },
        { "vkFormat R8G8B8_SRGB (DFD transfer mismatch)", 12, 0, 29 },
        { "vkFormat undefined", 12, 0, 0 },
        { "typeSize 2", 16, 0, 2 },
        { "typeSize 0", 16, 0, 0 },
        { "pixelWidth 0", 20, 0, 0 },
        { "pixelWidth 6 (level sizes)", 20, 0, 6 },
        { "pixelWidth 4 (level sizes)", 20, 0, 4 },
        { "pixelHeight 4 (level sizes)", 24, 0, 4 },
        { "pixelDepth 1", 28, 0, 1 },
        { "layerCount 1", 32, 0, 1 },
        { "faceCount 0", 36, 0, 0 },
        { "faceCount 6", 36, 0, 6 },
        { "levelCount 4 (over the maximum)", 40, 0, 4 },
        { "levelCount 2 (index mismatch)", 40, 0, 2 },
        { "levelCount 0 (index mismatch)", 40, 0, 0 },
        { "supercompressionScheme 2", 44, 0, 2 },
        { "supercompressionScheme 0x10001", 44, 0, 0x10001 },
        { "dfdByteOffset + 4", 48, 3, 4 },
        { "dfdByteOffset past the end", 48, 0, 0xfffffff0u },
        { "dfdByteLength - 4 (DFD size mismatch)", 52, 3, (uint64_t)-4 },
        { "dfdByteLength + 4 (DFD size mismatch)", 52, 3, 4 },
        { "dfdByteLength huge", 52, 0, 0xfffffff0u },
        { "kvdByteOffset + 4", 56, 3, 4 },
        { "kvdByteOffset 0", 56, 0, 0 },
        { "kvdByteLength - 4", 60, 3, (uint64_t)-4 },
        { "kvdByteLength + 4", 60, 3, 4 },
        { "kvdByteLength 0 (offset not 0)", 60, 0, 0 },
        { "sgdByteOffset 8", 64, 1, 8 },
        { "sgdByteLength 4", 72, 1, 4 },
        { "level 0 byteOffset past the end", 80, 1, 0xffffffff00ull },
        { "level 0 byteOffset + 12 (aligned, wrong)", 80, 1, l0 + 12 },
        { "level 0 byteOffset + 1 (misaligned)", 80, 1, l0 + 1 },
        { "level 2 byteOffset + 4 (misaligned)", 80 + 48, 1, l2 + 4 },
        { "level 2 byteOffset - 12", 80 + 48, 1, l2 - 12 },
        { "level 0 byteLength + 1", 88, 1, 46 },
        { "level 0 byteLength huge", 88, 1, 0xfffffffffffffff0ull },
        { "level 1 uncompressedByteLength", 80 + 24 + 16, 1, 7 },
        { "level 2 byteLength 0", 80 + 48 + 8, 1, 0 },
        { "dfdTotalSize + 4", dfd, 3, 4 },
        { "DFD descriptorType 1", dfd + 4, 0, 1u << 17 },
        { "DFD vendorId", dfd + 4, 0, 1 },
        { "DFD versionNumber 1", dfd + 8, 2, 0x03 },
        { "DFD descriptorBlockSize - 16", dfd + 8, 3, (uint64_t)-(16 << 16) },
        { "DFD descriptorBlockSize + 4", dfd + 8, 3, 4 << 16 },
        { "DFD colour model YUVSDA", dfd + 12, 2, 0x03 },
        { "DFD transfer sRGB on UNORM", dfd + 14, 2, 0x03 },
        { "DFD flags 2", dfd + 15, 2, 0x02 },
        { "DFD texelBlockDimension0", dfd + 16, 2, 0x01 },
        { "DFD bytesPlane0 4", dfd + 20, 2, 0x07 },
        { "DFD bytesPlane1", dfd + 21, 2, 0x01 },
        { "DFD sample 0 bitOffset", dfd + 28, 2, 0x08 },
        { "DFD sample 1 bitLength", dfd + 28 + 16 + 2, 2, 0x0f },
        { "DFD sample 2 channel id alpha", dfd + 28 + 32 + 3, 2, 0x0d },
        { "DFD sample 0 FLOAT qualifier", dfd + 28 + 3, 2, 0x80 },
        { "DFD sample 0 LINEAR qualifier", dfd + 28 + 3, 2, 0x10 },
        { "DFD sample 1 position", dfd + 28 + 16 + 4, 2, 0x01 },
        { "DFD sample 2 lower", dfd + 28 + 32 + 8, 2, 0x01 },
        { "DFD sample 2 upper", dfd + 28 + 32 + 12, 2, 0x01 },
        { "key/value length 1", kvd, 0, 1 },
        { "key/value length past kvdByteLength", kvd, 3, 64 },
        { "key/value length - 1 (padding short)", kvd, 3, (uint64_t)-1 },
        { "key 'KTXorientation' -> 'KTXOrientation' (reserved, unknown)", kvd + 4 + 3, 2, 0x20 },
        { "key 'KTXorientation' -> 'LTXorientation' (order)", kvd + 4, 2, 0x07 },
        { "KTXorientation value 'xd'", kvd + 4 + 15, 2, 0x0a },
        { "KTXorientation value without NUL", kvd + 4 + 17, 2, 0x41 },
        { "key without NUL (the key's NUL)", kvd + 4 + 14, 2, 0x41 },
        { "valuePadding not zero", kvd + 4 + 18, 2, 0x01 },
        { "mipPadding not zero", l2 - 1, 2, 0x01 },
        { "level 2 padding not zero", l2 + 3, 2, 0x01 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        unsigned char *c = malloc(len);
        memcpy(c, b, len);
        unsigned char *p = c + cs[i].off;
        if (cs[i].off + (cs[i].kind == 1 ? 8 : cs[i].kind == 2 ? 1 : 4) > len) {
            CHECK(0, "%s: offset outside the file", cs[i].what);
            free(c);
            continue;
        }
        switch (cs[i].kind) {
        case 0: wr32(p, (uint32_t)cs[i].val); break;
        case 1: wr64(p, cs[i].val); break;
        case 2: *p ^= (unsigned char)cs[i].val; break;
        case 3: wr32(p, rd32(p) + (uint32_t)cs[i].val); break;
        }
        int rc = decodes(c, len, msg, sizeof msg);
        CHECK(rc == VKIMG_E_RUNTIME, "%s: not rejected (rc %d)", cs[i].what, rc);
        if (rc == VKIMG_E_RUNTIME)
            CHECK(strncmp(msg, "ktx2: ", 6) == 0 && !strchr(msg, '\n'), "%s: message '%s'", cs[i].what, msg);
        free(c);
    }
    /* truncated at every length, and one byte too many */
    for (size_t n = 0; n < len; n++) {
        unsigned char *t = malloc(n ? n : 1);
        memcpy(t, b, n);
        CHECK(decodes(t, n, NULL, 0) == VKIMG_E_RUNTIME, "truncated to %zu of %zu", n, len);
        free(t);
    }
    unsigned char *t = malloc(len + 1);
    memcpy(t, b, len);
    t[len] = 0;
    CHECK(decodes(t, len + 1, msg, sizeof msg) == VKIMG_E_RUNTIME, "a trailing byte");
    free(t);
    /* every single bit flipped in the header, index, DFD and key/value data: no crash;
     * accepted only where the field is free */
    const size_t meta_end = (size_t)l2;
    int accepted = 0;
    for (size_t i = 0; i < meta_end; i++)
        for (int bit = 0; bit < 8; bit++) {
            unsigned char *c = malloc(len);
            memcpy(c, b, len);
            c[i] ^= (unsigned char)(1u << bit);
            int rc = decodes(c, len, NULL, 0);
            CHECK(rc == 0 || rc == VKIMG_E_RUNTIME, "bit %d of byte %zu: rc %d", bit, i, rc);
            if (rc == 0) {
                accepted++;
                /* primaries (any), transfer (any but sRGB), flags (premultiplied); a key's
                 * "KTX" may turn into a user key's first bytes; the KTXwriter pair: its
                 * length may take in a padding byte, its value is free text */
                int free_field = (i >= dfd + 13 && i <= dfd + 15) || (i >= kvd + 4 && i < kvd + 7) ||
                                 (i >= kvd + 24 && i < kvd + kvd_len);
                CHECK(free_field, "bit %d of byte %zu flipped: still accepted", bit, i);
            }
            free(c);
        }
    CHECK(accepted > 0, "some flips are harmless (primaries, writer text)");
    free(b);
    free_chain(l, 3);

    /* an otherwise valid file with levelCount 0 (base level only) is accepted */
    l = make_chain(6, 4, 4, VKIMG_U8, 1);
    CHECK(vki_ktx2_encode(l, 1, &b, &len, &e) == 0, "encode 1 level");
    wr32(b + 40, 0);
    vkimg_image *d = NULL;
    int nd = 0;
    CHECK(vki_ktx2_decode(b, len, &d, &nd, NULL, &e) == 0 && nd == 1 && d[0].w == 6 && d[0].h == 4 &&
              memcmp(d[0].data, l[0].data, 96) == 0,
          "levelCount 0: %s", e.msg);
    vki_ktx2_free_levels(d, nd);
    free(b);
    free_chain(l, 1);
    CHECK(vki_ktx2_decode(NULL, 0, &d, &nd, NULL, &e) == VKIMG_E_RUNTIME && !d && nd == 0, "NULL input");

    /* R8G8_SRGB, which the writer does not make, from another writer: accepted */
    l = make_chain(3, 2, 2, VKIMG_U8, 2);
    CHECK(vki_ktx2_encode(l, 2, &b, &len, &e) == 0, "encode rg8");
    uint32_t dfd2 = rd32(b + 48);
    wr32(b + 12, 22);
    b[dfd2 + 14] = 2;
    vki_ktx2_info info;
    CHECK(vki_ktx2_decode(b, len, &d, &nd, &info, &e) == 0 && nd == 2 && info.transfer == 2 && info.vk_format == 22 &&
              memcmp(d[1].data, l[1].data, 2) == 0,
          "R8G8_SRGB: %s", e.msg);
    vki_ktx2_free_levels(d, nd);
    b[dfd2 + 14] = 1;
    CHECK(decodes(b, len, NULL, 0) == VKIMG_E_RUNTIME, "R8G8_SRGB with a linear DFD");
    free(b);
    free_chain(l, 2);
    /* sRGB RGBA: the alpha sample must carry the LINEAR qualifier */
    l = make_chain(2, 2, 4, VKIMG_U8, 1);
    vki_ktx2_opts so = { .srgb = true };
    CHECK(vki_ktx2_encode_ex(l, 1, &so, &b, &len, &e) == 0 && decodes(b, len, NULL, 0) == 0, "encode srgb rgba8");
    dfd2 = rd32(b + 48);
    b[dfd2 + 28 + 48 + 3] &= 0x0f;
    CHECK(decodes(b, len, NULL, 0) == VKIMG_E_RUNTIME, "sRGB alpha sample without LINEAR");
    free(b);
    free_chain(l, 1);
}

int main(void)
{
    test_chains();
    test_writer_refuses();
    test_corrupt();
    return t_done("test_ktx2");
}

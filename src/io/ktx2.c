/* KTX 2.0 writer and strict reader (see ktx2.h). Field names follow the KTX 2.0
 * specification and the Khronos Data Format Specification 1.3+ (basic descriptor
 * block). All multi-byte fields are little-endian in the file; they are read and
 * written byte by byte, and 16/32-bit samples are swapped on big-endian hosts. */
#include "io/io_priv.h"
#include "io/ktx2.h"
#include "core/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char ktx2_id[12] = { 0xAB, 0x4B, 0x54, 0x58, 0x20, 0x32, 0x30, 0xBB, 0x0D, 0x0A, 0x1A, 0x0A };

/* Khronos Data Format values (khr_df.h) */
#define DF_VENDOR_KHRONOS 0u
#define DF_TYPE_BASIC 0u
#define DF_VERSION 2u /* KHR_DF_VERSIONNUMBER_1_3 (latest) */
#define DF_MODEL_RGBSDA 1u
#define DF_PRIMARIES_BT709 1u
#define DF_TRANSFER_UNSPECIFIED 0u
#define DF_TRANSFER_LINEAR 1u
#define DF_TRANSFER_SRGB 2u
#define DF_FLAG_PREMULTIPLIED 1u
#define DF_CHANNEL_ALPHA 15u
#define DF_Q_LINEAR 0x10u
#define DF_Q_SIGNED 0x40u
#define DF_Q_FLOAT 0x80u
#define F32_MINUS_ONE 0xBF800000u
#define F32_ONE 0x3F800000u

#define HEADER_SIZE 80
#define LEVEL_INDEX_ENTRY 24
#define BASIC_BLOCK_HEAD 24
#define SAMPLE_SIZE 16

/* ------------------------------------------------------------------ formats */

typedef struct kformat {
    uint32_t vk;
    vkimg_fmt fmt;
    int c;
    bool srgb;
} kformat;

static const kformat formats[] = {
    { 9, VKIMG_U8, 1, false },    { 16, VKIMG_U8, 2, false },   { 23, VKIMG_U8, 3, false },
    { 37, VKIMG_U8, 4, false },   { 15, VKIMG_U8, 1, true },    { 22, VKIMG_U8, 2, true },
    { 29, VKIMG_U8, 3, true },    { 43, VKIMG_U8, 4, true },    { 70, VKIMG_U16, 1, false },
    { 77, VKIMG_U16, 2, false },  { 84, VKIMG_U16, 3, false },  { 91, VKIMG_U16, 4, false },
    { 100, VKIMG_F32, 1, false }, { 103, VKIMG_F32, 2, false }, { 106, VKIMG_F32, 3, false },
    { 109, VKIMG_F32, 4, false },
};

static const kformat *format_of_vk(uint32_t vk)
{
    for (size_t i = 0; i < VKI_ARRAY_LEN(formats); i++)
        if (formats[i].vk == vk)
            return &formats[i];
    return NULL;
}

static const kformat *format_of(vkimg_fmt f, int c, bool srgb)
{
    for (size_t i = 0; i < VKI_ARRAY_LEN(formats); i++)
        if (formats[i].fmt == f && formats[i].c == c && formats[i].srgb == srgb)
            return &formats[i];
    return NULL;
}

static unsigned comp_size(vkimg_fmt f)
{
    return f == VKIMG_U8 ? 1 : f == VKIMG_U16 ? 2 : 4;
}

static uint64_t lcm4(uint64_t t) /* lcm(t, 4) */
{
    return t % 4 == 0 ? t : t % 2 == 0 ? 2 * t : 4 * t;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static int floor_log2(uint64_t v)
{
    int r = 0;
    while (v >>= 1)
        r++;
    return r;
}

static int host_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Copies n samples of size cs from src to dst, converting between host order and
 * little-endian (the same operation both ways). */
static void copy_le(unsigned char *dst, const unsigned char *src, size_t n, unsigned cs)
{
    if (cs == 1 || host_le()) {
        memcpy(dst, src, n * cs);
        return;
    }
    for (size_t i = 0; i < n; i++)
        for (unsigned k = 0; k < cs; k++)
            dst[i * cs + k] = src[i * cs + cs - 1 - k];
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* The expected basic DFD block's sample i for format kf under transfer function tf. */
static void dfd_sample(const kformat *kf, int i, uint32_t tf, uint32_t w[4])
{
    const unsigned cs = comp_size(kf->fmt), bits = 8 * cs;
    const uint32_t ch = i == 3 ? DF_CHANNEL_ALPHA : (uint32_t)i;
    uint32_t q = kf->fmt == VKIMG_F32 ? DF_Q_FLOAT | DF_Q_SIGNED : 0;
    if (ch == DF_CHANNEL_ALPHA && tf != DF_TRANSFER_LINEAR && tf != DF_TRANSFER_UNSPECIFIED)
        q |= DF_Q_LINEAR; /* alpha is linear whatever the colour's transfer function */
    w[0] = (uint32_t)i * bits | (bits - 1) << 16 | (ch | q) << 24;
    w[1] = 0; /* samplePosition0..3 */
    w[2] = kf->fmt == VKIMG_F32 ? F32_MINUS_ONE : 0;
    w[3] = kf->fmt == VKIMG_F32 ? F32_ONE : (uint32_t)((1ull << bits) - 1);
}

static size_t dfd_size(int c)
{
    return 4 + BASIC_BLOCK_HEAD + SAMPLE_SIZE * (size_t)c;
}

static void write_dfd(unsigned char *p, const kformat *kf)
{
    const uint32_t tf = kf->srgb ? DF_TRANSFER_SRGB : DF_TRANSFER_LINEAR;
    const uint32_t block = BASIC_BLOCK_HEAD + SAMPLE_SIZE * (uint32_t)kf->c;
    put32(p, 4 + block);                                         /* dfdTotalSize */
    put32(p + 4, DF_VENDOR_KHRONOS | DF_TYPE_BASIC << 17);       /* vendorId, descriptorType */
    put32(p + 8, DF_VERSION | block << 16);                      /* versionNumber, descriptorBlockSize */
    put32(p + 12, DF_MODEL_RGBSDA | DF_PRIMARIES_BT709 << 8 | tf << 16); /* flags 0: straight alpha */
    put32(p + 16, 0);                                            /* texelBlockDimension0..3: 1x1x1x1 */
    put32(p + 20, (uint32_t)kf->c * comp_size(kf->fmt));         /* bytesPlane0 */
    put32(p + 24, 0);                                            /* bytesPlane4..7 */
    for (int i = 0; i < kf->c; i++) {
        uint32_t w[4];
        dfd_sample(kf, i, tf, w);
        for (int k = 0; k < 4; k++)
            put32(p + 28 + SAMPLE_SIZE * (size_t)i + 4 * (size_t)k, w[k]);
    }
}

/* ------------------------------------------------------------------ writer */

typedef struct kv {
    const char *key, *value; /* value: a string, written with its NUL */
} kv;

static size_t kv_size(const kv *a, int n) /* kvdByteLength */
{
    size_t s = 0;
    for (int i = 0; i < n; i++)
        s += 4 + align_up(strlen(a[i].key) + 1 + strlen(a[i].value) + 1, 4);
    return s;
}

static size_t write_kv(unsigned char *p, const kv *a, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t kl = strlen(a[i].key) + 1, vl = strlen(a[i].value) + 1;
        put32(p + at, (uint32_t)(kl + vl));
        memcpy(p + at + 4, a[i].key, kl);
        memcpy(p + at + 4 + kl, a[i].value, vl);
        size_t padded = align_up(kl + vl, 4);
        memset(p + at + 4 + kl + vl, 0, padded - kl - vl);
        at += 4 + padded;
    }
    return at;
}

int vki_ktx2_encode(const vkimg_image *levels, int nlevels, unsigned char **out, size_t *outlen, vkimg_err *e)
{
    return vki_ktx2_encode_ex(levels, nlevels, NULL, out, outlen, e);
}

int vki_ktx2_encode_ex(const vkimg_image *levels, int nlevels, const vki_ktx2_opts *o, unsigned char **out,
                       size_t *outlen, vkimg_err *e)
{
    if (!out || !outlen)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: NULL output");
    *out = NULL;
    *outlen = 0;
    const bool srgb = o && o->srgb;
    if (!levels || nlevels < 1 || nlevels > VKI_KTX2_MAX_LEVELS)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: %d levels (1..%d)", nlevels, VKI_KTX2_MAX_LEVELS);
    const vkimg_image *l0 = &levels[0];
    if (l0->w < 1 || l0->h < 1)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: level 0 is %dx%d", l0->w, l0->h);
    if (l0->fmt != VKIMG_U8 && l0->fmt != VKIMG_U16 && l0->fmt != VKIMG_F32)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: %s samples are not supported (u8, u16, f32)",
                        vkimg_fmt_name(l0->fmt));
    if (srgb && l0->fmt != VKIMG_U8)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: sRGB formats exist for u8 samples only");
    const kformat *kf = format_of(l0->fmt, l0->c, srgb);
    if (!kf)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: %d channels (1..4)", l0->c);
    if (srgb && kf->c == 2) /* gray + alpha: VK_FORMAT_R8G8_SRGB would decode the alpha as sRGB too */
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: no sRGB format for gray + alpha (R8G8_SRGB decodes both channels)");
    const int maxl = floor_log2((uint64_t)(l0->w > l0->h ? l0->w : l0->h)) + 1;
    if (nlevels > maxl)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: %d levels for %dx%d (at most %d)", nlevels, l0->w, l0->h, maxl);

    const unsigned cs = comp_size(kf->fmt);
    const uint64_t texel = (uint64_t)cs * (uint64_t)kf->c, A = lcm4(texel);
    uint64_t lsize[VKI_KTX2_MAX_LEVELS];
    for (int p = 0; p < nlevels; p++) {
        const vkimg_image *l = &levels[p];
        const int w = l0->w >> p > 1 ? l0->w >> p : 1, h = l0->h >> p > 1 ? l0->h >> p : 1;
        if (l->w != w || l->h != h || l->c != l0->c || l->fmt != l0->fmt || !l->data)
            return vki_fail(e, VKIMG_E_USAGE, "ktx2: level %d is %dx%d %s x%d, expected %dx%d %s x%d%s", p, l->w,
                            l->h, vkimg_fmt_name(l->fmt), l->c, w, h, vkimg_fmt_name(l0->fmt), l0->c,
                            l->data ? "" : " (no data)");
        const uint64_t px = (uint64_t)w * (uint64_t)h; /* < 2^62 */
        if (px > SIZE_MAX / 4 / texel)
            return vki_fail(e, VKIMG_E_RUNTIME, "ktx2: level %d (%dx%d) is too large", p, w, h);
        lsize[p] = px * texel;
    }

    char writer[64];
    snprintf(writer, sizeof writer, "vkimg %s", VKIMG_VERSION);
    kv kvs[3];
    int nkv = 0;
    kvs[nkv++] = (kv){ "KTXorientation", "rd" };
    if (kf->c <= 2)
        kvs[nkv++] = (kv){ "KTXswizzle", kf->c == 1 ? "rrr1" : "rrrg" };
    kvs[nkv++] = (kv){ "KTXwriter", writer };

    const size_t dfd_off = HEADER_SIZE + LEVEL_INDEX_ENTRY * (size_t)nlevels, dfd_len = dfd_size(kf->c);
    const size_t kvd_off = dfd_off + dfd_len, kvd_len = kv_size(kvs, nkv);
    uint64_t off[VKI_KTX2_MAX_LEVELS];
    uint64_t at = align_up(kvd_off + kvd_len, A);
    for (int p = nlevels - 1; p >= 0; p--) { /* smallest level first */
        off[p] = at;
        const uint64_t step = p ? align_up(lsize[p], A) : lsize[p];
        if (step > SIZE_MAX / 2 - at)
            return vki_fail(e, VKIMG_E_RUNTIME, "ktx2: file too large");
        at += step;
    }
    const size_t total = (size_t)at;
    unsigned char *b = calloc(1, total); /* zero: mipPadding, valuePadding */
    if (!b)
        return vki_fail(e, VKIMG_E_RUNTIME, "ktx2: out of memory (%zu bytes)", total);

    memcpy(b, ktx2_id, 12);
    put32(b + 12, kf->vk);
    put32(b + 16, cs);                 /* typeSize */
    put32(b + 20, (uint32_t)l0->w);    /* pixelWidth */
    put32(b + 24, (uint32_t)l0->h);    /* pixelHeight */
    put32(b + 28, 0);                  /* pixelDepth */
    put32(b + 32, 0);                  /* layerCount */
    put32(b + 36, 1);                  /* faceCount */
    put32(b + 40, (uint32_t)nlevels);  /* levelCount */
    put32(b + 44, 0);                  /* supercompressionScheme */
    put32(b + 48, (uint32_t)dfd_off);
    put32(b + 52, (uint32_t)dfd_len);
    put32(b + 56, (uint32_t)kvd_off);
    put32(b + 60, (uint32_t)kvd_len);
    put64(b + 64, 0);                  /* sgdByteOffset */
    put64(b + 72, 0);                  /* sgdByteLength */
    for (int p = 0; p < nlevels; p++) {
        unsigned char *li = b + HEADER_SIZE + LEVEL_INDEX_ENTRY * (size_t)p;
        put64(li, off[p]);
        put64(li + 8, lsize[p]);       /* byteLength */
        put64(li + 16, lsize[p]);      /* uncompressedByteLength */
        copy_le(b + off[p], levels[p].data, (size_t)lsize[p] / cs, cs);
    }
    write_dfd(b + dfd_off, kf);
    write_kv(b + kvd_off, kvs, nkv);
    *out = b;
    *outlen = total;
    return 0;
}

/* ------------------------------------------------------------------ reader */

void vki_ktx2_free_levels(vkimg_image *levels, int nlevels)
{
    if (!levels)
        return;
    for (int i = 0; i < nlevels; i++)
        free(levels[i].data);
    free(levels);
}

#define BAD(...) vki_fail(e, VKIMG_E_RUNTIME, "ktx2: " __VA_ARGS__)

/* Whether n bytes are valid UTF-8 (shortest forms, no surrogates, <= U+10FFFF). */
static bool utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            k = 1, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            k = 2, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            k = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i - 1 < k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

/* Checks the DFD at d (dfdByteLength n, already bounds-checked) against format kf. */
static int check_dfd(const unsigned char *d, size_t n, const kformat *kf, vki_ktx2_info *info, vkimg_err *e)
{
    if (n < 4 || get32(d) != n)
        return BAD("dfdTotalSize %u differs from dfdByteLength %zu", n >= 4 ? get32(d) : 0, n);
    /* the blocks must fill the descriptor exactly */
    for (size_t at = 4; at < n;) {
        if (n - at < 8)
            return BAD("DFD: a descriptor block header runs past the descriptor");
        size_t bs = get32(d + at + 4) >> 16;
        if (bs < 8 || bs % 4 || bs > n - at)
            return BAD("DFD: descriptor block size %zu at DFD offset %zu is invalid", bs, at);
        at += bs;
    }
    if (n < 4 + BASIC_BLOCK_HEAD)
        return BAD("DFD: no basic descriptor block");
    const unsigned char *k = d + 4;
    const uint32_t w0 = get32(k), w1 = get32(k + 4), w2 = get32(k + 8);
    if ((w0 & 0x1ffff) != DF_VENDOR_KHRONOS || w0 >> 17 != DF_TYPE_BASIC)
        return BAD("DFD: the first block is not a Khronos basic descriptor block (vendor %u, type %u)", w0 & 0x1ffff,
                   w0 >> 17);
    if ((w1 & 0xffff) != DF_VERSION)
        return BAD("DFD: basic block version %u (expected %u)", w1 & 0xffff, DF_VERSION);
    const size_t bs = w1 >> 16;
    if (bs < BASIC_BLOCK_HEAD || (bs - BASIC_BLOCK_HEAD) % SAMPLE_SIZE)
        return BAD("DFD: basic block size %zu is not 24 + 16 * samples", bs);
    const size_t ns = (bs - BASIC_BLOCK_HEAD) / SAMPLE_SIZE;
    const uint32_t model = w2 & 0xff, prim = w2 >> 8 & 0xff, tf = w2 >> 16 & 0xff, flags = w2 >> 24;
    if (model != DF_MODEL_RGBSDA)
        return BAD("DFD: colour model %u (the format's is RGBSDA, 1)", model);
    if (flags > DF_FLAG_PREMULTIPLIED)
        return BAD("DFD: unknown flags 0x%x", flags);
    if (kf->srgb ? tf != DF_TRANSFER_SRGB : (tf == DF_TRANSFER_SRGB && kf->fmt == VKIMG_U8))
        return BAD("DFD: transfer function %u does not fit vkFormat %u (sRGB exactly for the *_SRGB formats)", tf,
                   kf->vk);
    if (get32(k + 12) != 0)
        return BAD("DFD: texel block dimensions are not 1x1x1x1");
    const uint32_t texel = (uint32_t)kf->c * comp_size(kf->fmt);
    if (get32(k + 16) != texel || get32(k + 20) != 0)
        return BAD("DFD: bytesPlane0..7 are not %u, 0, ...", texel);
    if (ns != (size_t)kf->c)
        return BAD("DFD: %zu samples for a %d-channel format", ns, kf->c);
    for (int i = 0; i < kf->c; i++) {
        uint32_t want[4];
        dfd_sample(kf, i, tf, want);
        for (int j = 0; j < 4; j++)
            if (get32(k + BASIC_BLOCK_HEAD + SAMPLE_SIZE * (size_t)i + 4 * (size_t)j) != want[j])
                return BAD("DFD: sample %d word %d is 0x%08x, the format needs 0x%08x", i, j,
                           get32(k + BASIC_BLOCK_HEAD + SAMPLE_SIZE * (size_t)i + 4 * (size_t)j), want[j]);
    }
    if (info) {
        info->transfer = (int)tf;
        info->primaries = (int)prim;
        info->premultiplied = flags & DF_FLAG_PREMULTIPLIED;
    }
    return 0;
}

static bool value_is(const unsigned char *v, size_t vn, const char *s) /* v is s plus its NUL */
{
    size_t n = strlen(s);
    return vn == n + 1 && memcmp(v, s, n + 1) == 0;
}

/* Checks the key/value data at file offset off (n bytes, bounds-checked). */
static int check_kvd(const unsigned char *b, size_t off, size_t n, bool one_d, vki_ktx2_info *info, vkimg_err *e)
{
    static const char *const known[] = { "KTXcubemapIncomplete", "KTXorientation", "KTXglFormat",
                                         "KTXdxgiFormat__", "KTXmetalPixelFormat", "KTXswizzle",
                                         "KTXwriter", "KTXwriterScParams", "KTXastcDecodeMode",
                                         "KTXanimData" };
    const unsigned char *prev = NULL;
    size_t prevn = 0, at = off, end = off + n;
    bool writer = false, scparams = false;
    while (at < end) {
        if (end - at < 4)
            return BAD("key/value data: a keyAndValueByteLength runs past kvdByteLength");
        const size_t kvl = get32(b + at);
        const unsigned char *p = b + at + 4;
        if (kvl < 2 || kvl > end - at - 4)
            return BAD("key/value data: keyAndValueByteLength %zu at offset %zu is invalid", kvl, at);
        const unsigned char *nul = memchr(p, 0, kvl);
        if (!nul || nul == p)
            return BAD("key/value data: a key at offset %zu is empty or not NUL-terminated", at);
        const size_t kn = (size_t)(nul - p), vn = kvl - kn - 1;
        const unsigned char *v = nul + 1;
        if (!utf8_ok(p, kn) || (kn >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf))
            return BAD("key/value data: a key at offset %zu is not UTF-8 without BOM", at);
        if (prev) {
            int c = memcmp(prev, p, prevn < kn ? prevn : kn);
            if (c > 0 || (c == 0 && prevn >= kn))
                return BAD("key/value data: keys are not sorted and unique ('%.*s' after '%.*s')", (int)kn,
                           (const char *)p, (int)prevn, (const char *)prev);
        }
        prev = p;
        prevn = kn;
        const size_t pad = align_up(at + 4 + kvl, 4) - (at + 4 + kvl);
        if (pad > end - at - 4 - kvl)
            return BAD("key/value data: valuePadding runs past kvdByteLength");
        for (size_t i = 0; i < pad; i++)
            if (p[kvl + i])
                return BAD("key/value data: valuePadding is not zero");
        if (kn >= 3 && (memcmp(p, "KTX", 3) == 0 || memcmp(p, "ktx", 3) == 0)) {
            size_t i = 0;
            while (i < VKI_ARRAY_LEN(known) && !(strlen(known[i]) == kn && memcmp(known[i], p, kn) == 0))
                i++;
            if (i == VKI_ARRAY_LEN(known))
                return BAD("key/value data: reserved key '%.*s' is not defined by KTX 2.0", (int)kn, (const char *)p);
#define KEY(s) (kn == sizeof s - 1 && memcmp(p, s, kn) == 0)
            if (KEY("KTXglFormat") || KEY("KTXdxgiFormat__") || KEY("KTXmetalPixelFormat"))
                return BAD("key/value data: %.*s with a vkFormat other than VK_FORMAT_UNDEFINED", (int)kn,
                           (const char *)p);
            if (KEY("KTXcubemapIncomplete") || KEY("KTXanimData"))
                return BAD("key/value data: %.*s in a file that is not an array texture", (int)kn, (const char *)p);
            if (KEY("KTXorientation")) {
                bool ok = vn == (one_d ? 2u : 3u) && v[vn - 1] == 0 && (v[0] == 'r' || v[0] == 'l') &&
                          (one_d || v[1] == 'd' || v[1] == 'u');
                if (!ok)
                    return BAD("key/value data: invalid KTXorientation value");
            }
            if (KEY("KTXswizzle")) {
                bool ok = vn == 5 && v[4] == 0;
                for (size_t i2 = 0; ok && i2 < 4; i2++)
                    ok = strchr("rgba01", v[i2]) != NULL && v[i2];
                if (!ok)
                    return BAD("key/value data: invalid KTXswizzle value");
            }
            if (KEY("KTXastcDecodeMode") && !value_is(v, vn, "rgb9e5") && !value_is(v, vn, "unorm8"))
                return BAD("key/value data: invalid KTXastcDecodeMode value");
            if (KEY("KTXwriter")) {
                writer = true;
                if (info) {
                    size_t m = vn && v[vn - 1] == 0 ? vn - 1 : vn;
                    if (m >= sizeof info->writer)
                        m = sizeof info->writer - 1;
                    memcpy(info->writer, v, m);
                    info->writer[m] = 0;
                }
            }
            if (KEY("KTXwriterScParams"))
                scparams = true;
#undef KEY
        }
        at += 4 + kvl + pad;
    }
    if (scparams && !writer)
        return BAD("key/value data: KTXwriterScParams without KTXwriter");
    return 0;
}

int vki_ktx2_decode(const unsigned char *b, size_t len, vkimg_image **levels, int *nlevels, vki_ktx2_info *info,
                    vkimg_err *e)
{
    if (!levels || !nlevels)
        return vki_fail(e, VKIMG_E_USAGE, "ktx2: NULL output");
    *levels = NULL;
    *nlevels = 0;
    if (info)
        memset(info, 0, sizeof *info);
    if (!b || len < HEADER_SIZE || memcmp(b, ktx2_id, 12) != 0)
        return BAD("not a KTX 2.0 file (identifier)");
    const uint32_t vk = get32(b + 12), type_size = get32(b + 16), pw = get32(b + 20), ph = get32(b + 24),
                   pd = get32(b + 28), layers = get32(b + 32), faces = get32(b + 36), lc = get32(b + 40),
                   scheme = get32(b + 44), dfd_off = get32(b + 48), dfd_len = get32(b + 52),
                   kvd_off = get32(b + 56), kvd_len = get32(b + 60);
    const uint64_t sgd_off = get64(b + 64), sgd_len = get64(b + 72);

    const kformat *kf = format_of_vk(vk);
    if (!kf)
        return BAD("vkFormat %u is not supported (8/16-bit UNORM, sRGB and 32-bit SFLOAT R..RGBA only)", vk);
    if (info)
        info->vk_format = vk;
    const unsigned cs = comp_size(kf->fmt);
    if (type_size != cs)
        return BAD("typeSize %u for vkFormat %u (must be %u)", type_size, vk, cs);
    if (pw == 0)
        return BAD("pixelWidth is 0");
    if (faces == 6)
        return BAD("cube maps are not supported");
    if (faces != 1)
        return BAD("faceCount %u (must be 1 or 6)", faces);
    if (pd != 0)
        return BAD("3D textures are not supported (pixelDepth %u)", pd);
    if (layers != 0)
        return BAD("array textures are not supported (layerCount %u)", layers);
    if (scheme != 0)
        return BAD("supercompressionScheme %u is %s", scheme, scheme <= 3 ? "not supported" : "reserved or unknown");
    if (sgd_len != 0 || sgd_off != 0)
        return BAD("supercompression global data (offset %llu, length %llu) without supercompression",
                   (unsigned long long)sgd_off, (unsigned long long)sgd_len);
    if (pw > (1u << 24) || ph > (1u << 24))
        return BAD("the image is %ux%u, over vkimg's limit of 16777216 per side", pw, ph);
    const bool one_d = ph == 0;
    const uint32_t w0 = pw, h0 = one_d ? 1 : ph;
    const int maxl = floor_log2(pw > ph ? pw : ph) + 1;
    if (lc > (uint32_t)maxl)
        return BAD("levelCount %u for %ux%u (at most %d)", lc, pw, ph, maxl);
    const int n = lc ? (int)lc : 1;

    /* index */
    const size_t li_end = HEADER_SIZE + LEVEL_INDEX_ENTRY * (size_t)n;
    if (len < li_end)
        return BAD("the level index runs past the end of the file");
    if (dfd_off != li_end)
        return BAD("dfdByteOffset %u (the DFD follows the level index at %zu)", dfd_off, li_end);
    if (dfd_len > len - dfd_off)
        return BAD("the DFD (%u bytes at %u) runs past the end of the file", dfd_len, dfd_off);
    if (dfd_off % 4 || dfd_len % 4)
        return BAD("the DFD is not 4-byte aligned");
    if (kvd_len == 0 ? kvd_off != 0 : kvd_off != (uint64_t)dfd_off + dfd_len)
        return BAD("kvdByteOffset %u (must be %s)", kvd_off, kvd_len ? "dfdByteOffset + dfdTotalSize" : "0");
    if (kvd_len > len - (dfd_off + (size_t)dfd_len))
        return BAD("the key/value data (%u bytes at %u) runs past the end of the file", kvd_len, kvd_off);
    int rc = check_dfd(b + dfd_off, dfd_len, kf, info, e);
    if (!rc && kvd_len)
        rc = check_kvd(b, kvd_off, kvd_len, one_d, info, e);
    if (rc)
        return rc;

    /* levels: smallest first right after the key/value data, each aligned */
    const uint64_t texel = (uint64_t)cs * (uint64_t)kf->c, A = lcm4(texel);
    uint64_t at = align_up((uint64_t)dfd_off + dfd_len + kvd_len, A), prev_end = (uint64_t)dfd_off + dfd_len + kvd_len;
    uint64_t lsize[VKI_KTX2_MAX_LEVELS];
    for (int p = n - 1; p >= 0; p--) {
        const unsigned char *li = b + HEADER_SIZE + LEVEL_INDEX_ENTRY * (size_t)p;
        const uint64_t off = get64(li), bl = get64(li + 8), ubl = get64(li + 16);
        const uint64_t w = w0 >> p > 1 ? w0 >> p : 1, h = h0 >> p > 1 ? h0 >> p : 1;
        lsize[p] = w * h * texel; /* < 2^24 * 2^24 * 16 */
        if (bl != ubl)
            return BAD("level %d: byteLength %llu differs from uncompressedByteLength %llu", p,
                       (unsigned long long)bl, (unsigned long long)ubl);
        if (bl != lsize[p])
            return BAD("level %d: byteLength %llu, a %llux%llu level has %llu bytes", p, (unsigned long long)bl,
                       (unsigned long long)w, (unsigned long long)h, (unsigned long long)lsize[p]);
        if (off % A)
            return BAD("level %d: byteOffset %llu is not a multiple of %llu", p, (unsigned long long)off,
                       (unsigned long long)A);
        if (off != at)
            return BAD("level %d: byteOffset %llu, the layout puts it at %llu", p, (unsigned long long)off,
                       (unsigned long long)at);
        if (off > len || bl > len - off)
            return BAD("level %d (%llu bytes at %llu) runs past the end of the file", p, (unsigned long long)bl,
                       (unsigned long long)off);
        for (uint64_t i = prev_end; i < off; i++)
            if (b[i])
                return BAD("level %d: mipPadding is not zero", p);
        prev_end = off + bl;
        at = p ? align_up(prev_end, A) : prev_end;
    }
    if (at != len)
        return BAD("%llu bytes after level 0 at the end of the file", (unsigned long long)(len - at));

    vkimg_image *im = calloc((size_t)n, sizeof *im);
    if (!im)
        return vki_fail(e, VKIMG_E_RUNTIME, "ktx2: out of memory");
    for (int p = 0; p < n; p++) {
        const uint64_t w = w0 >> p > 1 ? w0 >> p : 1, h = h0 >> p > 1 ? h0 >> p : 1;
        if (vki_image_alloc(&im[p], (int)w, (int)h, kf->c, kf->fmt, false, e)) {
            vki_ktx2_free_levels(im, p);
            return VKIMG_E_RUNTIME;
        }
        copy_le(im[p].data, b + get64(b + HEADER_SIZE + LEVEL_INDEX_ENTRY * (size_t)p), (size_t)lsize[p] / cs, cs);
    }
    *levels = im;
    *nlevels = n;
    return 0;
}

int vki_ktx2_save(const char *path, const vkimg_image *levels, int n, vkimg_err *e)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    vkimg_err ke;
    int rc = vki_ktx2_encode(levels, n, &buf, &len, &ke);
    if (rc)
        return vki_fail(e, rc, "%s: %s", path, ke.msg);
    rc = vki_write_atomic(path, buf, len, e);
    free(buf);
    return rc;
}

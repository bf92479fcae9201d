/* EXIF trees: the IFDs that hold a picture's EXIF in a classic TIFF structure, read
 * from one and written into another. A TIFF file keeps its EXIF in its own IFDs:
 * IFD0's descriptive tags and the Exif and GPS IFDs it points to (34665, 34853; the
 * Exif IFD may point to an Interop IFD, 40965). The EXIF block of JPEG, PNG and WebP
 * is the same structure on its own. meta.c makes a block of a TIFF file's tree;
 * tiff.c writes a block's tree into a TIFF file's IFD0 and after it. Every value is
 * copied as it is (a MakerNote too: its inner offsets, if any, are the maker's),
 * each element turned into the byte order written where it differs. At the end, a
 * reader of Photoshop's image resources (meta.c and tiff.c look for the IPTC record in
 * them). */
#include "io/io_priv.h"
#include "io/meta.h"

#include <string.h>

/* Bytes a value of TIFF type t takes in a classic TIFF (TIFF 6.0's types: BigTIFF's
 * 8-byte ones have no place there); 0 for any other. */
static unsigned type_size(unsigned t)
{
    return t <= 13 ? vki_tiff_type_size(t) : 0;
}

/* The size of the elements whose bytes turn with the byte order (RATIONALs: their two LONGs). */
static unsigned elem_size(unsigned t)
{
    return t == 5 || t == 10 ? 4 : type_size(t);
}

int vki_exif_byte_order(const unsigned char *t, size_t n)
{
    if (!t || n < 8)
        return -1;
    if (t[0] == 'I' && t[1] == 'I' && t[2] == 42 && t[3] == 0)
        return 1;
    if (t[0] == 'M' && t[1] == 'M' && t[2] == 0 && t[3] == 42)
        return 0;
    return -1;
}

static void wr16(unsigned char *p, unsigned v, int le)
{
    p[le ? 0 : 1] = (unsigned char)v;
    p[le ? 1 : 0] = (unsigned char)(v >> 8);
}

static void wr32(unsigned char *p, uint32_t v, int le)
{
    for (int i = 0; i < 4; i++)
        p[le ? i : 3 - i] = (unsigned char)(v >> (8 * i));
}

/* IFD0's tags that belong to the picture's EXIF (TIFF 6.0's descriptive ones, as
 * EXIF 2.3 lists them for IFD0); the orientation is the caller's. */
static int ifd0_tag(unsigned tag)
{
    static const unsigned keep[] = { 270, 271, 272, 282, 283, 296, 305, 306, 315, 33432 };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (keep[i] == tag)
            return 1;
    return 0;
}

/* The entries of the IFD at off into IFD k of t, with the pointer tags of that IFD
 * read in turn: IFD0 -> Exif, GPS; Exif -> Interop. An entry whose values lie
 * outside b, of an unknown type, or (IFD0) not EXIF's or a second one of its tag is
 * left out; an IFD count larger than b holds: the entries that are there. */
static void read_ifd(const unsigned char *b, size_t len, int le, uint32_t off, int k, vki_xtree *t)
{
    if (off < 8 || off >= len || len - off < 2)
        return;
    size_t count = vki_rd16(b + off, le), fit = (len - off - 2) / 12;
    if (count > fit)
        count = fit;
    for (size_t i = 0; i < count && t->n[k] < VKI_XI_MAX; i++) {
        const unsigned char *en = b + off + 2 + 12 * i;
        const unsigned tag = vki_rd16(en, le), type = vki_rd16(en + 2, le);
        const uint32_t cnt = vki_rd32(en + 4, le);
        int sub = -1;
        if (k == VKI_XI_IFD0)
            sub = tag == 34665 ? VKI_XI_EXIF : tag == 34853 ? VKI_XI_GPS : -1;
        else if (k == VKI_XI_EXIF && tag == 40965)
            sub = VKI_XI_INTEROP;
        if (sub >= 0) {
            if ((type != 4 && type != 13) || cnt != 1 || t->n[sub])
                continue; /* not one offset, or a second pointer to the same IFD */
            read_ifd(b, len, le, vki_rd32(en + 8, le), sub, t);
            if (t->n[sub])
                t->e[k][t->n[k]++] = (vki_xentry){ .tag = tag, .type = 4, .count = 1, .n = 4, .sub = sub };
            continue;
        }
        const unsigned ts = type_size(type);
        if (!ts || type == 13 || (k == VKI_XI_IFD0 && (!ifd0_tag(tag) || vki_exif_tree_find(t, k, tag))))
            continue;
        if (cnt > len / ts)
            continue; /* more values than the file has bytes */
        const size_t n = (size_t)cnt * ts;
        const unsigned char *val = en + 8;
        if (n > 4) {
            const uint32_t vo = vki_rd32(en + 8, le);
            if (vo > len || len - vo < n)
                continue;
            val = b + vo;
        }
        t->e[k][t->n[k]++] = (vki_xentry){ .tag = tag, .type = type, .count = cnt, .val = val, .n = n, .sub = -1 };
    }
}

int vki_exif_tree_read(const unsigned char *b, size_t len, vki_xtree *t)
{
    memset(t->n, 0, sizeof t->n);
    if ((t->le = vki_exif_byte_order(b, len)) < 0)
        return -1;
    read_ifd(b, len, t->le, vki_rd32(b + 4, t->le), VKI_XI_IFD0, t);
    return 0;
}

const vki_xentry *vki_exif_tree_find(const vki_xtree *t, int k, unsigned tag)
{
    for (unsigned i = 0; i < t->n[k]; i++)
        if (t->e[k][i].tag == tag)
            return &t->e[k][i];
    return NULL;
}

void vki_exif_tree_drop(vki_xtree *t, int k, unsigned tag)
{
    unsigned j = 0;
    for (unsigned i = 0; i < t->n[k]; i++)
        if (t->e[k][i].tag != tag)
            t->e[k][j++] = t->e[k][i];
    t->n[k] = j;
}

void vki_exif_tree_set_short(vki_xtree *t, unsigned tag, unsigned v)
{
    vki_exif_tree_drop(t, VKI_XI_IFD0, tag);
    if (t->n[VKI_XI_IFD0] >= VKI_XI_MAX)
        return;
    vki_xentry *e = t->e[VKI_XI_IFD0];
    unsigned i = 0;
    while (i < t->n[VKI_XI_IFD0] && e[i].tag < tag)
        i++;
    memmove(&e[i + 1], &e[i], (t->n[VKI_XI_IFD0] - i) * sizeof *e);
    t->n[VKI_XI_IFD0]++;
    e[i] = (vki_xentry){ .tag = tag, .type = 3, .count = 1, .n = 2, .sub = -1, .v = v };
}

/* Whether IFD k is written: it has entries and is in the mask. */
static int written(const vki_xtree *t, unsigned ifds, int k) { return t->n[k] && (ifds >> k & 1); }

/* Bytes of the IFDs written, IFD k at ifd_off[k] - base (NULL: not asked). */
static size_t ifds_size(const vki_xtree *t, unsigned ifds, size_t base, uint32_t *ifd_off)
{
    size_t at = 0;
    for (int k = 0; k < VKI_XI_N; k++) {
        if (ifd_off)
            ifd_off[k] = written(t, ifds, k) ? (uint32_t)(base + at) : 0;
        if (written(t, ifds, k))
            at += 2 + 12 * (size_t)t->n[k] + 4;
    }
    return at;
}

/* Bytes a value of over 4 bytes takes after the IFDs (an even count). */
static size_t value_size(const vki_xentry *e) { return e->val && e->n > 4 ? (e->n + 1) & ~(size_t)1 : 0; }

size_t vki_exif_size(const vki_xtree *t, unsigned ifds)
{
    size_t at = ifds_size(t, ifds, 0, NULL);
    for (int k = 0; k < VKI_XI_N; k++) /* the values of every IFD (IFD0's too where it is the caller's) */
        for (unsigned i = 0; i < t->n[k]; i++)
            at += value_size(&t->e[k][i]);
    return at;
}

/* The value's bytes into p in byte order le, each element turned where the source's differs. */
static void put_value(unsigned char *p, const vki_xentry *e, int from_le, int le)
{
    const unsigned es = elem_size(e->type);
    if (from_le == le || es == 1) {
        memcpy(p, e->val, e->n);
        return;
    }
    for (size_t i = 0; i + es <= e->n; i += es)
        for (unsigned j = 0; j < es; j++)
            p[i + j] = e->val[i + es - 1 - j];
}

void vki_exif_entry_put(const vki_xtree *t, const vki_xentry *e, unsigned char q[12], int le,
                        const uint32_t ifd_off[VKI_XI_N])
{
    wr16(q, e->tag, le);
    wr16(q + 2, e->type, le);
    wr32(q + 4, e->count, le);
    memset(q + 8, 0, 4);
    if (e->sub >= 0)
        wr32(q + 8, ifd_off[e->sub], le);
    else if (!e->val)
        wr16(q + 8, e->v, le);
    else if (e->n <= 4)
        put_value(q + 8, e, t->le, le);
    else
        wr32(q + 8, e->at, le);
}

void vki_exif_write(vki_xtree *t, unsigned ifds, unsigned char *dst, size_t base, int le, uint32_t ifd_off[VKI_XI_N])
{
    size_t at = ifds_size(t, ifds, base, ifd_off);
    for (int k = 0; k < VKI_XI_N; k++)
        for (unsigned i = 0; i < t->n[k]; i++) {
            vki_xentry *e = &t->e[k][i];
            if (value_size(e)) {
                put_value(dst + at, e, t->le, le);
                e->at = (uint32_t)(base + at);
                at += value_size(e);
            }
        }
    for (int k = 0; k < VKI_XI_N; k++) {
        if (!written(t, ifds, k))
            continue;
        unsigned char *p = dst + (ifd_off[k] - base);
        wr16(p, t->n[k], le);
        for (unsigned i = 0; i < t->n[k]; i++)
            vki_exif_entry_put(t, &t->e[k][i], p + 2 + 12 * i, le, ifd_off);
        wr32(p + 2 + 12 * (size_t)t->n[k], 0, le); /* no next IFD */
    }
}

/* ------------------------------------------------------------------ Photoshop image resources */

/* The block at r[p..n) ("8BIM", id, name, size, data): its id and its data's offset
 * and size; the offset after it (its padding byte included where there is one), or 0
 * where it is not a whole block. */
static size_t irb_block(const unsigned char *r, size_t n, size_t p, unsigned *id, size_t *at, size_t *size)
{
    if (p > n || n - p < 12 || memcmp(r + p, "8BIM", 4))
        return 0;
    const size_t name = ((size_t)r[p + 6] + 2) & ~(size_t)1; /* the Pascal string, padded to even */
    if (n - p - 6 < name + 4)
        return 0;
    *at = p + 6 + name + 4;
    *size = vki_rd32(r + *at - 4, 0);
    if (*size > n - *at)
        return 0;
    *id = vki_rd16(r + p + 4, 0);
    const size_t end = *at + *size + (*size & 1);
    return end < n ? end : n;
}

const unsigned char *vki_irb_find(const unsigned char *r, size_t n, unsigned id, size_t *len)
{
    unsigned bid;
    size_t at, size;
    for (size_t p = 0; r && (p = irb_block(r, n, p, &bid, &at, &size)) != 0;) {
        if (bid == id) {
            *len = size;
            return r + at;
        }
    }
    return NULL;
}

bool vki_irb_whole(const unsigned char *r, size_t n)
{
    unsigned bid;
    size_t at, size, p = 0;
    while (r && p < n && (p = irb_block(r, n, p, &bid, &at, &size)) != 0)
        ;
    return r && n && p == n;
}

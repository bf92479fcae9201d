/* libFuzzer target: the image loader from memory (vkimg_load_memory: every format,
 * each file's one decoder found by its magic bytes) and the metadata readers and
 * writers on the same bytes (EXIF, ICC). The checks: tests/fuzz/fuzz.h.
 *
 * PNG files get a mutator of their own (LLVMFuzzerCustomMutator): the decoder checks
 * every critical chunk's CRC and the zlib stream's Adler-32, so plain byte mutations
 * almost never get past them, and the filtered rows are behind the compression, out
 * of the fuzzer's sight. For a PNG the mutator mutates, in turn, the bytes anywhere,
 * the payload of one chunk (its length field follows), or the decompressed image data
 * (inflated, mutated, deflated again into one or two IDAT chunks); then it rewrites
 * every chunk's CRC (but for 1 in 16 mutations, which keep the CRCs as they come, so
 * that the CRC checks are fuzzed too). Other formats have no checksums: libFuzzer's
 * own mutations. The production code is the same; only the inputs are better made. */
#include "fuzz.h"

#include <libdeflate.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one_load(data, size);
    return 0;
}

#define PNG_SIG "\x89PNG\r\n\x1a\n"
#define RAW_MAX ((size_t)1 << 20) /* the largest image data the mutator inflates */

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Rewrites the CRC of every whole chunk after the signature. */
static void fix_crcs(uint8_t *d, size_t size)
{
    size_t pos = 8;
    while (size >= pos && size - pos >= 12) {
        uint32_t n = rd32(d + pos);
        if (n > size - pos - 12)
            break;
        wr32(d + pos + 8 + n, (uint32_t)libdeflate_crc32(0, d + pos + 4, (size_t)n + 4));
        pos += 12 + (size_t)n;
    }
}

/* The chunks: their offsets (at most max of them), and how many. */
static int chunks(const uint8_t *d, size_t size, size_t *at, int max)
{
    int k = 0;
    size_t pos = 8;
    while (k < max && size >= pos && size - pos >= 12) {
        uint32_t n = rd32(d + pos);
        if (n > size - pos - 12)
            break;
        at[k++] = pos;
        pos += 12 + (size_t)n;
    }
    return k;
}

/* Mutates the payload of chunk i in place (the rest of the file moves); 0 when it
 * does not fit in max_size. */
static size_t mutate_chunk(uint8_t *d, size_t size, size_t max_size, size_t at)
{
    size_t n = rd32(d + at), tail = size - (at + 12 + n);
    size_t room = max_size - size + n; /* the payload may grow into the free space */
    uint8_t *buf = malloc(room + 1);
    if (!buf)
        return 0;
    memcpy(buf, d + at + 8, n);
    size_t m = LLVMFuzzerMutate(buf, n, room);
    if (m > UINT32_MAX / 2 || at + 12 + m + tail > max_size) {
        free(buf);
        return 0;
    }
    memmove(d + at + 12 + m, d + at + 12 + n, tail);
    memcpy(d + at + 8, buf, m);
    wr32(d + at, (uint32_t)m);
    free(buf);
    return at + 12 + m + tail;
}

/* Inflates the IDAT data, mutates it, deflates it again into one IDAT (two when the
 * seed says so) where the first one was; 0 when it cannot. */
static size_t mutate_idat(uint8_t *d, size_t size, size_t max_size, const size_t *at, int nch, unsigned seed)
{
    size_t zlen = 0;
    int first = -1;
    for (int i = 0; i < nch; i++)
        if (!memcmp(d + at[i] + 4, "IDAT", 4)) {
            zlen += rd32(d + at[i]);
            if (first < 0)
                first = i;
        }
    if (first < 0 || !zlen)
        return 0;
    uint8_t *z = malloc(zlen), *raw = malloc(RAW_MAX), *out = NULL;
    struct libdeflate_decompressor *dc = libdeflate_alloc_decompressor();
    struct libdeflate_compressor *cc = libdeflate_alloc_compressor((int)(seed % 7));
    size_t res = 0, rawlen = 0, zl = 0;
    if (!z || !raw || !dc || !cc)
        goto done;
    for (int i = 0; i < nch; i++)
        if (!memcmp(d + at[i] + 4, "IDAT", 4)) {
            memcpy(z + zl, d + at[i] + 8, rd32(d + at[i]));
            zl += rd32(d + at[i]);
        }
    if (libdeflate_zlib_decompress(dc, z, zlen, raw, RAW_MAX, &rawlen) != LIBDEFLATE_SUCCESS)
        goto done;
    rawlen = LLVMFuzzerMutate(raw, rawlen, RAW_MAX);
    size_t bound = libdeflate_zlib_compress_bound(cc, rawlen);
    if (!(out = malloc(size + bound + 12)))
        goto done;
    free(z);
    if (!(z = malloc(bound)))
        goto done;
    size_t zn = libdeflate_zlib_compress(cc, raw, rawlen, z, bound);
    if (!zn)
        goto done;
    /* the chunks before the first IDAT, the new IDAT(s), the chunks after, but the IDATs */
    size_t o = at[first];
    memcpy(out, d, o);
    size_t split = seed & 8 ? zn / 2 : zn;
    for (size_t part = 0, from = 0; part < 2 && from < zn; part++) {
        size_t len = part ? zn - from : split;
        wr32(out + o, (uint32_t)len);
        memcpy(out + o + 4, "IDAT", 4);
        memcpy(out + o + 8, z + from, len);
        o += 12 + len;
        from += len;
    }
    for (int i = first; i < nch; i++) {
        if (memcmp(d + at[i] + 4, "IDAT", 4)) {
            size_t len = 12 + (size_t)rd32(d + at[i]);
            memcpy(out + o, d + at[i], len);
            o += len;
        }
    }
    size_t end = nch ? at[nch - 1] + 12 + rd32(d + at[nch - 1]) : 8; /* bytes after the last whole chunk */
    if (o + (size - end) <= max_size) {
        memcpy(out + o, d + end, size - end);
        o += size - end;
        memcpy(d, out, o);
        res = o;
    }
done:
    libdeflate_free_compressor(cc);
    libdeflate_free_decompressor(dc);
    free(out);
    free(raw);
    free(z);
    return res;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    if (size < 8 || memcmp(data, PNG_SIG, 8))
        return LLVMFuzzerMutate(data, size, max_size);
    size_t at[256];
    int nch = chunks(data, size, at, 256);
    size_t n = 0;
    switch (seed % 3) {
    case 1:
        if (nch)
            n = mutate_chunk(data, size, max_size, at[(seed >> 4) % (unsigned)nch]);
        break;
    case 2:
        n = mutate_idat(data, size, max_size, at, nch, seed >> 2);
        break;
    }
    if (!n)
        n = LLVMFuzzerMutate(data, size, max_size);
    if ((seed >> 8) % 16)
        fix_crcs(data, n);
    return n;
}

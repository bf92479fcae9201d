/* CCITT bilevel decoding for TIFF (ccitt.h): compressions 2 (modified Huffman), 3
 * (ITU-T T.4, 1D or 2D) and 4 (ITU-T T.6), as TIFF 6.0 sections 10 and 11 put them in
 * strips and tiles.
 *
 * The codes are the standard's tables (T.4 tables 2 and 3: terminating, make-up and
 * extended make-up codes; T.4 table 4 and T.6 table 1: the 2D mode codes), written
 * below as the standard prints them, first bit first; lookup tables indexed by the next
 * 12 (white), 13 (black) or 7 (mode) bits are built from them once.
 *
 * A row is kept as libtiff keeps it: the list of its runs (white first; here the end
 * of each), which is also what the next row's 2D codes refer to. b1 is the end of a
 * run of the reference row, which ends with libtiff's imaginary run of 0 (the
 * standard's imaginary changes at the width); see row_2d.
 *
 * Where a stream departs from the standard, libtiff's decoder (tif_fax3.c) decides
 * what it means, so that a file decodes to libtiff's pixels or is refused:
 *  - before each T.4 row, any bits up to eleven 0 bits are skipped (libtiff syncs to
 *    the EOL so), then the 0s up to the 1 that ends the EOL: fill bits (T4Options bit
 *    2) need nothing more;
 *  - a row ends as soon as its runs reach the width; the next row's data follows (in
 *    compression 2 from the next byte);
 *  - make-up codes may follow each other before the terminating one (libtiff adds
 *    them up);
 *  - zero-length runs are runs like any other (an encoder such as ImageGear's writes
 *    them in horizontal mode), with libtiff's bookkeeping of b1 over them, and a
 *    white and a black 1D run of 0 one after the other dropped, as libtiff does;
 *  - a row takes at most roundup(width + 1, 32) runs, twice that in 2D (libtiff 4.5.1
 *    on; 4.5.0 keeps roundup(width, 32), and refuses a row of alternating pixels whose width
 *    is a multiple of 32).
 * What libtiff only warns about or patches up (filling the rest of a row white) is an
 * error: runs past a row's end, an EOL or EOFB before a row is whole, a bad code,
 * uncompressed mode, data ending before the last row, more runs than libtiff keeps. So
 * is a code that makes libtiff read past its reference row's runs (into what its
 * memory holds of an older row).
 * One departure from libtiff (4.5) on valid data: in compression 2 it counts the 0s
 * it makes up past a strip's end, reading a code ahead, as data when it aligns a row
 * to its byte, and so misreads a strip's last row when reading the row before looked
 * past the end (6-pixel rows 000001 001111: the second read white); here it is read. */
#include "io/ccitt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the codes */

/* T.4 table 2: the terminating codes of runs 0..63 */
static const char *const white_term[64] = {
    "00110101", "000111",   "0111",     "1000",     "1011",     "1100",     "1110",     "1111",
    "10011",    "10100",    "00111",    "01000",    "001000",   "000011",   "110100",   "110101",
    "101010",   "101011",   "0100111",  "0001100",  "0001000",  "0010111",  "0000011",  "0000100",
    "0101000",  "0101011",  "0010011",  "0100100",  "0011000",  "00000010", "00000011", "00011010",
    "00011011", "00010010", "00010011", "00010100", "00010101", "00010110", "00010111", "00101000",
    "00101001", "00101010", "00101011", "00101100", "00101101", "00000100", "00000101", "00001010",
    "00001011", "01010010", "01010011", "01010100", "01010101", "00100100", "00100101", "01011000",
    "01011001", "01011010", "01011011", "01001010", "01001011", "00110010", "00110011", "00110100",
};
static const char *const black_term[64] = {
    "0000110111",   "010",          "11",           "10",           "011",          "0011",
    "0010",         "00011",        "000101",       "000100",       "0000100",      "0000101",
    "0000111",      "00000100",     "00000111",     "000011000",    "0000010111",   "0000011000",
    "0000001000",   "00001100111",  "00001101000",  "00001101100",  "00000110111",  "00000101000",
    "00000010111",  "00000011000",  "000011001010", "000011001011", "000011001100", "000011001101",
    "000001101000", "000001101001", "000001101010", "000001101011", "000011010010", "000011010011",
    "000011010100", "000011010101", "000011010110", "000011010111", "000001101100", "000001101101",
    "000011011010", "000011011011", "000001010100", "000001010101", "000001010110", "000001010111",
    "000001100100", "000001100101", "000001010010", "000001010011", "000000100100", "000000110111",
    "000000111000", "000000100111", "000000101000", "000001011000", "000001011001", "000000101011",
    "000000101100", "000001011010", "000001100110", "000001100111",
};
/* T.4 table 3: the make-up codes of runs 64, 128 ... 1728 */
static const char *const white_makeup[27] = {
    "11011",     "10010",     "010111",    "0110111",   "00110110",  "00110111",  "01100100",
    "01100101",  "01101000",  "01100111",  "011001100", "011001101", "011010010", "011010011",
    "011010100", "011010101", "011010110", "011010111", "011011000", "011011001", "011011010",
    "011011011", "010011000", "010011001", "010011010", "011000",    "010011011",
};
static const char *const black_makeup[27] = {
    "0000001111",    "000011001000",  "000011001001",  "000001011011",  "000000110011",
    "000000110100",  "000000110101",  "0000001101100", "0000001101101", "0000001001010",
    "0000001001011", "0000001001100", "0000001001101", "0000001110010", "0000001110011",
    "0000001110100", "0000001110101", "0000001110110", "0000001110111", "0000001010010",
    "0000001010011", "0000001010100", "0000001010101", "0000001011010", "0000001011011",
    "0000001100100", "0000001100101",
};
/* T.4 table 3 (continued): the extended make-up codes of runs 1792, 1856 ... 2560, the
 * same for both colours */
static const char *const ext_makeup[13] = {
    "00000001000",  "00000001100",  "00000001101",  "000000010010", "000000010011",
    "000000010100", "000000010101", "000000010110", "000000010111", "000000011100",
    "000000011101", "000000011110", "000000011111",
};

enum {
    K_BAD,      /* no code starts so */
    K_TERM,     /* a terminating code */
    K_MAKEUP,   /* a make-up code */
    K_EOL,      /* eleven 0s: an EOL (000000000001), or T.6's EOFB (two of them) */
    K_UNCOMP,   /* 1D: the entrance to uncompressed mode, 000000001111 */
    K_PASS, K_HORIZ, K_VERT,
    K_EXT,      /* 2D: an extension, 0000001xxx (0000001111: uncompressed mode) */
};

/* T.4 table 4, T.6 table 1: the 2D mode codes (vertical ones with a1 - b1) */
static const struct {
    const char *code;
    unsigned char kind;
    signed char d;
} mode_codes[] = {
    { "0001", K_PASS, 0 },  { "001", K_HORIZ, 0 },    { "1", K_VERT, 0 },
    { "011", K_VERT, 1 },   { "000011", K_VERT, 2 },  { "0000011", K_VERT, 3 },
    { "010", K_VERT, -1 },  { "000010", K_VERT, -2 }, { "0000010", K_VERT, -3 },
    { "0000001", K_EXT, 0 }, { "0000000", K_EOL, 0 },
};

typedef struct code {
    uint16_t run;       /* pixels; a vertical mode's a1 - b1 + 3 */
    unsigned char len;  /* bits */
    unsigned char kind; /* K_* */
} code;

enum { WHITE_BITS = 12, BLACK_BITS = 13, MODE_BITS = 7 };
static code g_white[1 << WHITE_BITS], g_black[1 << BLACK_BITS], g_mode[1 << MODE_BITS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Every entry of tab (indexed by the next `bits` bits) that starts with s */
static void put(code *tab, unsigned bits, const char *s, unsigned kind, unsigned run)
{
    const unsigned len = (unsigned)strlen(s);
    unsigned v = 0;
    for (unsigned i = 0; i < len; i++)
        v = v << 1 | (s[i] == '1');
    for (unsigned i = v << (bits - len); i < (v + 1) << (bits - len); i++)
        tab[i] = (code){ .run = (uint16_t)run, .len = (unsigned char)len, .kind = (unsigned char)kind };
}

static void build_tables(void)
{
    for (unsigned r = 0; r < 64; r++) {
        put(g_white, WHITE_BITS, white_term[r], K_TERM, r);
        put(g_black, BLACK_BITS, black_term[r], K_TERM, r);
    }
    for (unsigned i = 0; i < 27; i++) {
        put(g_white, WHITE_BITS, white_makeup[i], K_MAKEUP, 64 * (i + 1));
        put(g_black, BLACK_BITS, black_makeup[i], K_MAKEUP, 64 * (i + 1));
    }
    for (unsigned i = 0; i < 13; i++) {
        put(g_white, WHITE_BITS, ext_makeup[i], K_MAKEUP, 1792 + 64 * i);
        put(g_black, BLACK_BITS, ext_makeup[i], K_MAKEUP, 1792 + 64 * i);
    }
    put(g_white, WHITE_BITS, "00000000000", K_EOL, 0);
    put(g_black, BLACK_BITS, "00000000000", K_EOL, 0);
    put(g_white, WHITE_BITS, "000000001111", K_UNCOMP, 0);
    put(g_black, BLACK_BITS, "000000001111", K_UNCOMP, 0);
    for (size_t i = 0; i < sizeof mode_codes / sizeof mode_codes[0]; i++)
        put(g_mode, MODE_BITS, mode_codes[i].code, mode_codes[i].kind, (unsigned)(mode_codes[i].d + 3));
}

/* ------------------------------------------------------------------ decoding */

typedef struct dec {
    const unsigned char *p;
    size_t n;
    uint64_t pos, end; /* the next bit, the bits (MSB first) */
    uint32_t w, row;
    uint32_t nruns; /* the most runs a row, as libtiff: roundup(w + 1, 32), twice that for 2D */
    char *why;
} dec;

/* The next k (<= 16) bits, 0s past the end */
static uint32_t peek(const dec *d, unsigned k)
{
    const size_t i = (size_t)(d->pos >> 3);
    uint32_t v = 0;
    for (size_t j = i; j < i + 3; j++)
        v = v << 8 | (j < d->n ? d->p[j] : 0u);
    return v >> (24 - (d->pos & 7) - k) & ((1u << k) - 1);
}

static int fail(dec *d, const char *what)
{
    snprintf(d->why, 256, "CCITT: %s row %u", what, d->row);
    return -1;
}

/* Consumes a code of len bits (checked against the data's end) */
static int take(dec *d, unsigned len)
{
    if (len > d->end - d->pos)
        return fail(d, "the data end in");
    d->pos += len;
    return 0;
}

/* One run of a colour, make-up codes and then a terminating code, of at most room
 * pixels, into *run: 0, or -1 (why set) */
static int read_run(dec *d, bool black, uint32_t room, uint32_t *run)
{
    uint32_t total = 0;
    for (;;) {
        const code c = black ? g_black[peek(d, BLACK_BITS)] : g_white[peek(d, WHITE_BITS)];
        if (c.kind == K_EOL && d->end - d->pos < 12)
            return fail(d, "the data end in");
        if (c.kind == K_EOL)
            return fail(d, "an EOL inside");
        if (c.kind == K_UNCOMP)
            return fail(d, "uncompressed mode (not supported) in");
        if (c.kind == K_BAD)
            return fail(d, "a bad code in");
        if (take(d, c.len))
            return -1;
        if (c.run > room - total)
            return fail(d, "a run past the end of");
        total += c.run;
        if (c.kind == K_TERM) {
            *run = total;
            return 0;
        }
    }
}

/* A row's runs: the end of each (run 0 white), as libtiff keeps them */
typedef struct runs {
    uint32_t *e;
    uint32_t n, cap;
} runs;

/* Appends a run ending at a0 (libtiff's SETVALUE: at most nruns a row) */
static int push(dec *d, runs *r, uint32_t a0)
{
    if (r->n >= d->nruns)
        return fail(d, "more runs than libtiff takes in");
    if (r->n == r->cap) {
        const uint32_t cap = r->cap > d->nruns / 2 ? d->nruns : r->cap ? 2 * r->cap : 64;
        uint32_t *e = realloc(r->e, (size_t)cap * sizeof *e);
        if (!e)
            return fail(d, "out of memory in");
        r->e = e;
        r->cap = cap;
    }
    r->e[r->n++] = a0;
    return 0;
}

/* A 1D-coded row into r */
static int row_1d(dec *d, runs *r)
{
    uint32_t a0 = 0;
    r->n = 0;
    for (bool black = false;; black = !black) {
        uint32_t run;
        if (read_run(d, black, d->w - a0, &run) || push(d, r, a0 += run))
            return -1;
        if (a0 >= d->w)
            return 0;
        /* a white and a black run of 0 one after the other are dropped, as libtiff does */
        const uint32_t n = r->n, *e = r->e;
        if (black && e[n - 1] == e[n - 2] && e[n - 2] == (n >= 3 ? e[n - 3] : 0))
            r->n -= 2;
    }
}

/* libtiff's CHECK_b1: b1 (the end of the reference row's run *k, run -1 ending at 0)
 * moved over the runs ending at or before a0, two at a time */
static int check_b1(dec *d, const runs *ref, int64_t *k, uint32_t a0)
{
    for (;; *k += 2) {
        if (*k >= (int64_t)ref->n)
            return fail(d, "a code reaching past the reference row in");
        const uint32_t b1 = *k < 0 ? 0 : ref->e[*k];
        if (b1 > a0 || b1 >= d->w)
            return 0;
    }
}

/* A 2D-coded row against the reference row ref (its runs, the last the imaginary
 * one of 0 libtiff adds) into r. libtiff's bookkeeping decides: b1 is the end of the
 * reference row's run k, one run on after a vertical mode code, one back after a
 * left one, two on after pass mode and moved over the runs ending at or before a0
 * before each code but a row's first; on rows without zero-length runs that is the
 * standard's b1. */
static int row_2d(dec *d, const runs *ref, runs *r)
{
    const uint32_t w = d->w;
    uint32_t a0 = 0;
    int64_t k = 0;
    r->n = 0;
    while (a0 < w) {
        if (r->n >= d->nruns)
            return fail(d, "more runs than libtiff takes in");
        const code c = g_mode[peek(d, MODE_BITS)];
        if (c.kind == K_EXT)
            return fail(d, peek(d, 10) == 0xf ? "uncompressed mode (not supported) in" : "a bad code in");
        if (c.kind == K_EOL)
            return fail(d, d->end - d->pos < 12 ? "the data end in" : "an EOL or EOFB inside");
        if (take(d, c.len))
            return -1;
        if (c.kind == K_HORIZ) { /* two runs, a0's colour first */
            uint32_t r1, r2;
            if (read_run(d, r->n & 1, w - a0, &r1) || push(d, r, a0 += r1) || read_run(d, r->n & 1, w - a0, &r2) ||
                push(d, r, a0 += r2) || check_b1(d, ref, &k, a0))
                return -1;
            continue;
        }
        if (r->n && check_b1(d, ref, &k, a0))
            return -1;
        if (k >= (int64_t)ref->n)
            return fail(d, "a code reaching past the reference row in");
        const uint32_t b1 = k < 0 ? 0 : ref->e[k];
        if (c.kind == K_PASS) { /* a0 to b2; the run goes on */
            if (k + 2 >= (int64_t)d->nruns)
                return fail(d, "more runs than libtiff takes in");
            if (k + 1 >= (int64_t)ref->n)
                return fail(d, "a code reaching past the reference row in");
            a0 = ref->e[k + 1];
            k += 2;
            if (a0 >= w && a0 > (r->n ? r->e[r->n - 1] : 0) && push(d, r, a0))
                return -1;
            continue;
        }
        const int64_t a1 = (int64_t)b1 + c.run - 3; /* vertical: a1 = b1 + d */
        if (a1 < (int64_t)a0 || a1 > (int64_t)w)
            return fail(d, "a vertical mode code out of place in");
        if (c.run >= 3 && k + 1 >= (int64_t)d->nruns) /* (libtiff reads its next run's length) */
            return fail(d, "more runs than libtiff takes in");
        if (push(d, r, a0 = (uint32_t)a1))
            return -1;
        k += c.run < 3 ? -1 : 1;
    }
    return 0;
}

/* T.4: the EOL before a row */
static int sync_eol(dec *d)
{
    while (d->end - d->pos >= 12 && peek(d, 11))
        d->pos++;
    if (d->end - d->pos < 12)
        return fail(d, "the data end before");
    d->pos += 11;
    while (d->pos < d->end && !peek(d, 1))
        d->pos++;
    if (d->pos == d->end)
        return fail(d, "the data end before");
    d->pos++;
    return 0;
}

/* Bits [s, e) of row set */
static void set_ones(unsigned char *row, uint32_t s, uint32_t e)
{
    if (s >= e)
        return;
    const size_t a = s >> 3, z = (e - 1) >> 3;
    const unsigned char head = (unsigned char)(0xffu >> (s & 7)), tail = (unsigned char)(0xff00u >> (((e - 1) & 7) + 1));
    if (a == z) {
        row[a] |= head & tail;
        return;
    }
    row[a] |= head;
    memset(row + a + 1, 0xff, z - a - 1);
    row[z] |= tail;
}

const char *vki_ccitt_decode(const unsigned char *src, size_t n, unsigned char *dst, uint32_t width, uint32_t rows,
                             size_t row_bytes, unsigned compression, uint32_t options, char why[256])
{
    if (!width || width > (1u << 28) || row_bytes < ((size_t)width + 7) / 8 || compression < 2 || compression > 4)
        return "CCITT: bad parameters";
    pthread_once(&g_once, build_tables);
    const bool two_d = compression == 4 || (compression == 3 && (options & 1)); /* T.4 2D: a tag bit after each EOL */
    dec d = { .p = src, .n = n, .end = (uint64_t)n * 8, .w = width, .why = why,
              .nruns = ((width + 1 + 31) & ~31u) * (two_d ? 2 : 1) };
    runs buf[2] = { { 0 }, { 0 } }, *ref = &buf[0], *cur = &buf[1];
    int err = push(&d, ref, width) || push(&d, ref, width); /* an imaginary white row above the first */
    for (uint32_t y = 0; y < rows && !err; y++) {
        d.row = y;
        bool one_d = compression != 4;
        if (compression == 3 && (err = sync_eol(&d)))
            break;
        if (compression == 3 && two_d) { /* 1 for a 1D-coded row */
            one_d = peek(&d, 1);
            if ((err = take(&d, 1)))
                break;
        }
        if ((err = one_d ? row_1d(&d, cur) : row_2d(&d, ref, cur)))
            break;
        unsigned char *row = dst + (size_t)y * row_bytes;
        memset(row, 0, row_bytes);
        for (uint32_t i = 1; i < cur->n; i += 2) /* the black runs */
            set_ones(row, cur->e[i - 1], cur->e[i]);
        if (compression == 2) /* rows start on a byte */
            d.pos = (d.pos + 7) & ~(uint64_t)7;
        /* the next row's reference: this one and libtiff's imaginary run of 0 (in
         * T.4 only where there is room for it) */
        if (two_d && (compression == 4 || cur->n < d.nruns) && (err = push(&d, cur, width)))
            break;
        runs *t = ref;
        ref = cur;
        cur = t;
    }
    free(buf[0].e);
    free(buf[1].e);
    if (err && !strncmp(why, "CCITT: out of memory", 20))
        return "out of memory";
    return err ? why : NULL;
}

uint64_t vki_ccitt_min_row_bits(uint32_t width, unsigned compression, uint32_t options)
{
    /* 1D: a code makes at most 1664 / 6 pixels a bit (the white make-up code 011000),
     * and a row starts with a white code of 4 bits or more */
    uint64_t one_d = (uint64_t)width * 6 / 1664;
    if (one_d < 4)
        one_d = 4;
    switch (compression) {
    case 2: return (one_d + 7) / 8 * 8;                  /* rows byte-aligned */
    case 3: return options & 1 ? 12 + 1 + 1 : 12 + one_d; /* an EOL (12 bits); 2D: its tag bit and a V0 */
    default: return 1;                                    /* T.6: a V0 (a row like the one above) */
    }
}

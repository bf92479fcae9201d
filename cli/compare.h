/* vkimg compare's parts (compare.c: options, one pair, the outputs of a pair;
 * compare_dir.c: directories; report.c: the HTML report and JUnit XML;
 * server.c: --server). */
#ifndef VKIMG_CLI_COMPARE_H
#define VKIMG_CLI_COMPARE_H

#include "cli.h"

#include <stdint.h>

/* The settings of one `vkimg compare` run. */
typedef struct cmp_cfg {
    vkimg_compare_opts o;  /* o.ignore / o.nignore point at rects; o.mask at mask when loaded */
    vkimg_rect *rects;
    int nrects, caprects;
    const char *mask_path;
    vkimg_image mask;
    const char *diff_path; /* a file (two images) or a directory (two directories) */
    bool diff_on_fail;
    bool fail_on_new;
    const char *junit_path, *report_dir;
    bool server;
    int threads;           /* directory mode: workers (0: all cores) */
    bool diff_unless_pass; /* write difference images only for pairs that are not PASS */
    bool keep_diff;        /* keep p->r.diff (the server's diffLines / diffCols) */
    cli_common common;
} cmp_cfg;

/* What happened to one pair. */
typedef enum cmp_kind {
    CMP_COMPARED = 0, /* decoded and compared (r holds the result) */
    CMP_IDENTICAL,    /* byte-identical files: PASS without decoding */
    CMP_MISMATCH,     /* sizes or channel counts differ (exit 3) */
    CMP_ERROR,        /* a file could not be read or decoded, the device failed... (exit 4) */
    CMP_NEW,          /* directory mode: only in ACTUAL */
    CMP_MISSING,      /* directory mode: only in EXPECTED */
} cmp_kind;

typedef struct cmp_pair {
    int index;             /* position in the run (names the report's images) */
    char *name;            /* directory mode: the relative path; else NULL */
    char *a, *b;           /* the two paths (NULL: the file is not there) */
    char *diff_out;        /* where the difference image goes (NULL: none) */
    const unsigned char *mem_a, *mem_b; /* the files' bytes when they are in memory (not freed) */
    size_t len_a, len_b;
    int err_side;          /* CMP_ERROR: 1 the first image, 2 the second, 0 neither */
    cmp_kind kind;
    int code;              /* CLI_CMP_* of the pair */
    char err[1100];
    long long bytes_a, bytes_b;
    int wa, ha, ca, wb, hb, cb; /* sizes (0: unknown) */
    vkimg_fmt fa, fb;
    bool fmt_known;
    vkimg_compare_result r; /* r.diff is freed unless cfg->keep_diff */
    bool diff_written;
    /* --report: images of the pair in the report directory (relative to it; NULL: none) */
    char *rep_a, *rep_b, *rep_diff;
    double read_ms, decode_ms, gpu_ms, encode_ms, total_ms;
    vkimg_timing tm;
} cmp_pair;

/* The device context: CMP_CTX_ACQUIRE before a comparison (opened when first
 * needed, so a run of byte-identical pairs opens none; NULL with the error in *e
 * when none can be had); CMP_CTX_RELEASE when the comparison is over (returns
 * NULL); CMP_CTX_PEEK: the context if it is open now (never opens it, takes
 * nothing: to decode into its memory; it waits while the context is being
 * opened); CMP_CTX_SOON: the caller's next ACQUIRE opens it, and PEEKs wait for
 * that from now on (where an implementation opens on demand; else nothing);
 * CMP_CTX_TRIM: the images are freed, give their memory back where no other
 * comparison would reuse it (one pair: vkimg_ctx_trim; else nothing).
 * Thread-safe. */
typedef enum { CMP_CTX_ACQUIRE, CMP_CTX_RELEASE, CMP_CTX_PEEK, CMP_CTX_SOON, CMP_CTX_TRIM } cmp_ctx_op;
typedef vkimg_ctx *(*cmp_ctx_fn)(void *user, cmp_ctx_op op, vkimg_err *e);

/* Runs one pair: reads both files, PASS at once when their bytes are the same
 * (unless a difference image must be written), else decodes them (two threads
 * when `parallel`), compares on the device, writes the difference image to
 * p->diff_out (atomically; not after an error) and, with report_dir, the
 * report's copies. Fills p; never prints. */
void cmp_pair_run(const cmp_cfg *cfg, cmp_pair *p, cmp_ctx_fn get_ctx, void *ctx_user, bool parallel);
void cmp_pair_free(cmp_pair *p);

/* The verdict word of a pair ("PASS", "WARNING", "FAILURE", "MISMATCH", "ERROR",
 * "NEW", "MISSING"). */
const char *cmp_verdict_word(const cmp_pair *p);
/* Prints a pair: the JSON object (one line) or the text report (long: the
 * one-pair report; else one line). */
void cmp_print_json(const cmp_cfg *cfg, const cmp_pair *p, FILE *f);
void cmp_print_text(const cmp_cfg *cfg, const cmp_pair *p, bool long_form, FILE *f);

/* Directory mode (compare_dir.c): returns the run's exit code. */
int cmp_run_dirs(cmp_cfg *cfg, const char *expected, const char *actual);
/* --server (server.c): returns the exit code. */
int cmp_run_server(cmp_cfg *cfg);

/* report.c: --junit FILE and --report DIR from the pairs of a run (0 or exit code,
 * message printed). The report's images are made by cmp_pair_run. */
typedef struct cmp_summary {
    int pairs, passed, warned, failed, mismatched, errors, added, missing, identical;
    int code;
    double wall_s;
} cmp_summary;
int cmp_write_junit(const cmp_cfg *cfg, const cmp_pair *pairs, int n, const cmp_summary *s, const char *path);
int cmp_write_report(const cmp_cfg *cfg, const cmp_pair *pairs, int n, const cmp_summary *s, const char *dir,
                     const char *expected, const char *actual);
/* Prepares DIR for a report (creates it, and DIR/img): 0 or an exit code. */
int cmp_report_prepare(const char *dir);

/* Copies a file atomically (the same rules). */
int cmp_copy_atomic(const char *from, const char *to, vkimg_err *e);
/* Creates the directories above path (mkdir -p of its dirname): 0 or -1 (e). */
int cmp_mkdirs_for(const char *path, vkimg_err *e);

/* Parses odiff's region list "x1:y1-x2:y2[,x1:y1-x2:y2...]" into cfg->rects: 0 or -1
 * (message in e). */
int cmp_parse_regions(cmp_cfg *cfg, const char *text, vkimg_err *e);
/* Adds one rectangle (0 or -1: out of memory / too many). */
int cmp_add_rect(cmp_cfg *cfg, vkimg_rect r);

/* XML and HTML text with &, <, >, " and ' escaped; control bytes (but tab, CR, LF)
 * and invalid UTF-8 as U+FFFD (XML 1.0 cannot hold them). */
void cmp_xml_str(FILE *f, const char *s);

#endif

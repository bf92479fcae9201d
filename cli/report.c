/* vkimg compare's files besides the difference images: JUnit XML (--junit) and
 * the HTML report (--report DIR), both written atomically, and the helpers for
 * them (compare.h).
 *
 * The report is self-contained: DIR/index.html with inline CSS and JavaScript
 * (no network resource, no external file but the images), and the images in
 * DIR/img/ (<index>-expected|actual|diff.<ext>: the files themselves when a
 * browser shows them (PNG, JPEG, WebP, GIF, BMP), else PNG). The index has a summary,
 * a filter (all / not passing), and a table with a thumbnail of each pair; each
 * pair that is not PASS has a section with expected, actual and difference side
 * by side and a comparison view (a slider that uncovers actual over expected,
 * and a button that flips between them). */
#define _GNU_SOURCE
#include "compare.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cmp_report_prepare(const char *dir)
{
    char probe[4200];
    vkimg_err e = { 0 };
    snprintf(probe, sizeof probe, "%s/img/x", dir);
    if (cmp_mkdirs_for(probe, &e))
        return cli_error(CLI_CMP_ERROR, "compare: --report: %s", e.msg);
    snprintf(probe, sizeof probe, "%s/index.html", dir);
    struct stat st;
    if (!stat(probe, &st) && !S_ISREG(st.st_mode))
        return cli_error(CLI_CMP_ERROR, "compare: --report: %s is not a file", probe);
    return 0;
}

/* ---------------------------------------------------------------- escaping */

/* The length of the valid UTF-8 sequence at s (0: invalid). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xe0) == 0xc0)
        n = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        n = 3, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        n = 4, min = 0x10000;
    else
        return 0;
    unsigned v = c & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v == 0xfffe || v == 0xffff)
        return 0;
    return n;
}

void cmp_xml_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&#39;", f); p++; continue;
        default: break;
        }
        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        int n = utf8_len(p);
        if (!n) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        fwrite(p, 1, (size_t)n, f);
        p += n;
    }
}

/* ---------------------------------------------------------------- figures */

/* One line of a pair's figures ("1234 pixels differ (0.5%)"). */
static void figures(const cmp_cfg *cfg, const cmp_pair *p, char *buf, size_t n)
{
    const vkimg_compare_result *r = &p->r;
    switch (p->kind) {
    case CMP_NEW: snprintf(buf, n, "new: only in ACTUAL (no expected image)"); return;
    case CMP_MISSING: snprintf(buf, n, "missing: only in EXPECTED (no actual image)"); return;
    case CMP_ERROR: snprintf(buf, n, "%s", p->err); return;
    case CMP_MISMATCH:
        snprintf(buf, n, "sizes or channels differ: expected %dx%d with %d channel(s), actual %dx%d with %d channel(s)",
                 p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
        return;
    case CMP_IDENTICAL:
        if (!r->diff.data) {
            snprintf(buf, n, "identical files");
            return;
        }
        break;
    default: break;
    }
    if (cfg->o.metric == VKIMG_METRIC_YIQ && cfg->o.aa)
        snprintf(buf, n, "%llu pixels differ (%.4g%%; YIQ threshold %g; %llu anti-aliased not counted; %llu ignored)",
                 (unsigned long long)r->ndiff, 100.0 * r->diff_ratio, cfg->o.threshold, (unsigned long long)r->naa,
                 (unsigned long long)r->ignored);
    else if (cfg->o.metric == VKIMG_METRIC_YIQ)
        snprintf(buf, n, "%llu pixels differ (%.4g%%; YIQ threshold %g; %llu ignored)", (unsigned long long)r->ndiff,
                 100.0 * r->diff_ratio, cfg->o.threshold, (unsigned long long)r->ignored);
    else
        snprintf(buf, n,
                 "%llu pixels over %g (%.4g%%), %llu over %g (warn), max error %.6g, mean %.6g, PSNR %.6g dB, %llu "
                 "ignored",
                 (unsigned long long)r->nfail, cfg->o.fail, r->pct_fail, (unsigned long long)r->nwarn, cfg->o.warn,
                 r->max_err, r->mae, r->psnr, (unsigned long long)r->ignored);
}

/* ---------------------------------------------------------------- JUnit */

typedef struct junit_ctx {
    const cmp_cfg *cfg;
    const cmp_pair *pairs;
    int n;
    const cmp_summary *s;
} junit_ctx;

static int junit_fn(FILE *f, void *user)
{
    junit_ctx *j = user;
    const cmp_cfg *cfg = j->cfg;
    const cmp_summary *s = j->s;
    int failures = s->failed + s->mismatched + s->missing + (cfg->fail_on_new ? s->added : 0);
    int skipped = cfg->fail_on_new ? 0 : s->added;
    char ts[32];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime_r(&now, &tmv));
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"vkimg compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
               "time=\"%.3f\">\n",
            j->n, failures, s->errors, skipped, s->wall_s);
    fprintf(f, "  <testsuite name=\"vkimg compare\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
               "time=\"%.3f\" timestamp=\"%s\">\n",
            j->n, failures, s->errors, skipped, s->wall_s, ts);
    fprintf(f, "    <properties>\n      <property name=\"metric\" value=\"%s\"/>\n",
            cfg->o.metric == VKIMG_METRIC_YIQ ? "yiq" : "abs");
    if (cfg->o.metric == VKIMG_METRIC_YIQ)
        fprintf(f, "      <property name=\"threshold\" value=\"%g\"/>\n      <property name=\"aa\" value=\"%s\"/>\n",
                cfg->o.threshold, cfg->o.aa ? "true" : "false");
    else
        fprintf(f, "      <property name=\"fail\" value=\"%g\"/>\n      <property name=\"warn\" value=\"%g\"/>\n",
                cfg->o.fail, cfg->o.warn);
    fprintf(f, "    </properties>\n");
    for (int i = 0; i < j->n; i++) {
        const cmp_pair *p = &j->pairs[i];
        char fig[1400];
        figures(cfg, p, fig, sizeof fig);
        fputs("    <testcase classname=\"vkimg.compare\" name=\"", f);
        cmp_xml_str(f, p->name ? p->name : "");
        fprintf(f, "\" time=\"%.3f\"", p->total_ms / 1e3);
        if (p->b || p->a) {
            fputs(" file=\"", f);
            cmp_xml_str(f, p->b ? p->b : p->a);
            fputc('"', f);
        }
        fputs(">\n", f);
        const char *word = cmp_verdict_word(p);
        if (p->kind == CMP_ERROR) {
            fputs("      <error type=\"ERROR\" message=\"", f);
            cmp_xml_str(f, fig);
            fputs("\"/>\n", f);
        } else if (p->code != CLI_CMP_PASS && p->code != CLI_CMP_WARN) {
            fprintf(f, "      <failure type=\"%s\" message=\"", word);
            cmp_xml_str(f, fig);
            fputs("\">", f);
            fputs("expected: ", f);
            cmp_xml_str(f, p->a ? p->a : "(none)");
            fputs("\nactual: ", f);
            cmp_xml_str(f, p->b ? p->b : "(none)");
            if (p->kind == CMP_COMPARED) {
                const vkimg_compare_result *r = &p->r;
                fprintf(f, "\nndiff: %llu\ndiff_ratio: %.17g\ncompared: %llu\nignored: %llu\noutside: %llu",
                        (unsigned long long)r->ndiff, r->diff_ratio, (unsigned long long)r->compared,
                        (unsigned long long)r->ignored, (unsigned long long)r->outside);
                if (cfg->o.metric == VKIMG_METRIC_YIQ)
                    fprintf(f, "\nnaa: %llu", (unsigned long long)r->naa);
                else
                    fprintf(f, "\nmae: %.17g\nrmse: %.17g\nmax_error: %.17g", r->mae, r->rmse, r->max_err);
            }
            if (p->diff_written) {
                fputs("\ndiff image: ", f);
                cmp_xml_str(f, p->diff_out);
            }
            fputs("</failure>\n", f);
        } else if (p->kind == CMP_NEW) {
            fputs("      <skipped message=\"new: only in ACTUAL (no expected image)\"/>\n", f);
        }
        fputs("      <system-out>", f);
        fprintf(f, "%s: ", word);
        cmp_xml_str(f, fig);
        fputs("</system-out>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return 0;
}

int cmp_write_junit(const cmp_cfg *cfg, const cmp_pair *pairs, int n, const cmp_summary *s, const char *path)
{
    junit_ctx j = { cfg, pairs, n, s };
    vkimg_err e = { 0 };
    if (cli_write_with(path, junit_fn, &j, &e))
        return cli_error(CLI_CMP_ERROR, "compare: --junit: %s", e.msg);
    return 0;
}

/* ---------------------------------------------------------------- HTML */

typedef struct report_ctx {
    const cmp_cfg *cfg;
    const cmp_pair *pairs;
    int n;
    const cmp_summary *s;
    const char *expected, *actual;
} report_ctx;

static const char CSS[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;padding:16px 24px;background:#f6f7f9;color:#1d2330}"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 8px;word-break:break-all}"
    ".sub{color:#5b6473;margin-bottom:12px;word-break:break-all}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px;color:#fff}"
    ".PASS{background:#1f883d}.WARNING{background:#bf8700}.FAILURE,.MISMATCH,.MISSING{background:#cf222e}"
    ".ERROR{background:#8250df}.NEW{background:#0969da}"
    ".counts span{margin-right:14px}.bar{margin:12px 0}"
    "button{font:inherit;padding:3px 10px;border:1px solid #b6bcc6;border-radius:6px;background:#fff;cursor:pointer}"
    "button.on{background:#1d2330;color:#fff}"
    "table{border-collapse:collapse;background:#fff;width:100%}"
    "th,td{border-bottom:1px solid #e1e4e8;padding:6px 8px;text-align:left;vertical-align:middle}"
    "td.name{word-break:break-all;max-width:420px}td.fig{color:#424a57;font-size:13px}"
    "img.thumb{max-width:160px;max-height:90px;border:1px solid #d0d4da;background:#000}"
    ".pair{background:#fff;border:1px solid #d0d4da;border-radius:8px;padding:12px;margin:18px 0}"
    ".row{display:flex;gap:12px;flex-wrap:wrap}.row figure{margin:0;flex:1 1 30%;min-width:200px}"
    ".row figure img{width:100%;border:1px solid #d0d4da;background:#000}"
    "figcaption{font-size:12px;color:#5b6473}"
    ".cmp{position:relative;display:inline-block;max-width:100%;margin-top:10px;border:1px solid #d0d4da}"
    ".cmp img{display:block;max-width:100%}.cmp img.top{position:absolute;left:0;top:0}"
    ".tools{margin-top:8px}.tools input{width:320px;vertical-align:middle}"
    ".none{color:#8a93a3;font-size:12px}";

/* the slider: actual over expected, uncovered from the left; the button flips */
static const char JS[] =
    "function slide(i,v){document.getElementById('top'+i).style.clipPath='inset(0 '+(100-v)+'% 0 0)';}"
    "function flip(i){var t=document.getElementById('top'+i),b=document.getElementById('flip'+i);"
    "var on=t.style.clipPath==='inset(0px)'||t.style.clipPath==='inset(0)';"
    "t.style.clipPath=on?'inset(0 100% 0 0)':'inset(0)';b.textContent=on?'showing expected':'showing actual';"
    "document.getElementById('rng'+i).value=on?0:100;}"
    "function show(all){document.querySelectorAll('tr.ok').forEach(function(r){r.style.display=all?'':'none';});"
    "document.getElementById('fa').className=all?'on':'';document.getElementById('fn').className=all?'':'on';}";

static void img_tag(FILE *f, const char *src, const char *cls, const char *alt)
{
    if (!src) {
        fputs("<span class=\"none\">no preview</span>", f);
        return;
    }
    fprintf(f, "<img loading=\"lazy\" class=\"%s\" src=\"", cls);
    cmp_xml_str(f, src);
    fputs("\" alt=\"", f);
    cmp_xml_str(f, alt);
    fputs("\">", f);
}

static int report_fn(FILE *f, void *user)
{
    report_ctx *c = user;
    const cmp_summary *s = c->s;
    const char *word = s->code == 0 ? "PASS" : s->code == 1 ? "WARNING" : s->code == 2 ? "FAILURE"
                                                                    : s->code == 3 ? "MISMATCH" : "ERROR";
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self' file: data:; "
          "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
          "<title>vkimg compare: ",
          f);
    fputs(word, f);
    fprintf(f, "</title><style>%s</style><script>%s</script></head><body>\n", CSS, JS);
    fprintf(f, "<h1>vkimg compare <span class=\"badge %s\">%s</span></h1>\n<div class=\"sub\">expected: ", word, word);
    cmp_xml_str(f, c->expected);
    fputs(" &middot; actual: ", f);
    cmp_xml_str(f, c->actual);
    fprintf(f, " &middot; metric: %s", c->cfg->o.metric == VKIMG_METRIC_YIQ ? "yiq" : "abs");
    if (c->cfg->o.metric == VKIMG_METRIC_YIQ)
        fprintf(f, " (threshold %g%s)", c->cfg->o.threshold, c->cfg->o.aa ? ", anti-aliasing not counted" : "");
    fprintf(f, " &middot; exit code %d</div>\n", s->code);
    fprintf(f, "<div class=\"counts\"><span>%d pairs</span><span>%d passed (%d identical files)</span>"
               "<span>%d warnings</span><span>%d failed</span><span>%d size/channel mismatches</span>"
               "<span>%d errors</span><span>%d new</span><span>%d missing</span></div>\n",
            s->pairs, s->passed, s->identical, s->warned, s->failed, s->mismatched, s->errors, s->added, s->missing);
    fputs("<div class=\"bar\"><button id=\"fa\" class=\"on\" onclick=\"show(true)\">all</button> "
          "<button id=\"fn\" onclick=\"show(false)\">not passing</button></div>\n",
          f);
    fputs("<table><thead><tr><th>#</th><th>verdict</th><th>name</th><th>figures</th><th>preview</th></tr></thead>"
          "<tbody>\n",
          f);
    for (int i = 0; i < c->n; i++) {
        const cmp_pair *p = &c->pairs[i];
        const char *w = cmp_verdict_word(p);
        char fig[1400];
        figures(c->cfg, p, fig, sizeof fig);
        bool ok = p->code == CLI_CMP_PASS;
        bool detail = !ok && (p->rep_a || p->rep_b || p->rep_diff);
        fprintf(f, "<tr class=\"%s\"><td>%d</td><td><span class=\"badge %s\">%s</span></td><td class=\"name\">",
                ok ? "ok" : "bad", i + 1, w, w);
        if (detail)
            fprintf(f, "<a href=\"#p%d\">", p->index);
        cmp_xml_str(f, p->name ? p->name : "");
        if (detail)
            fputs("</a>", f);
        fputs("</td><td class=\"fig\">", f);
        cmp_xml_str(f, fig);
        fputs("</td><td>", f);
        const char *th = p->rep_diff ? p->rep_diff : p->rep_b ? p->rep_b : p->rep_a;
        img_tag(f, th, "thumb", p->name ? p->name : "");
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    for (int i = 0; i < c->n; i++) {
        const cmp_pair *p = &c->pairs[i];
        if (p->code == CLI_CMP_PASS || !(p->rep_a || p->rep_b || p->rep_diff))
            continue;
        const char *w = cmp_verdict_word(p);
        char fig[1400];
        figures(c->cfg, p, fig, sizeof fig);
        fprintf(f, "<div class=\"pair\" id=\"p%d\"><h2><span class=\"badge %s\">%s</span> ", p->index, w, w);
        cmp_xml_str(f, p->name ? p->name : "");
        fputs("</h2><div class=\"sub\">", f);
        cmp_xml_str(f, fig);
        fputs("</div><div class=\"row\">", f);
        const char *cap[3] = { "expected", "actual", "difference" };
        const char *src[3] = { p->rep_a, p->rep_b, p->rep_diff };
        for (int k = 0; k < 3; k++) {
            if (k == 2 && !src[k])
                continue;
            fputs("<figure>", f);
            img_tag(f, src[k], "", cap[k]);
            fprintf(f, "<figcaption>%s</figcaption></figure>", cap[k]);
        }
        fputs("</div>", f);
        if (p->rep_a && p->rep_b && p->kind == CMP_COMPARED) {
            fputs("<div class=\"cmp\">", f);
            img_tag(f, p->rep_a, "", "expected");
            fprintf(f, "<img class=\"top\" id=\"top%d\" style=\"clip-path:inset(0 50%% 0 0)\" src=\"", p->index);
            cmp_xml_str(f, p->rep_b);
            fputs("\" alt=\"actual\"></div>", f);
            fprintf(f, "<div class=\"tools\">expected &#x2190; <input type=\"range\" min=\"0\" max=\"100\" value=\"50\" "
                       "id=\"rng%d\" oninput=\"slide(%d,this.value)\"> &#x2192; actual "
                       "<button id=\"flip%d\" onclick=\"flip(%d)\">flip</button></div>",
                    p->index, p->index, p->index, p->index);
        }
        fputs("</div>\n", f);
    }
    fprintf(f, "<p class=\"sub\">vkimg %s</p></body></html>\n", VKIMG_VERSION);
    return 0;
}

int cmp_write_report(const cmp_cfg *cfg, const cmp_pair *pairs, int n, const cmp_summary *s, const char *dir,
                     const char *expected, const char *actual)
{
    report_ctx c = { cfg, pairs, n, s, expected, actual };
    char path[4200];
    snprintf(path, sizeof path, "%s/index.html", dir);
    vkimg_err e = { 0 };
    if (cli_write_with(path, report_fn, &c, &e))
        return cli_error(CLI_CMP_ERROR, "compare: --report: %s", e.msg);
    return 0;
}

/* compare's reports of one pair: the verdict word, the JSON object (the README's
 * schema) and the text block (idiff's layout, or one short line in directories). */
#include "compare.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- outputs */

const char *cmp_verdict_word(const cmp_pair *p)
{
    switch (p->kind) {
    case CMP_MISMATCH: return "MISMATCH";
    case CMP_ERROR: return "ERROR";
    case CMP_NEW: return "NEW";
    case CMP_MISSING: return "MISSING";
    default: return p->code == CLI_CMP_FAIL ? "FAILURE" : p->code == CLI_CMP_WARN ? "WARNING" : "PASS";
    }
}

static void json_path(FILE *f, const char *s)
{
    if (s)
        json_str(f, s);
    else
        fputs("null", f);
}

static void json_u64(FILE *f, uint64_t v)
{
    fprintf(f, "%llu", (unsigned long long)v);
}

/* a number, or null for "none" (a budget < 0) */
static void json_budget(FILE *f, double v)
{
    if (v < 0)
        fputs("null", f);
    else
        json_num(f, v);
}

void cmp_print_json(const cmp_cfg *cfg, const cmp_pair *p, FILE *f)
{
    const vkimg_compare_opts *o = &cfg->o;
    const vkimg_compare_result *r = &p->r;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    fputs("{\"version\": 1", f);
    if (p->name) {
        fputs(", \"name\": ", f);
        json_str(f, p->name);
    }
    fputs(", \"a\": ", f);
    json_path(f, p->a);
    fputs(", \"b\": ", f);
    json_path(f, p->b);
    if (p->kind == CMP_NEW || p->kind == CMP_MISSING || p->kind == CMP_ERROR) {
        fprintf(f, ", \"verdict\": \"%s\", \"exit_code\": %d", cmp_verdict_word(p), p->code);
        if (p->kind == CMP_ERROR) {
            fputs(", \"error\": ", f);
            json_str(f, p->err);
        }
        fputs("}\n", f);
        return;
    }
    if (p->kind == CMP_MISMATCH) {
        fprintf(f, ", \"verdict\": \"MISMATCH\", \"exit_code\": 3, \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d], "
                   "\"error\": ",
                p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
        json_str(f, p->err);
        fputs("}\n", f);
        return;
    }
    const bool ident = p->kind == CMP_IDENTICAL;
    const bool known = r->width > 0;
    if (known)
        fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d", r->width, r->height, r->channels);
    else
        fputs(", \"width\": null, \"height\": null, \"channels\": null", f);
    if (p->fmt_known)
        fprintf(f, ", \"format_a\": \"%s\", \"format_b\": \"%s\"", vkimg_fmt_name(p->fa), vkimg_fmt_name(p->fb));
    else
        fputs(", \"format_a\": null, \"format_b\": null", f);
    fputs(", \"pixels\": ", f);
    if (known)
        json_u64(f, r->pixels);
    else
        fputs("null", f);
    /* ABS's error figures: null under --metric yiq (not computed there) */
    if (yiq && !ident) {
        fputs(", \"mae\": null, \"rmse\": null, \"psnr\": null, \"max_error\": null, \"max_x\": null, \"max_y\": null, "
              "\"max_channel\": null",
              f);
    } else {
        json_field(f, "mae", r->mae);
        json_field(f, "rmse", r->rmse);
        json_field(f, "psnr", r->psnr);
        json_field(f, "max_error", r->max_err);
        fprintf(f, ", \"max_x\": %d, \"max_y\": %d, \"max_channel\": %d", r->max_x, r->max_y, r->max_c);
    }
    json_field(f, "fail", o->fail);
    json_field(f, "failpercent", o->failpercent);
    json_field(f, "hardfail", o->hardfail);
    json_field(f, "warn", o->warn);
    json_field(f, "warnpercent", o->warnpercent);
    json_field(f, "hardwarn", o->hardwarn);
    uint64_t total = r->compared + r->outside;
    uint64_t nfail = yiq ? r->ndiff : r->nfail, nwarn = yiq ? r->ndiff : r->nwarn;
    fputs(", \"nfail\": ", f);
    json_u64(f, nfail);
    json_field(f, "pct_fail", yiq ? (total ? 100.0 * (double)nfail / (double)total : 0) : r->pct_fail);
    fputs(", \"nwarn\": ", f);
    json_u64(f, nwarn);
    json_field(f, "pct_warn", yiq ? (total ? 100.0 * (double)nwarn / (double)total : 0) : r->pct_warn);
    json_field(f, "ssim", o->ssim ? r->ssim : NAN);
    fprintf(f, ", \"verdict\": \"%s\", \"exit_code\": %d, \"diff\": ", cmp_verdict_word(p), p->code);
    json_path(f, p->diff_written ? p->diff_out : NULL);
    fprintf(f, ", \"identical\": %s, \"metric\": \"%s\", \"threshold\": ", ident ? "true" : "false",
            yiq ? "yiq" : "abs");
    if (yiq)
        json_num(f, o->threshold);
    else
        fputs("null", f);
    fprintf(f, ", \"aa\": %s, \"ndiff\": ", yiq && o->aa ? "true" : "false");
    json_u64(f, r->ndiff);
    fputs(", \"naa\": ", f);
    json_u64(f, r->naa);
    fputs(", \"compared\": ", f);
    if (known)
        json_u64(f, r->compared);
    else
        fputs("null", f);
    fputs(", \"ignored\": ", f);
    json_u64(f, r->ignored);
    fputs(", \"outside\": ", f);
    json_u64(f, r->outside);
    json_field(f, "diff_ratio", r->diff_ratio);
    json_field(f, "diff_percentage", r->pixels ? 100.0 * (double)r->ndiff / (double)r->pixels : 0);
    fputs(", \"max_diff_pixels\": ", f);
    json_budget(f, o->max_diff_pixels);
    fputs(", \"max_diff_ratio\": ", f);
    json_budget(f, o->max_diff_ratio);
    if (p->wa)
        fprintf(f, ", \"size_a\": [%d, %d, %d], \"size_b\": [%d, %d, %d]", p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
    else
        fputs(", \"size_a\": null, \"size_b\": null", f);
    fprintf(f, ", \"bytes_a\": %lld, \"bytes_b\": %lld}\n", p->bytes_a, p->bytes_b);
}

/* "12 pixels differ (0.5%)", the figures of a compared pair on one line */
static void short_figures(const cmp_cfg *cfg, const cmp_pair *p, char *buf, size_t n)
{
    const vkimg_compare_result *r = &p->r;
    size_t at = 0;
    if (p->kind == CMP_IDENTICAL) {
        snprintf(buf, n, "identical files");
        return;
    }
    if (cfg->o.metric == VKIMG_METRIC_YIQ) {
        at += (size_t)snprintf(buf + at, n - at, "%llu pixels differ (%.4g%%)", (unsigned long long)r->ndiff,
                               100.0 * r->diff_ratio);
        if (cfg->o.aa && at < n)
            at += (size_t)snprintf(buf + at, n - at, ", %llu anti-aliased", (unsigned long long)r->naa);
    } else {
        at += (size_t)snprintf(buf + at, n - at, "%llu pixels over %g (%.4g%%), max error %.6g",
                               (unsigned long long)r->nfail, cfg->o.fail, r->pct_fail, r->max_err);
    }
    if (r->outside && at < n)
        snprintf(buf + at, n - at, ", %llu outside the overlap", (unsigned long long)r->outside);
}

void cmp_print_text(const cmp_cfg *cfg, const cmp_pair *p, bool long_form, FILE *f)
{
    const vkimg_compare_opts *o = &cfg->o;
    const vkimg_compare_result *r = &p->r;
    const bool yiq = o->metric == VKIMG_METRIC_YIQ;
    if (!long_form) {
        char fig[1200] = "";
        switch (p->kind) {
        case CMP_NEW: snprintf(fig, sizeof fig, "only in ACTUAL%s", cfg->fail_on_new ? " (--fail-on-new)" : ""); break;
        case CMP_MISSING: snprintf(fig, sizeof fig, "only in EXPECTED"); break;
        case CMP_MISMATCH:
            snprintf(fig, sizeof fig, "%dx%dx%d vs %dx%dx%d", p->wa, p->ha, p->ca, p->wb, p->hb, p->cb);
            break;
        case CMP_ERROR: snprintf(fig, sizeof fig, "%s", p->err); break;
        default: short_figures(cfg, p, fig, sizeof fig);
        }
        fprintf(f, "%-8s %s: %s%s%s\n", cmp_verdict_word(p), p->name ? p->name : p->b, fig,
                p->diff_written ? "; difference image " : "", p->diff_written ? p->diff_out : "");
        return;
    }
    fprintf(f, "Comparing \"%s\" and \"%s\"\n", p->a, p->b);
    if (p->kind == CMP_IDENTICAL && !r->diff.data && p->decode_ms == 0) {
        if (r->width)
            fprintf(f, "  %d x %d, %d channel%s (%s); identical files (%lld bytes), not decoded\n", r->width,
                    r->height, p->ca, p->ca > 1 ? "s" : "", vkimg_fmt_name(p->fa), p->bytes_a);
        else
            fprintf(f, "  identical files (%lld bytes), not decoded\n", p->bytes_a);
    } else {
        fprintf(f, "  %d x %d, %d channel%s (%s vs %s)%s", r->width, r->height, p->ca, p->ca > 1 ? "s" : "",
                vkimg_fmt_name(p->fa), vkimg_fmt_name(p->fb), p->kind == CMP_IDENTICAL ? "; identical files" : "");
        if (yiq)
            fprintf(f, "; YIQ colour delta (pixelmatch), threshold %g, anti-aliased pixels %s\n", o->threshold,
                    o->aa ? "not counted" : "counted");
        else
            fprintf(f, "; errors on values normalized to [0,1]\n");
        if (p->wa != p->wb || p->ha != p->hb)
            fprintf(f, "  sizes differ (%dx%d vs %dx%d): compared over the %dx%d overlap, %llu pixels outside it count "
                       "as different\n",
                    p->wa, p->ha, p->wb, p->hb, p->wa < p->wb ? p->wa : p->wb, p->ha < p->hb ? p->ha : p->hb,
                    (unsigned long long)r->outside);
        if (r->ignored)
            fprintf(f, "  %llu pixels ignored (--ignore / --mask)\n", (unsigned long long)r->ignored);
    }
    if (yiq) {
        fprintf(f, "  %llu pixels differ (%.4g%% of %llu)\n", (unsigned long long)r->ndiff, 100.0 * r->diff_ratio,
                (unsigned long long)(r->compared + r->outside));
        if (o->aa)
            fprintf(f, "  %llu anti-aliased pixels not counted\n", (unsigned long long)r->naa);
    } else {
        static const char *const cname4[] = { "R", "G", "B", "A" };
        char where[64];
        int nc = p->ca ? p->ca : 1;
        snprintf(where, sizeof where, "(%d, %d, %s)", r->max_x, r->max_y,
                 nc <= 2 ? (r->max_c == 0 ? "gray" : "alpha") : cname4[r->max_c & 3]);
        fprintf(f, "  Mean error = %.6g\n", r->mae);
        fprintf(f, "  RMS error = %.6g\n", r->rmse);
        if (isinf(r->psnr))
            fprintf(f, "  Peak SNR = inf\n");
        else
            fprintf(f, "  Peak SNR = %.6g dB\n", r->psnr);
        fprintf(f, "  Max error  = %.6g @ %s\n", r->max_err, where);
        fprintf(f, "  %llu pixels (%.4g%%) over %g (fail)\n", (unsigned long long)r->nfail, r->pct_fail, o->fail);
        fprintf(f, "  %llu pixels (%.4g%%) over %g (warn)\n", (unsigned long long)r->nwarn, r->pct_warn, o->warn);
    }
    if (o->ssim)
        fprintf(f, "  SSIM = %.8f\n", r->ssim);
    if (o->max_diff_pixels >= 0)
        fprintf(f, "  budget: at most %.0f differing pixels\n", o->max_diff_pixels);
    if (o->max_diff_ratio >= 0)
        fprintf(f, "  budget: at most %g of the pixels differing\n", o->max_diff_ratio);
    if (p->diff_written) {
        if (yiq)
            fprintf(f, "  difference image written to %s\n", p->diff_out);
        else
            fprintf(f, "  difference image (x%g) written to %s\n", o->diff_scale, p->diff_out);
    }
    fprintf(f, "%s\n", cmp_verdict_word(p));
}


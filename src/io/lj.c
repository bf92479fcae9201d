/* libjpeg's error handling as vkimg wants it (lj.h). */
#include "io/lj.h"

#include <jerror.h>

static void lj_error_exit(j_common_ptr c)
{
    vki_lj_err *de = (vki_lj_err *)c->err;
    c->err->format_message(c, de->msg);
    longjmp(de->jump, 1);
}

/* Bytes between marker segments before the frame's first scan (a metadata
 * writer's wrong segment length, junk after SOI): libjpeg skips them to the next
 * marker, and they cannot be image data, which only a scan holds. comps_in_scan
 * is set by the first SOS that libjpeg reads (the struct starts zeroed). */
static bool header_junk(j_common_ptr c)
{
    return c->is_decompressor && c->err->msg_code == JWRN_EXTRANEOUS_DATA &&
           ((j_decompress_ptr)c)->comps_in_scan == 0;
}

static void lj_emit(j_common_ptr c, int level)
{
    /* a warning (corrupt data): an error, as TJFLAG_STOPONWARNING, except
     * skipped bytes that are not image data */
    if (level < 0 && !header_junk(c))
        lj_error_exit(c);
}

struct jpeg_error_mgr *vki_lj_errors(vki_lj_err *de, bool warnings_fatal)
{
    struct jpeg_error_mgr *m = jpeg_std_error(&de->mgr);
    m->error_exit = lj_error_exit;
    if (warnings_fatal)
        m->emit_message = lj_emit;
    de->msg[0] = 0;
    return m;
}

void vki_lj_limit_scans(j_common_ptr c)
{
    if (c->is_decompressor && ((j_decompress_ptr)c)->input_scan_number > VKI_LJ_MAX_SCANS) {
        vki_lj_err *de = (vki_lj_err *)c->err;
        snprintf(de->msg, sizeof de->msg, "progressive JPEG with more than %d scans", VKI_LJ_MAX_SCANS);
        longjmp(de->jump, 1);
    }
}

/* libjpeg's own API, where TurboJPEG has no call for it (jpeg.c: the DC-only
 * decode at 1/8, the coded decode and encode; jpeg_entropy.c: the scan handed to
 * the device): errors longjmp back with their text, and a warning (corrupt
 * data) is an error, as TJFLAG_STOPONWARNING, except bytes that libjpeg skips
 * between marker segments before the first scan (not image data: the pixels
 * are those of the file without them); a progressive file of more than
 * VKI_LJ_MAX_SCANS scans is an error, as TJFLAG_LIMITSCANS. */
#ifndef VKI_LJ_H
#define VKI_LJ_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h> /* jpeglib.h needs FILE */

#include <jpeglib.h>

#define VKI_LJ_MAX_SCANS 500

typedef struct vki_lj_err {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} vki_lj_err;

/* The error manager of one libjpeg object: errors longjmp to de->jump with
 * their text in de->msg; with warnings_fatal, a warning too (but for the
 * skipped bytes before the first scan, above). */
struct jpeg_error_mgr *vki_lj_errors(vki_lj_err *de, bool warnings_fatal);
/* A progress monitor (jpeg_progress_mgr.progress_monitor) that makes a
 * progressive file of more than VKI_LJ_MAX_SCANS scans an error. */
void vki_lj_limit_scans(j_common_ptr c);

#endif

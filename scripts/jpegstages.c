/* vkimg-jpegstages: where libjpeg-turbo's time goes for a set of JPEGs (a
 * benchmark, not a test): whole decode (TurboJPEG, RGB), the entropy decoding
 * alone (jpeg_read_coefficients), whole encode at quality 90 (4:4:4 as vkimg
 * writes from 90) and the entropy coding alone (jpeg_write_coefficients of the
 * decoded coefficients), on 1 thread and on N threads at once (each thread its
 * own files). What the device could take over is the difference.
 *
 *   vkimg-jpegstages [-t N] FILE.jpg...
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jpeglib.h>
#include <turbojpeg.h>

typedef struct file {
    unsigned char *jpg;
    unsigned long len;
    int w, h;
} file;

static file *files;
static int nfiles;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double stage_decode(const file *f)
{
    tjhandle h = tjInitDecompress();
    unsigned char *px = malloc((size_t)f->w * f->h * 3);
    double t = now_ms();
    tjDecompress2(h, f->jpg, f->len, px, f->w, f->w * 3, f->h, TJPF_RGB, 0);
    t = now_ms() - t;
    free(px);
    tjDestroy(h);
    return t;
}

static double stage_entropy_decode(const file *f)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr jerr;
    d.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&d);
    double t = now_ms();
    jpeg_mem_src(&d, f->jpg, f->len);
    jpeg_read_header(&d, TRUE);
    jvirt_barray_ptr *coefs = jpeg_read_coefficients(&d);
    /* touch every block row as a copy to the device would */
    long sum = 0;
    for (int c = 0; c < d.num_components; c++) {
        jpeg_component_info *ci = &d.comp_info[c];
        for (JDIMENSION by = 0; by < ci->height_in_blocks; by++) {
            JBLOCKARRAY row = d.mem->access_virt_barray((j_common_ptr)&d, coefs[c], by, 1, FALSE);
            sum += row[0][0][0];
        }
    }
    t = now_ms() - t;
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return t + (sum == 123456789 ? 1e-9 : 0);
}

static double stage_encode(const file *f, unsigned char *px)
{
    tjhandle h = tjInitCompress();
    unsigned char *out = NULL;
    unsigned long len = 0;
    double t = now_ms();
    tjCompress2(h, px, f->w, f->w * 3, f->h, TJPF_RGB, &out, &len, TJSAMP_444, 90, 0);
    t = now_ms() - t;
    tjFree(out);
    tjDestroy(h);
    return t;
}

static double stage_entropy_encode(const file *f)
{
    struct jpeg_decompress_struct d;
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr je, je2;
    d.err = jpeg_std_error(&je);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, f->jpg, f->len);
    jpeg_read_header(&d, TRUE);
    jvirt_barray_ptr *coefs = jpeg_read_coefficients(&d);
    c.err = jpeg_std_error(&je2);
    jpeg_create_compress(&c);
    unsigned char *out = NULL;
    unsigned long len = 0;
    jpeg_mem_dest(&c, &out, &len);
    jpeg_copy_critical_parameters(&d, &c);
    double t = now_ms();
    jpeg_write_coefficients(&c, coefs);
    jpeg_finish_compress(&c);
    t = now_ms() - t;
    jpeg_destroy_compress(&c);
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    free(out);
    return t;
}

typedef struct task {
    int first, step;
    double ms[4];
} task;

static void *run(void *arg)
{
    task *k = arg;
    for (int i = k->first; i < nfiles; i += k->step) {
        const file *f = &files[i];
        unsigned char *px = malloc((size_t)f->w * f->h * 3);
        tjhandle h = tjInitDecompress();
        tjDecompress2(h, f->jpg, f->len, px, f->w, f->w * 3, f->h, TJPF_RGB, 0);
        tjDestroy(h);
        k->ms[0] += stage_decode(f);
        k->ms[1] += stage_entropy_decode(f);
        k->ms[2] += stage_encode(f, px);
        k->ms[3] += stage_entropy_encode(f);
        free(px);
    }
    return NULL;
}

static void report(int nthreads)
{
    task *k = calloc((size_t)nthreads, sizeof *k);
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    double t0 = now_ms();
    for (int i = 0; i < nthreads; i++) {
        k[i].first = i;
        k[i].step = nthreads;
        pthread_create(&t[i], NULL, run, &k[i]);
    }
    double ms[4] = { 0 };
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        for (int s = 0; s < 4; s++)
            ms[s] += k[i].ms[s];
    }
    double wall = now_ms() - t0;
    double mp = 0;
    for (int i = 0; i < nfiles; i++)
        mp += (double)files[i].w * files[i].h / 1e6;
    printf("%2d thread(s), %d files (%.1f MP), wall %.0f ms; per image: decode %.1f ms (entropy %.1f = %.0f%%), "
           "encode q90 4:4:4 %.1f ms (entropy %.1f = %.0f%%); per thread %.0f MP/s decode, %.0f MP/s encode\n",
           nthreads, nfiles, mp, wall, ms[0] / nfiles, ms[1] / nfiles, 100 * ms[1] / ms[0], ms[2] / nfiles,
           ms[3] / nfiles, 100 * ms[3] / ms[2], mp / (ms[0] / 1e3), mp / (ms[2] / 1e3));
    free(k);
    free(t);
}

int main(int argc, char **argv)
{
    int nthreads = 1, a = 1;
    if (argc > 2 && !strcmp(argv[1], "-t")) {
        nthreads = atoi(argv[2]);
        a = 3;
    }
    if (a >= argc || nthreads < 1) {
        fprintf(stderr, "usage: vkimg-jpegstages [-t N] FILE.jpg...\n");
        return 2;
    }
    files = calloc((size_t)(argc - a), sizeof *files);
    for (int i = a; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp)
            continue;
        fseek(fp, 0, SEEK_END);
        long n = ftell(fp);
        fseek(fp, 0, SEEK_SET);
        file *f = &files[nfiles];
        f->jpg = malloc((size_t)n);
        f->len = (unsigned long)fread(f->jpg, 1, (size_t)n, fp);
        fclose(fp);
        tjhandle h = tjInitDecompress();
        int ss, cs;
        if (tjDecompressHeader3(h, f->jpg, f->len, &f->w, &f->h, &ss, &cs) == 0)
            nfiles++;
        tjDestroy(h);
    }
    report(1);
    if (nthreads > 1)
        report(nthreads);
    return 0;
}

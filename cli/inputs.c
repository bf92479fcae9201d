/* Batch inputs and outputs (inputs.h). */
#define _GNU_SOURCE
#include "inputs.h"
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int sv_push(strvec *s, const char *str)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        char **nv = realloc(s->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(str)))
        return -1;
    s->n++;
    return 0;
}

void sv_free(strvec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The extensions a directory scan takes (the formats vkimg reads). */
static const char *const IMAGE_EXTS[] = { "png", "jpg", "jpeg", "webp", "tif", "tiff", "bmp", "tga", "psd",
                                          "gif", "hdr", "pic", "pnm", "ppm", "pgm", "pbm", "pam", NULL };

static const char *ext_of(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

static bool is_image_name(const char *name)
{
    const char *x = ext_of(name);
    for (int i = 0; IMAGE_EXTS[i]; i++)
        if (!strcasecmp(x, IMAGE_EXTS[i]))
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(const char *dir, bool recursive, strvec *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(CLI_EXIT_RUNTIME, "%s: cannot open directory: %s", dir, strerror(errno));
    strvec names = { 0 };
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", de->d_name);
        struct stat st;
        if (stat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (recursive && (rc = scan_dir(path, true, &names)))
                break;
        } else if (S_ISREG(st.st_mode) && is_image_name(de->d_name) && sv_push(&names, path)) {
            rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
            break;
        }
    }
    closedir(d);
    if (names.n) /* an empty vector has no array: qsort(NULL, 0) is undefined */
        qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int i = 0; i < names.n && !rc; i++)
        if (sv_push(out, names.v[i]))
            rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
    sv_free(&names);
    return rc;
}

/* The paths in f, one per line; what names f, how the option that gave it. */
static int read_list(FILE *f, const char *what, const char *how, strvec *out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!n || line[0] == '#')
            continue;
        /* a path has no NUL and no control character: image bytes piped in
         * where paths are read ('-i -' with 'cat a.png |') */
        bool binary = false;
        for (ssize_t k = 0; k < n && !binary; k++)
            binary = (unsigned char)line[k] < 0x20 && line[k] != '\t';
        if (binary) {
            rc = cli_error(CLI_EXIT_USAGE, "%s: holds binary data, not paths one per line (%s reads the paths of "
                           "the images, not an image)", what, how);
            break;
        }
        if (sv_push(out, line)) {
            rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
            break;
        }
    }
    if (!rc && ferror(f))
        rc = cli_error(CLI_EXIT_RUNTIME, "%s: read error", what);
    free(line);
    return rc;
}

bool cli_input_is_single(const char *arg)
{
    struct stat st;
    return !strpbrk(arg, "*?[") && arg[0] != '@' && strcmp(arg, "-") && !(!stat(arg, &st) && S_ISDIR(st.st_mode));
}

int cli_expand_input(const char *arg, bool recursive, strvec *out)
{
    if (!strcmp(arg, "-"))
        return read_list(stdin, "standard input", "'-i -'", out);
    if (arg[0] == '@') {
        FILE *f = fopen(arg + 1, "r");
        if (!f)
            return cli_error(CLI_EXIT_RUNTIME, "%s: cannot read list: %s", arg + 1, strerror(errno));
        int rc = read_list(f, arg + 1, "@LIST", out);
        fclose(f);
        return rc;
    }
    struct stat st;
    if (!stat(arg, &st) && S_ISDIR(st.st_mode))
        return scan_dir(arg, recursive, out);
    if (strpbrk(arg, "*?[")) {
        glob_t g;
        int r = glob(arg, 0, NULL, &g);
        if (r == GLOB_NOMATCH)
            return cli_error(CLI_EXIT_USAGE, "-i '%s': no file matches", arg);
        if (r)
            return cli_error(CLI_EXIT_RUNTIME, "-i '%s': glob failed", arg);
        int rc = 0;
        for (size_t i = 0; i < g.gl_pathc && !rc; i++)
            if (sv_push(out, g.gl_pathv[i]))
                rc = cli_error(CLI_EXIT_RUNTIME, "out of memory");
        globfree(&g);
        return rc;
    }
    return sv_push(out, arg) ? cli_error(CLI_EXIT_RUNTIME, "out of memory") : 0;
}

int cli_expand_template(const char *t, const char *in, int idx, char *buf, size_t n)
{
    char dir[4096], name[1024], stem[1024];
    const char *slash = strrchr(in, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - in), in);
    else
        snprintf(dir, sizeof dir, ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : in);
    snprintf(stem, sizeof stem, "%s", name);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem)
        *dot = 0;
    const char *ext = ext_of(in);
    size_t at = 0;
    for (const char *p = t; *p; p++) {
        const char *rep = NULL;
        char num[32];
        size_t skip = 0;
        if (*p == '{') {
            if (!strncmp(p, "{dir}", 5))
                rep = dir, skip = 5;
            else if (!strncmp(p, "{name}", 6))
                rep = name, skip = 6;
            else if (!strncmp(p, "{stem}", 6))
                rep = stem, skip = 6;
            else if (!strncmp(p, "{ext}", 5))
                rep = ext, skip = 5;
            else if (!strncmp(p, "{index}", 7)) {
                snprintf(num, sizeof num, "%d", idx);
                rep = num, skip = 7;
            } else if (!strncmp(p, "{level}", 7)) {
                rep = "{level}", skip = 7; /* filled when the levels are written */
            } else {
                return -1;
            }
        }
        if (rep) {
            size_t l = strlen(rep);
            if (at + l >= n)
                return -2;
            memcpy(buf + at, rep, l);
            at += l;
            p += skip - 1;
        } else {
            if (at + 1 >= n)
                return -2;
            buf[at++] = *p;
        }
    }
    buf[at] = 0;
    return 0;
}

unsigned cli_shard_of(const char *path, unsigned nshards)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return (unsigned)(h % nshards);
}

static char *const *g_outs; /* qsort has no context argument */

static int cmp_out(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int c = strcmp(g_outs[x], g_outs[y]);
    return c ? c : (x > y) - (x < y);
}

bool cli_find_collision(char *const *outs, int n, int *a, int *b)
{
    int *ord = malloc((size_t)(n ? n : 1) * sizeof *ord);
    bool found = false;
    if (!ord) { /* no memory to sort: the quadratic check, which needs none */
        for (int i = 0; i < n && !found; i++)
            for (int k = i + 1; k < n && !found; k++)
                if (!strcmp(outs[i], outs[k])) {
                    *a = i;
                    *b = k;
                    found = true;
                }
        return found;
    }
    for (int i = 0; i < n; i++)
        ord[i] = i;
    g_outs = outs;
    qsort(ord, (size_t)n, sizeof *ord, cmp_out);
    for (int i = 1; i < n && !found; i++)
        if (!strcmp(outs[ord[i]], outs[ord[i - 1]])) {
            *a = ord[i - 1];
            *b = ord[i];
            found = true;
        }
    free(ord);
    return found;
}

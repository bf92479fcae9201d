/* Atomic writes (a temporary file in the output directory, renamed into
 * place) and the output-path check made before any work. */
#include "io/io_priv.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static mode_t g_umask;
static pthread_once_t g_umask_once = PTHREAD_ONCE_INIT;

/* The process umask, read without changing it (/proc/self/status) where possible:
 * umask(2) can only be read by setting it, which would race with other threads
 * creating files. Read once. */
static void read_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            unsigned m;
            if (sscanf(line, "Umask: %o", &m) == 1) {
                g_umask = (mode_t)(m & 0777);
                fclose(f);
                return;
            }
        }
        fclose(f);
    }
    mode_t m = umask(022);
    umask(m);
    g_umask = m & 0777;
}

static int write_all(int fd, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n) {
        size_t chunk = n < ((size_t)1 << 30) ? n : (size_t)1 << 30;
        ssize_t r = write(fd, p, chunk);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            errno = EIO;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int vki_write_atomic_v(const char *path, const vki_span *parts, int nparts, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_RUNTIME, "(empty path): cannot write: %s", strerror(ENOENT));
    if (nparts < 0 || (nparts > 0 && !parts))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(EINVAL));
    size_t plen = strlen(path);
    struct stat st;
    if (path[plen - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(EISDIR));

    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0; /* with the slash */
    const char *base = slash ? slash + 1 : path;
    size_t baselen = strlen(base);
    if (baselen > 200) /* keep the temporary name under NAME_MAX */
        baselen = 200;
    static const char suffix[] = ".vkimg-XXXXXX";
    char *tmp = malloc(dirlen + 1 + baselen + sizeof suffix);
    if (!tmp)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(ENOMEM));
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, baselen);
    memcpy(tmp + dirlen + 1 + baselen, suffix, sizeof suffix);

    int fd = mkstemp(tmp); /* 0600, O_EXCL */
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(err));
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    pthread_once(&g_umask_once, read_umask);
    int err = 0;
    if (fchmod(fd, 0666 & ~g_umask))
        err = errno;
    for (int i = 0; !err && i < nparts; i++)
        if (parts[i].n && write_all(fd, parts[i].p, parts[i].n))
            err = errno;
    if (close(fd) && !err)
        err = errno;
    if (!err && rename(tmp, path))
        err = errno;
    if (err) {
        unlink(tmp);
        free(tmp);
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(err ? err : EIO));
    }
    free(tmp);
    return 0;
}

int vki_write_atomic(const char *path, const void *data, size_t n, vkimg_err *e)
{
    vki_span s = { data, n };
    return vki_write_atomic_v(path, &s, 1, e);
}

int vkimg_write_file(const char *path, const void *data, size_t n, vkimg_err *e)
{
    if (!data && n)
        return vki_fail(e, VKIMG_E_USAGE, "vkimg_write_file: NULL data");
    return vki_write_atomic(path, data, n, e);
}

int vkimg_check_output(const char *path, vkimg_err *e)
{
    if (!path || !*path)
        return vki_fail(e, VKIMG_E_USAGE, "empty output path");
    vkimg_file_kind k;
    int rc = vki_output_kind(path, &k, e);
    if (rc)
        return rc;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: is a directory", path);

    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash) {
        dir = strdup(".");
    } else {
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        dir = malloc(dl + 1);
        if (dir) {
            memcpy(dir, path, dl);
            dir[dl] = 0;
        }
    }
    if (!dir)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: out of memory", path);
    if (stat(dir, &st)) {
        int err = errno;
        rc = err == ENOENT ? vki_fail(e, VKIMG_E_RUNTIME, "%s: directory '%s' does not exist", path, dir)
                           : vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot use directory '%s': %s", path, dir, strerror(err));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: '%s' is not a directory", path, dir);
    } else if (access(dir, W_OK | X_OK)) {
        rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: directory '%s' is not writable: %s", path, dir, strerror(errno));
    }
    free(dir);
    return rc;
}

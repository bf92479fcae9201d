/* Atomic writes (an unnamed temporary file in the output directory, linked and
 * renamed into place once whole; a named one where the file system has no
 * O_TMPFILE) and the output-path check made before any work. */
#define _GNU_SOURCE
#include "io/io_priv.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

/* ---- temporary names that exist now: unlinked by vkimg_remove_temp_files (from a
 * signal handler). Fixed slots, so that the handler touches no allocator and no
 * lock: a slot is claimed (0 -> 1), filled, published (1 -> 2), and released
 * (2 -> 0) before its name is reused. */
#define TEMP_SLOTS 256
#define TEMP_NAME_MAX 4096
static _Atomic int g_temp_state[TEMP_SLOTS];
static char g_temp_name[TEMP_SLOTS][TEMP_NAME_MAX];

static int temp_register(const char *name)
{
    size_t n = strlen(name);
    if (n >= TEMP_NAME_MAX)
        return -1;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int free_state = 0;
        if (atomic_compare_exchange_strong(&g_temp_state[i], &free_state, 1)) {
            memcpy(g_temp_name[i], name, n + 1);
            atomic_store(&g_temp_state[i], 2);
            return i;
        }
    }
    return -1; /* all taken: this name goes unregistered */
}

static void temp_release(int slot)
{
    if (slot >= 0)
        atomic_store(&g_temp_state[slot], 0);
}

void vkimg_remove_temp_files(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&g_temp_state[i]) == 2)
            unlink(g_temp_name[i]);
}

/* ---- a test-only fault (VKIMG_TEST_FAULT=enospc:N): writes fail with ENOSPC once a
 * file has N bytes, as on a full disk (tests/cli/test_faults.sh) */
static long fault_enospc_at(void)
{
    const char *f = getenv("VKIMG_TEST_FAULT");
    long n;
    char tail;
    if (f && sscanf(f, "enospc:%ld%c", &n, &tail) == 1 && n >= 0)
        return n;
    return -1;
}

static int write_parts(int fd, const vki_span *parts, int nparts)
{
    long room = fault_enospc_at();
    for (int i = 0; i < nparts; i++) {
        if (!parts[i].n)
            continue;
        if (room >= 0 && parts[i].n > (size_t)room) {
            if (room > 0)
                (void)!write_all(fd, parts[i].p, (size_t)room);
            errno = ENOSPC;
            return -1;
        }
        if (write_all(fd, parts[i].p, parts[i].n))
            return -1;
        if (room >= 0)
            room -= (long)parts[i].n;
    }
    return 0;
}

/* ".BASE.vkimg-XXXXXX" in the directory of path (BASE cut to 200 bytes, under NAME_MAX). */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0; /* with the slash */
    const char *base = slash ? slash + 1 : path;
    size_t baselen = strlen(base);
    if (baselen > 200)
        baselen = 200;
    static const char suffix[] = ".vkimg-XXXXXX";
    char *tmp = malloc(dirlen + 1 + baselen + sizeof suffix);
    if (!tmp)
        return NULL;
    memcpy(tmp, path, dirlen);
    tmp[dirlen] = '.';
    memcpy(tmp + dirlen + 1, base, baselen);
    memcpy(tmp + dirlen + 1 + baselen, suffix, sizeof suffix);
    return tmp;
}

/* Writes through an unnamed file (O_TMPFILE) that gets a name only once it is
 * whole: a temporary one (linkat), at once renamed over path. Nothing is left by
 * any way the process ends but in the moment between the two calls (covered by
 * the signal handlers through the registry). Returns 0, an errno, or -1 where the
 * file system has no O_TMPFILE (the caller then uses a named temporary). */
static int write_tmpfile(const char *path, const vki_span *parts, int nparts)
{
#ifdef O_TMPFILE
    if (vki_fault_hit("no-tmpfile")) /* tests: the named way, as on a file system without O_TMPFILE */
        return -1;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!dir)
        return ENOMEM;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    free(dir);
    if (fd < 0)
        return errno == ENOMEM || errno == EACCES || errno == EROFS || errno == ENOSPC || errno == EDQUOT ? errno : -1;
    int err = 0;
    if (fchmod(fd, 0666 & ~g_umask) || write_parts(fd, parts, nparts))
        err = errno;
    char *tmp = err ? NULL : temp_template(path);
    if (!err && !tmp)
        err = ENOMEM;
    if (!err) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        size_t tl = strlen(tmp);
        int slot = -1;
        for (int attempt = 0;; attempt++) {
            unsigned long long r = (unsigned long long)vki_now_ms() * 1000003ull ^ (unsigned long long)getpid() << 20 ^
                                   (unsigned long long)(uintptr_t)tmp ^ (unsigned long long)attempt * 0x9e3779b97f4a7c15ull;
            for (int k = 0; k < 6; k++, r /= 36)
                tmp[tl - 6 + k] = "abcdefghijklmnopqrstuvwxyz0123456789"[r % 36];
            slot = temp_register(tmp);
            if (!linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW))
                break;
            err = errno;
            temp_release(slot);
            slot = -1;
            if (err != EEXIST || attempt == 100)
                break;
            err = 0;
        }
        if (err == ENOENT && access("/proc/self/fd", F_OK)) /* no /proc: the named way */
            err = -1;
        if (!err && rename(tmp, path)) {
            err = errno;
            unlink(tmp);
        }
        temp_release(slot);
    }
    free(tmp);
    if (close(fd) && !err)
        err = errno;
    return err;
#else
    (void)path;
    (void)parts;
    (void)nparts;
    return -1;
#endif
}

/* The named way: mkstemp beside path, written, renamed into place; registered so
 * that a signal handler can remove it. */
static int write_named(const char *path, const vki_span *parts, int nparts)
{
    char *tmp = temp_template(path);
    if (!tmp)
        return ENOMEM;
    int fd = mkstemp(tmp); /* 0600, O_EXCL */
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return err;
    }
    int slot = temp_register(tmp);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    int err = 0;
    if (fchmod(fd, 0666 & ~g_umask))
        err = errno;
    if (!err && write_parts(fd, parts, nparts))
        err = errno;
    if (close(fd) && !err)
        err = errno;
    if (!err && rename(tmp, path))
        err = errno;
    if (err)
        unlink(tmp);
    temp_release(slot);
    free(tmp);
    return err;
}

/* ---- several files that appear together (vki_txn_begin .. commit): each is
 * written to a named temporary beside it, and renamed into place only when all
 * are whole; the temporaries are registered until then (signals remove them). */
struct vki_txn {
    int n, cap;
    char **tmp, **dst;
    int *slot;
};
static _Thread_local vki_txn *g_txn;

vki_txn *vki_txn_begin(void)
{
    vki_txn *t = calloc(1, sizeof *t);
    g_txn = t;
    return t;
}

static void txn_free(vki_txn *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->tmp[i]);
        free(t->dst[i]);
    }
    free(t->tmp);
    free(t->dst);
    free(t->slot);
    free(t);
}

void vki_txn_abort(vki_txn *t)
{
    if (!t)
        return;
    if (g_txn == t)
        g_txn = NULL;
    for (int i = 0; i < t->n; i++) {
        unlink(t->tmp[i]);
        temp_release(t->slot[i]);
    }
    txn_free(t);
}

int vki_txn_commit(vki_txn *t, vkimg_err *e)
{
    if (!t)
        return vki_fail(e, VKIMG_E_RUNTIME, "out of memory");
    if (g_txn == t)
        g_txn = NULL;
    int rc = 0;
    for (int i = 0; i < t->n; i++) {
        if (!rc && rename(t->tmp[i], t->dst[i]))
            rc = vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", t->dst[i], strerror(errno));
        if (rc)
            unlink(t->tmp[i]);
        temp_release(t->slot[i]);
    }
    txn_free(t);
    return rc;
}

/* A named temporary beside path, written whole, kept for the transaction. */
static int txn_write(vki_txn *t, const char *path, const vki_span *parts, int nparts)
{
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 8;
        char **a = realloc(t->tmp, (size_t)nc * sizeof *a), **b = a ? realloc(t->dst, (size_t)nc * sizeof *b) : NULL;
        int *c = b ? realloc(t->slot, (size_t)nc * sizeof *c) : NULL;
        if (a)
            t->tmp = a;
        if (b)
            t->dst = b;
        if (c)
            t->slot = c;
        if (!a || !b || !c)
            return ENOMEM;
        t->cap = nc;
    }
    char *tmp = temp_template(path), *dst = strdup(path);
    if (!tmp || !dst) {
        free(tmp);
        free(dst);
        return ENOMEM;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        free(dst);
        return err;
    }
    int slot = temp_register(tmp), err = 0;
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fchmod(fd, 0666 & ~g_umask) || write_parts(fd, parts, nparts))
        err = errno;
    if (close(fd) && !err)
        err = errno;
    if (err) {
        unlink(tmp);
        temp_release(slot);
        free(tmp);
        free(dst);
        return err;
    }
    t->tmp[t->n] = tmp;
    t->dst[t->n] = dst;
    t->slot[t->n] = slot;
    t->n++;
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
    pthread_once(&g_umask_once, read_umask);
    int err = g_txn ? txn_write(g_txn, path, parts, nparts) : write_tmpfile(path, parts, nparts);
    if (err < 0)
        err = write_named(path, parts, nparts);
    if (err)
        return vki_fail(e, VKIMG_E_RUNTIME, "%s: cannot write: %s", path, strerror(err));
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

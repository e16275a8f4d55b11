// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * topology_shim.c - LD_PRELOAD library that makes real partitioning tools
 * (parted 3.5, fdisk/sfdisk 2.38.1 via libfdisk, sgdisk 1.0.9, systemd-repart
 * 252) see a chosen block-device topology on ONE block device (a loop device).
 *
 * Why: a loop device always reports physical = min_io = logical sector size,
 * opt_io 0 and alignment offset 0.  To compare partalign's predictions with
 * the real tools on 512e drives, RAID stripes, alignment offsets or bogus
 * bridge values, the topology has to be injected in the tools' process.
 *
 * Build: the CMake target `topology_shim` (test only; C11, never with sanitizers or
 * coverage, since it is preloaded into uninstrumented tools).  By hand:
 *   gcc -std=c11 -Wall -Wextra -Werror -shared -fPIC \
 *       -o libtopology_shim.so topology_shim.c -ldl
 * Used by tests/support/tool_oracle.cc (the explain oracle tests and the sweep); see
 * docs/explain.md for the method and the observed results.
 *
 * Environment (all sizes in bytes, decimal):
 *   PARTALIGN_SHIM_DEVICE     block device to fake (e.g. /dev/loop3).  Unset:
 *                             the shim does nothing at all.
 *   PARTALIGN_SHIM_PHYS       physical sector size
 *   PARTALIGN_SHIM_MIN_IO     minimum I/O size
 *   PARTALIGN_SHIM_OPT_IO     optimal I/O size (0 = "not reported")
 *   PARTALIGN_SHIM_ALIGN_OFF  alignment offset (may be negative, e.g. -1 for a
 *                             "misaligned" stack; the blkid getter then answers
 *                             0 as libblkid does, BLKALIGNOFF answers -1)
 *   PARTALIGN_SHIM_TOPOLOGY   "pass" (default): getters answer the variables
 *                             above, anything unset passes through;
 *                             "null": blkid_probe_get_topology() returns NULL
 *                             for the device (tools fall back to defaults);
 *                             "synthetic": ignore libblkid's own result and
 *                             always hand out a shim-owned topology (the code
 *                             path used automatically when libblkid returns
 *                             NULL for the device).
 *   PARTALIGN_SHIM_LOG        file to append one line per interception to.
 * An unset size variable means "pass the real value through".  The logical
 * sector size is never faked: it always comes from the kernel (BLKSSZGET).
 * An unparsable value, or a PARTALIGN_SHIM_DEVICE that is not a block device,
 * makes the process exit with status 127 at load time, so a typo in a test can
 * never silently test the wrong topology.
 *
 * What is intercepted, and why:
 *   blkid_probe_get_topology()  parted (libparted/arch/linux.c) and libfdisk
 *       (fdisk_discover_topology) call it through libblkid's PLT.  We note
 *       whether the probe is on the target device, so the getters know which
 *       topology objects to fake.  If libblkid returns NULL for the target
 *       (no prober completed) we return a shim-owned object instead.
 *   blkid_topology_get_*()      the values themselves.  Overriding the getters
 *       is simpler and more robust than faking sysfs files and ioctls for
 *       libblkid's probers (it reads sysfs first, then ioctls).  ALL getters are
 *       overridden, including logical/dax/diskseq, because a shim-owned object
 *       must never reach libblkid's real getters.
 *   blkid_free_probe()          forget the probe, so a later topology object
 *       at the same address (another device) is not mistaken for the target.
 *   ioctl()                     sgdisk reads BLKPBSZGET directly (no libblkid);
 *       BLKIOMIN, BLKIOOPT and BLKALIGNOFF are answered too for any other
 *       direct caller (e.g. libblkid's ioctl prober).  Only for file
 *       descriptors whose st_rdev is the target block device.
 *
 *   ioctl() on a partition of the target (loopNp1, a node made with BLKPG):
 *       BLKPBSZGET/BLKIOMIN/BLKIOOPT answer the disk's faked values, as the
 *       kernel does; BLKALIGNOFF the partition's own offset, computed from its
 *       start like the kernel's queue_limit_alignment_offset() (cryptsetup).
 *   fopen()/fopen64() of /sys/dev/block/MAJ:MIN/{queue/minimum_io_size,
 *       queue/optimal_io_size, queue/physical_block_size, alignment_offset}
 *       of the target, and alignment_offset of its partitions: lvm2 reads the
 *       topology from sysfs, not libblkid (lib/device/dev-type.c); the faked
 *       value comes back as an in-memory file (fmemopen).
 *
 * Limits: meant for single-threaded command-line tools (the probe table has
 * no lock).  Programs that do not call through the PLT (static binaries,
 * RTLD_DEEPBIND) are not affected.  libblkid's getters are faked for the
 * target only, not for its partition nodes; sysfs is faked only for readers
 * that use fopen() (not open()+read(): libblkid itself, partalign's own
 * sysfs reads).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>
#include <linux/fs.h>

/* libblkid's opaque handles; declared here so that libblkid-dev is not a
 * build dependency.  Signatures follow <blkid/blkid.h> (util-linux 2.38). */
typedef struct blkid_struct_probe *blkid_probe;
typedef struct blkid_struct_topology *blkid_topology;

/* Interposers must stay exported even if a build uses -fvisibility=hidden. */
#define SHIM_EXPORT __attribute__((visibility("default")))

/* The functions this library defines (prototypes as in <blkid/blkid.h>). */
void blkid_free_probe(blkid_probe pr);
blkid_topology blkid_probe_get_topology(blkid_probe pr);
unsigned long blkid_topology_get_alignment_offset(blkid_topology tp);
unsigned long blkid_topology_get_minimum_io_size(blkid_topology tp);
unsigned long blkid_topology_get_optimal_io_size(blkid_topology tp);
unsigned long blkid_topology_get_physical_sector_size(blkid_topology tp);
unsigned long blkid_topology_get_logical_sector_size(blkid_topology tp);
unsigned long blkid_topology_get_dax(blkid_topology tp);
uint64_t blkid_topology_get_diskseq(blkid_topology tp);

/* ------------------------------------------------------------------ config */

enum topo_mode { MODE_PASS, MODE_NULL, MODE_SYNTHETIC };

struct fake_value {
    int set;          /* 0: pass the real value through */
    long long value;  /* bytes */
};

static struct {
    int active;                 /* PARTALIGN_SHIM_DEVICE given and usable */
    dev_t rdev;                 /* st_rdev of the target device */
    const char *device;
    enum topo_mode mode;
    struct fake_value phys, min_io, opt_io, align_off;
    FILE *log;
} cfg;

static void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void shim_log(const char *fmt, ...)
{
    if (!cfg.log)
        return;
    static char comm[64];
    if (!comm[0]) {
        FILE *f = fopen("/proc/self/comm", "re");
        if (!f || !fgets(comm, sizeof comm, f))
            strcpy(comm, "?");
        if (f)
            fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(cfg.log, "[%s:%ld] ", comm, (long)getpid());
    vfprintf(cfg.log, fmt, ap);
    fputc('\n', cfg.log);
    fflush(cfg.log);
    va_end(ap);
}

static void parse_value(const char *name, struct fake_value *out, int allow_negative)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    long long lo = allow_negative ? INT_MIN : 0, hi = allow_negative ? INT_MAX : UINT_MAX;
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "topology_shim: invalid %s='%s' (bytes expected)\n", name, s);
        _exit(127);
    }
    out->set = 1;
    out->value = v;
}

/* Runs at load time, before main(): the environment is read exactly once. */
__attribute__((constructor)) static void shim_init(void)
{
    const char *logpath = getenv("PARTALIGN_SHIM_LOG");
    if (logpath && *logpath)
        cfg.log = fopen(logpath, "ae");

    cfg.device = getenv("PARTALIGN_SHIM_DEVICE");
    if (!cfg.device || !*cfg.device)
        return;

    parse_value("PARTALIGN_SHIM_PHYS", &cfg.phys, 0);
    parse_value("PARTALIGN_SHIM_MIN_IO", &cfg.min_io, 0);
    parse_value("PARTALIGN_SHIM_OPT_IO", &cfg.opt_io, 0);
    parse_value("PARTALIGN_SHIM_ALIGN_OFF", &cfg.align_off, 1);

    const char *mode = getenv("PARTALIGN_SHIM_TOPOLOGY");
    if (!mode || !*mode || !strcmp(mode, "pass"))
        cfg.mode = MODE_PASS;
    else if (!strcmp(mode, "null"))
        cfg.mode = MODE_NULL;
    else if (!strcmp(mode, "synthetic"))
        cfg.mode = MODE_SYNTHETIC;
    else {
        fprintf(stderr, "topology_shim: invalid PARTALIGN_SHIM_TOPOLOGY='%s'\n", mode);
        _exit(127);
    }

    struct stat st;
    if (stat(cfg.device, &st) != 0 || !S_ISBLK(st.st_mode)) {
        /* Fatal, like a bad value: the test would see the real topology. */
        fprintf(stderr, "topology_shim: PARTALIGN_SHIM_DEVICE=%s is not a block device\n",
                cfg.device);
        _exit(127);
    }
    cfg.rdev = st.st_rdev;
    cfg.active = 1;
    shim_log("init device=%s mode=%s", cfg.device, mode ? mode : "pass");
}

/* ---------------------------------------------------------- real symbols */

/* Look up the next definition (libblkid's or libc's).  May be NULL, e.g. a
 * getter that this libblkid version does not have. */
static void *real_sym(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p)
        shim_log("dlsym(%s) failed", name);
    return p;
}

#define REAL(ret, name, args)                                   \
    static ret(*real_##name) args;                              \
    if (!real_##name)                                           \
        *(void **)&real_##name = real_sym(#name)

/* ----------------------------------------------------------------- ioctl */

static int is_target_fd(int fd)
{
    struct stat st;
    return cfg.active && fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == cfg.rdev;
}

/* Reads one decimal number from a sysfs file with the real fopen (not ours). */
static int read_sysfs_number(const char *path, long long *out);

/*
 * A partition node of the target (loop3p1): sysfs lists it under the target, with its start in
 * 512-byte sectors.  Returns 1 and the start when `dev` is one.
 */
static int partition_of_target(dev_t dev, long long *start_sectors)
{
    char path[128];
    long long is_partition = 0;
    if (!cfg.active || dev == cfg.rdev)
        return 0;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
    if (!read_sysfs_number(path, &is_partition) || !is_partition)
        return 0;
    /* "../dev" of the partition's directory is the whole disk's "MAJ:MIN". */
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/../dev", major(dev), minor(dev));
    REAL(FILE *, fopen, (const char *, const char *));
    FILE *f = real_fopen ? real_fopen(path, "re") : NULL;
    unsigned maj = 0, min = 0;
    int ok = f && fscanf(f, "%u:%u", &maj, &min) == 2;
    if (f)
        fclose(f);
    if (!ok || makedev(maj, min) != cfg.rdev)
        return 0;
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/start", major(dev), minor(dev));
    return read_sysfs_number(path, start_sectors);
}

/*
 * The alignment offset the kernel reports for a partition starting at `start_sectors` of the
 * target, computed from the faked limits (queue_limit_alignment_offset(), block/blk-settings.c).
 * `real` is what the kernel said, used for any limit that is not faked.
 */
static long long partition_alignment_offset(long long start_sectors, long long real_phys,
                                            long long real_min_io, long long real_offset)
{
    long long phys = cfg.phys.set ? cfg.phys.value : real_phys;
    long long min_io = cfg.min_io.set ? cfg.min_io.value : real_min_io;
    long long offset = cfg.align_off.set ? cfg.align_off.value : real_offset;
    long long granularity = phys > min_io ? phys : min_io;
    if (granularity <= 0 || offset < 0)
        return offset < 0 ? -1 : 0;
    long long phase = (start_sectors * 512) % granularity;
    return (granularity + offset % granularity - phase) % granularity;
}

/* The real kernel value of one topology ioctl (used for shim-owned objects). */
static long long kernel_value(int fd, unsigned long req);

/*
 * ioctl() is variadic; the optional argument is a pointer or an integer that
 * fits in one.  glibc itself forwards it as a void *, and so do we.  The real
 * call always runs first, so errors (EBADF, ENOTTY ...) are preserved; the
 * result is only overwritten when it succeeded on the target device.
 */
SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);

    REAL(int, ioctl, (int, unsigned long, ...));
    if (!real_ioctl) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real_ioctl(fd, request, arg);
    if (rc != 0 || !cfg.active || !arg)
        return rc;

    struct fake_value *fv;
    const char *what;
    switch (request) {
    case BLKPBSZGET:  fv = &cfg.phys;      what = "BLKPBSZGET"; break;
    case BLKIOMIN:    fv = &cfg.min_io;    what = "BLKIOMIN"; break;
    case BLKIOOPT:    fv = &cfg.opt_io;    what = "BLKIOOPT"; break;
    case BLKALIGNOFF: fv = &cfg.align_off; what = "BLKALIGNOFF"; break;
    default:
        return rc;
    }
    if (!is_target_fd(fd)) {
        /* A partition of the target answers the disk's limits and its own offset (what
         * cryptsetup's device_topology_alignment() reads on /dev/loop3p1). */
        struct stat st;
        long long start = 0;
        if (fstat(fd, &st) != 0 || !S_ISBLK(st.st_mode) || !partition_of_target(st.st_rdev, &start))
            return rc;
        if (request == BLKALIGNOFF) {
            int *p = arg;
            long long v = partition_alignment_offset(start, kernel_value(fd, BLKPBSZGET),
                                                     kernel_value(fd, BLKIOMIN), *p);
            shim_log("ioctl %s (partition at %lld) real=%d -> %lld", what, start, *p, v);
            *p = (int)v;
        } else if (fv->set) {
            unsigned int *p = arg;
            shim_log("ioctl %s (partition) real=%u -> %lld", what, *p, fv->value);
            *p = (unsigned int)fv->value;
        }
        return rc;
    }
    if (request == BLKALIGNOFF) {   /* int, may be -1 */
        int *p = arg;
        shim_log("ioctl %s real=%d -> %lld", what, *p, fv->set ? fv->value : (long long)*p);
        if (fv->set)
            *p = (int)fv->value;
    } else {                        /* unsigned int */
        unsigned int *p = arg;
        shim_log("ioctl %s real=%u -> %lld", what, *p, fv->set ? fv->value : (long long)*p);
        if (fv->set)
            *p = (unsigned int)fv->value;
    }
    return rc;
}

static long long kernel_value(int fd, unsigned long req)
{
    REAL(int, ioctl, (int, unsigned long, ...));
    if (!real_ioctl)
        return 0;
    if (req == BLKSSZGET || req == BLKALIGNOFF) {
        int v = 0;
        return real_ioctl(fd, req, &v) == 0 ? v : 0;
    }
    unsigned int v = 0;
    return real_ioctl(fd, req, &v) == 0 ? v : 0;
}

/* ------------------------------------------------------ probe bookkeeping */

/*
 * Topology objects handed out for the target device.  A tool uses one or two
 * probes, so a small table is plenty; when it is full the oldest slot is
 * reused.  'tp' is what the caller got: either libblkid's own object or
 * &synth[i] (shim-owned, used when libblkid has no topology for the device).
 */
#define MAX_TRACKED 16

struct synth_topology {
    long long lbs, pbs, min_io, opt_io, align_off;   /* kernel values */
};

static struct tracked {
    blkid_probe pr;
    blkid_topology tp;
} tracked[MAX_TRACKED];
static struct synth_topology synth[MAX_TRACKED];
static unsigned next_slot;

static struct tracked *find_tp(blkid_topology tp)
{
    if (!tp)
        return NULL;
    for (unsigned i = 0; i < MAX_TRACKED; i++)
        if (tracked[i].tp == tp)
            return &tracked[i];
    return NULL;
}

static struct synth_topology *synth_of(blkid_topology tp)
{
    for (unsigned i = 0; i < MAX_TRACKED; i++)
        if (tp == (blkid_topology)(void *)&synth[i])
            return &synth[i];
    return NULL;
}

static void forget_probe(blkid_probe pr)
{
    for (unsigned i = 0; i < MAX_TRACKED; i++)
        if (tracked[i].pr == pr)
            tracked[i] = (struct tracked){0};
}

static unsigned slot_for(blkid_probe pr)
{
    for (unsigned i = 0; i < MAX_TRACKED; i++)
        if (tracked[i].pr == pr)
            return i;
    for (unsigned i = 0; i < MAX_TRACKED; i++)
        if (!tracked[i].pr)
            return i;
    return next_slot++ % MAX_TRACKED;
}

/* ----------------------------------------------------- libblkid overrides */

SHIM_EXPORT void blkid_free_probe(blkid_probe pr)
{
    REAL(void, blkid_free_probe, (blkid_probe));
    forget_probe(pr);
    if (real_blkid_free_probe)
        real_blkid_free_probe(pr);
}

SHIM_EXPORT blkid_topology blkid_probe_get_topology(blkid_probe pr)
{
    REAL(blkid_topology, blkid_probe_get_topology, (blkid_probe));
    REAL(dev_t, blkid_probe_get_devno, (blkid_probe));
    REAL(int, blkid_probe_get_fd, (blkid_probe));

    int target = cfg.active && real_blkid_probe_get_devno &&
                 real_blkid_probe_get_devno(pr) == cfg.rdev;
    if (!target) {
        /* Also drop a stale entry whose object address got reused. */
        blkid_topology tp = real_blkid_probe_get_topology ? real_blkid_probe_get_topology(pr) : NULL;
        struct tracked *t = find_tp(tp);
        if (t)
            *t = (struct tracked){0};
        return tp;
    }

    forget_probe(pr);
    if (cfg.mode == MODE_NULL) {
        shim_log("blkid_probe_get_topology(%s) -> NULL (forced)", cfg.device);
        return NULL;
    }

    blkid_topology tp = NULL;
    if (cfg.mode == MODE_PASS && real_blkid_probe_get_topology)
        tp = real_blkid_probe_get_topology(pr);

    unsigned i = slot_for(pr);
    if (!tp) {
        /* libblkid found nothing (or synthetic mode): hand out our own
         * object, filled with the kernel's values for anything not faked. */
        int fd = real_blkid_probe_get_fd ? real_blkid_probe_get_fd(pr) : -1;
        synth[i] = (struct synth_topology){
            .lbs = fd >= 0 ? kernel_value(fd, BLKSSZGET) : 0,
            .pbs = fd >= 0 ? kernel_value(fd, BLKPBSZGET) : 0,
            .min_io = fd >= 0 ? kernel_value(fd, BLKIOMIN) : 0,
            .opt_io = fd >= 0 ? kernel_value(fd, BLKIOOPT) : 0,
            .align_off = fd >= 0 ? kernel_value(fd, BLKALIGNOFF) : 0,
        };
        tp = (blkid_topology)(void *)&synth[i];
        shim_log("blkid_probe_get_topology(%s) -> synthetic object", cfg.device);
    } else {
        shim_log("blkid_probe_get_topology(%s) -> libblkid object", cfg.device);
    }
    tracked[i] = (struct tracked){.pr = pr, .tp = tp};
    return tp;
}

/*
 * One getter: on a target object answer the fake value if set; otherwise the
 * real value (libblkid's getter, or the kernel value kept in a shim-owned
 * object).  Objects of other devices go straight to libblkid.
 */
static unsigned long getter(const char *name, blkid_topology tp, struct fake_value *fv,
                            size_t synth_off, unsigned long (*real)(blkid_topology))
{
    struct synth_topology *s = synth_of(tp);
    if (!find_tp(tp)) {
        /* Another device's object; or a shim object whose probe was freed
         * (caller bug): never let libblkid dereference one of ours. */
        return s ? 0 : (real ? real(tp) : 0);
    }

    long long real_v = s ? *(long long *)(void *)((char *)s + synth_off)
                         : (real ? (long long)real(tp) : 0);
    long long v = (fv && fv->set) ? fv->value : real_v;
    if (v < 0)              /* libblkid reports a misaligned stack (-1) as 0 */
        v = 0;
    shim_log("%s real=%lld -> %lld", name, real_v, v);
    return (unsigned long)v;
}

#define GETTER(fn, fakefield, synthfield)                                       \
    SHIM_EXPORT unsigned long fn(blkid_topology tp)                             \
    {                                                                           \
        REAL(unsigned long, fn, (blkid_topology));                              \
        return getter(#fn, tp, fakefield, offsetof(struct synth_topology, synthfield), \
                      real_##fn);                                               \
    }


GETTER(blkid_topology_get_alignment_offset, &cfg.align_off, align_off)
GETTER(blkid_topology_get_minimum_io_size, &cfg.min_io, min_io)
GETTER(blkid_topology_get_optimal_io_size, &cfg.opt_io, opt_io)
GETTER(blkid_topology_get_physical_sector_size, &cfg.phys, pbs)
/* Logical size is never faked (NULL): it must match the kernel's BLKSSZGET. */
GETTER(blkid_topology_get_logical_sector_size, NULL, lbs)

/* Not faked, but a shim-owned object must not reach libblkid's getter. */
SHIM_EXPORT unsigned long blkid_topology_get_dax(blkid_topology tp)
{
    REAL(unsigned long, blkid_topology_get_dax, (blkid_topology));
    if (synth_of(tp))
        return 0;
    return real_blkid_topology_get_dax ? real_blkid_topology_get_dax(tp) : 0;
}

/* libblkid >= 2.39 only; harmless when the real one does not exist. */
SHIM_EXPORT uint64_t blkid_topology_get_diskseq(blkid_topology tp)
{
    REAL(uint64_t, blkid_topology_get_diskseq, (blkid_topology));
    if (synth_of(tp))
        return 0;
    return real_blkid_topology_get_diskseq ? real_blkid_topology_get_diskseq(tp) : 0;
}

/* ------------------------------------------------------------ sysfs (lvm2) */

static int read_sysfs_number(const char *path, long long *out)
{
    REAL(FILE *, fopen, (const char *, const char *));
    FILE *f = real_fopen ? real_fopen(path, "re") : NULL;
    if (!f)
        return 0;
    int ok = fscanf(f, "%lld", out) == 1;
    fclose(f);
    return ok;
}

/*
 * lvm2 reads the topology from sysfs, not libblkid (lib/device/dev-type.c
 * _dev_sysfs_block_attribute(): fopen("/sys//dev/block/7:3/queue/optimal_io_size")), and for
 * a partition falls back to the whole disk's queue/ files; it reads the partition's own
 * alignment_offset.  The faked values are handed out as in-memory files.
 */
static FILE *fake_sysfs(const char *path, const char *mode)
{
    if (!cfg.active || !path || strncmp(path, "/sys/", 5) != 0 || (mode && mode[0] != 'r'))
        return NULL;
    const char *p = path + 4;
    while (*p == '/')
        p++;
    if (strncmp(p, "dev/block/", 10) != 0)
        return NULL;
    unsigned maj = 0, min = 0;
    int used = 0;
    if (sscanf(p + 10, "%u:%u/%n", &maj, &min, &used) != 2 || used == 0)
        return NULL;
    const char *attr = p + 10 + used;
    dev_t dev = makedev(maj, min);
    long long value = 0, start = 0;
    if (dev == cfg.rdev) {
        struct fake_value *fv = NULL;
        if (!strcmp(attr, "queue/minimum_io_size"))
            fv = &cfg.min_io;
        else if (!strcmp(attr, "queue/optimal_io_size"))
            fv = &cfg.opt_io;
        else if (!strcmp(attr, "queue/physical_block_size"))
            fv = &cfg.phys;
        else if (!strcmp(attr, "alignment_offset"))
            fv = &cfg.align_off;
        if (!fv || !fv->set)
            return NULL;
        value = fv->value;
    } else if (!strcmp(attr, "alignment_offset") && partition_of_target(dev, &start)) {
        char disk[96];
        long long real_phys = 0, real_min = 0, real_off = 0;
        snprintf(disk, sizeof disk, "/sys/dev/block/%u:%u/queue/physical_block_size",
                 major(cfg.rdev), minor(cfg.rdev));
        read_sysfs_number(disk, &real_phys);
        snprintf(disk, sizeof disk, "/sys/dev/block/%u:%u/queue/minimum_io_size",
                 major(cfg.rdev), minor(cfg.rdev));
        read_sysfs_number(disk, &real_min);
        snprintf(disk, sizeof disk, "/sys/dev/block/%u:%u/alignment_offset", major(cfg.rdev),
                 minor(cfg.rdev));
        read_sysfs_number(disk, &real_off);
        value = partition_alignment_offset(start, real_phys, real_min, real_off);
    } else {
        return NULL;
    }
    /* fmemopen() reads from the buffer it is given: keep one per open file (a few bytes each,
     * for the lifetime of a short command-line tool). */
    char *text = malloc(32);
    if (!text)
        return NULL;
    int n = snprintf(text, 32, "%lld\n", value);
    shim_log("fopen %s -> %lld", path, value);
    return fmemopen(text, (size_t)n, "r");
}

SHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
    FILE *fake = fake_sysfs(path, mode);
    if (fake)
        return fake;
    REAL(FILE *, fopen, (const char *, const char *));
    if (!real_fopen) {
        errno = ENOSYS;
        return NULL;
    }
    return real_fopen(path, mode);
}

SHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    FILE *fake = fake_sysfs(path, mode);
    if (fake)
        return fake;
    REAL(FILE *, fopen64, (const char *, const char *));
    if (!real_fopen64) {
        errno = ENOSYS;
        return NULL;
    }
    return real_fopen64(path, mode);
}

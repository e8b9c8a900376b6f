/*
 * host.c -- host facts: what about this machine explains how it sleeps.
 *
 * Owns: sleepacc_host_facts, sleepacc_fact_fields.  Reads only /proc, /sys (and /boot/config-*
 * for the kernel configuration when present) and asks uname(), prctl(),
 * clock_getres(), sched_getscheduler()/sched_getparam(); it never runs a
 * program and never opens /dev.
 *
 * Contract: facts come in the fixed order of the table below; the first
 * min(cap, SLEEPACC_MAX_FACTS) are written, *count gets how many were
 * written and the return is 0 (a short cap truncates the list, it is not
 * an error).  Nothing is allocated: files are streamed through a fixed
 * buffer on the stack.  A fact that cannot be read is SLEEPACC_FACT_UNKNOWN with its
 * key still set, never an error.  -EINVAL only for facts == NULL with
 * cap > 0 or count == NULL.
 *
 * Keys (type; source):
 *   kernel_release, kernel_version, arch     (str; uname)
 *   preempt_model    (str; none/voluntary/full/lazy/rt, or "dynamic" when
 *                     the kernel is PREEMPT_DYNAMIC and its current mode
 *                     is not readable) from /sys/kernel/debug/sched/preempt,
 *                     the preempt= boot option, the version string, or
 *                     the kernel config, in that order
 *   preempt_dynamic  (str yes/no; version string or config)
 *   preempt_source   (str; debugfs/cmdline/version/config)
 *   clocksource, clocksources_available     (str; /sys clocksource0)
 *   hz               (int; CONFIG_HZ, else 1e9 / res(CLOCK_MONOTONIC_COARSE))
 *   hz_source        (str; "config" or "coarse_clock_estimate")
 *   high_res_timers  (str yes/no; /proc/timer_list .hres_active, else
 *                     clock_getres(CLOCK_MONOTONIC) == 1 ns)
 *   monotonic_res_ns, coarse_res_ns         (int; clock_getres)
 *   nohz             (str full/idle/off; nohz_full CPUs, /proc/timer_list
 *                     .nohz/.nohz_mode, nohz= boot option, config)
 *   nohz_full        (str cpu list or "none"; /sys/devices/system/cpu)
 *   timer_slack_ns   (int; prctl(PR_GET_TIMERSLACK) of the calling thread)
 *   timer_migration  (int; /proc/sys/kernel/timer_migration)
 *   cpu_model, cpus_online, cpus_online_count, cpus_isolated,
 *   tsc_flags        (constant_tsc/nonstop_tsc/tsc_reliable/tsc_known_freq
 *                     present in /proc/cpuinfo flags, comma-joined)
 *   cpufreq_driver, cpufreq_governor        (str; cpu0 cpufreq)
 *   cpuidle_driver, cpuidle_governor        (str; /sys cpuidle)
 *   cpuidle_states   (str; cpu0 states "name:exit latency us", e.g.
 *                     "POLL:0,C1:1,C2:400")
 *   guest_halt_poll_ns (int; /sys/module/haltpoll/parameters: how long a
 *                     guest's idle vCPU polls before it halts; unknown
 *                     without the haltpoll governor)
 *   virtualization   (str; "hypervisor" when the CPU flag is set, else "none")
 *   hypervisor_type  (str; /sys/hypervisor/type)
 *   dmi_product      (str; /sys/class/dmi/id sys_vendor + product_name)
 *   rt_runtime_us, rt_period_us             (int; /proc/sys/kernel/sched_rt_*)
 *   sched_policy, sched_priority            (calling thread)
 *   loadavg_1m       (real; first field of /proc/loadavg, e.g. 0.20)
 *   cmdline          (str; /proc/cmdline, whole)
 */
#include "sleepacc_int.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * Small readers.
 * ------------------------------------------------------------------ */

/* Read up to size-1 bytes of path into buf, NUL-terminated, trailing
 * whitespace removed.  Returns the length, or -1 when unreadable. */
ssize_t sleepacc__read_text(const char *path, char *buf, size_t size)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t len = 0;
  while (len + 1 < size) {
    ssize_t k = read(fd, buf + len, size - 1 - len);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      close(fd);
      return -1;
    }
    if (k == 0)
      break;
    len += (size_t)k;
  }
  close(fd);
  buf[len] = '\0';
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' ||
                     buf[len - 1] == '\t' || buf[len - 1] == '\r'))
    buf[--len] = '\0';
  return (ssize_t)len;
}

/* Parse a decimal integer file; 0 on success. */
int sleepacc__read_int(const char *path, int64_t *out)
{
  char buf[64];
  if (sleepacc__read_text(path, buf, sizeof buf) <= 0)
    return -1;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || end == buf)
    return -1;
  *out = (int64_t)v;
  return 0;
}

/* A line reader over a descriptor with a fixed buffer (no allocation).
 * Lines longer than the buffer are cut; the rest of such a line is
 * skipped. */
typedef struct line_reader {
  int fd;            /* open file, or -1 */
  size_t start, end; /* unread bytes are buf[start..end) */
  int eof;
  char buf[8192];
} line_reader;

/* Next line (without '\n', NUL-terminated, in lr->buf), or NULL at EOF. */
static char *next_line(line_reader *lr)
{
  for (;;) {
    char *nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);
    if (nl || lr->eof || (lr->start == 0 && lr->end == sizeof lr->buf - 1)) {
      if (lr->start == lr->end && lr->eof)
        return NULL;
      char *line = lr->buf + lr->start;
      if (nl) {
        *nl = '\0';
        lr->start = (size_t)(nl - lr->buf) + 1;
      } else if (lr->eof) {
        lr->buf[lr->end] = '\0';
        lr->start = lr->end;
      } else { /* overlong line: cut it, then skip to its end */
        lr->buf[lr->end] = '\0';
        lr->start = lr->end = 0;
        char c;
        ssize_t k;
        while ((k = read(lr->fd, &c, 1)) == 1 && c != '\n')
          ;
        if (k <= 0)
          lr->eof = 1;
        return line; /* valid until the next call */
      }
      return line;
    }
    /* move the partial line to the front and read more */
    memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
    lr->end -= lr->start;
    lr->start = 0;
    ssize_t k = read(lr->fd, lr->buf + lr->end, sizeof lr->buf - 1 - lr->end);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      lr->eof = 1;
    else
      lr->end += (size_t)k;
  }
}

/* Value of the first line "key<blanks><sep><blanks>value" of the file at
 * path, copied into out.  For /proc/cpuinfo and /proc/timer_list the
 * separator is ":", for kernel configs "=".  stop_at_blank: stop at the
 * first empty line (the first CPU's block of /proc/cpuinfo).  0 or -1. */
static int file_value(const char *path, const char *key, const char *sep,
                      int stop_at_blank, char *out, size_t outsz)
{
  line_reader lr;
  lr.fd = open(path, O_RDONLY | O_CLOEXEC);
  if (lr.fd < 0)
    return -1;
  lr.start = lr.end = 0;
  lr.eof = 0;
  size_t klen = strlen(key), slen = strlen(sep);
  int rc = -1;
  char *line;
  while ((line = next_line(&lr)) != NULL) {
    if (stop_at_blank && line[0] == '\0')
      break;
    if (strncmp(line, key, klen) != 0)
      continue;
    const char *v = line + klen;
    while (*v == ' ' || *v == '\t')
      v++;
    if (strncmp(v, sep, slen) != 0)
      continue;
    v += slen;
    while (*v == ' ' || *v == '\t')
      v++;
    snprintf(out, outsz, "%s", v);
    rc = 0;
    break;
  }
  close(lr.fd);
  return rc;
}

/* 1 if the space-separated word list contains word. */
static int has_word(const char *list, const char *word)
{
  size_t wl = strlen(word);
  for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl) {
    int start_ok = p == list || p[-1] == ' ' || p[-1] == '\t';
    int end_ok = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\t';
    if (start_ok && end_ok)
      return 1;
  }
  return 0;
}

/* Value of boot option "name=" in the command line, or -1. */
static int cmdline_option(const char *cmdline, const char *name, char *out, size_t outsz)
{
  size_t nl = strlen(name);
  for (const char *p = cmdline; (p = strstr(p, name)) != NULL; p += nl) {
    if ((p == cmdline || p[-1] == ' ') && p[nl] == '=') {
      const char *v = p + nl + 1;
      size_t n = strcspn(v, " \n");
      if (n >= outsz)
        n = outsz - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      return 0;
    }
  }
  return -1;
}

/* ---------------------------------------------------------------------
 * The list being filled.
 * ------------------------------------------------------------------ */
typedef struct facts {
  sleepacc_fact *f; /* caller's array */
  size_t cap;       /* its length */
  size_t n;         /* facts written */
} facts;

static sleepacc_fact *slot(facts *fs, const char *key)
{
  if (fs->n >= fs->cap)
    return NULL;
  sleepacc_fact *f = &fs->f[fs->n++];
  memset(f, 0, sizeof *f);
  f->key = key;
  f->type = SLEEPACC_FACT_UNKNOWN;
  return f;
}

/* Add a string fact; value NULL makes it UNKNOWN. */
static void add_str(facts *fs, const char *key, const char *value)
{
  sleepacc_fact *f = slot(fs, key);
  if (!f || !value)
    return;
  f->type = SLEEPACC_FACT_STR;
  /* at most sizeof f->s - 1 bytes (room for a whole /proc/cmdline) */
  snprintf(f->s, sizeof f->s, "%.*s", (int)sizeof f->s - 1, value);
}

/* Add a string fact read from a file (UNKNOWN when unreadable). */
static void add_file(facts *fs, const char *key, const char *path)
{
  char buf[256];
  add_str(fs, key, sleepacc__read_text(path, buf, sizeof buf) >= 0 ? buf : NULL);
}

/* Add an integer fact; ok == 0 makes it UNKNOWN. */
static void add_int(facts *fs, const char *key, int64_t value, int ok)
{
  sleepacc_fact *f = slot(fs, key);
  if (!f || !ok)
    return;
  f->type = SLEEPACC_FACT_INT;
  f->i = value;
}

/* Add a real-number fact parsed from text; text NULL or not a number makes it UNKNOWN. */
static void add_real(facts *fs, const char *key, const char *text)
{
  sleepacc_fact *f = slot(fs, key);
  char *end = NULL;
  if (!f || !text)
    return;
  locale_t prev = sleepacc__c_numbers_enter(); /* "0.39" whatever the locale */
  double v = strtod(text, &end);
  sleepacc__c_numbers_leave(prev);
  if (end == text)
    return;
  f->type = SLEEPACC_FACT_REAL;
  f->d = v;
}

/* ---------------------------------------------------------------------
 * Facts that need some parsing.
 * ------------------------------------------------------------------ */
#define CPUINFO "/proc/cpuinfo"
#define TIMER_LIST "/proc/timer_list"

/* What several facts need: read once, kept on the caller's stack. */
typedef struct host_text {
  struct utsname uts; /* uname() */
  int have_uts;       /* uts is valid */
  char cmdline[4096]; /* /proc/cmdline (COMMAND_LINE_SIZE <= 4096) or "" */
  char config[320];   /* path of the running kernel's config, or "" */
  char flags[4096];   /* the first CPU's "flags" in /proc/cpuinfo, or "" */
  int have_flags;     /* flags was read */
} host_text;

/* Path of the running kernel's config into t->config ("" when none). */
static void find_config(host_text *t)
{
  t->config[0] = '\0';
  if (!t->have_uts)
    return;
  const char *fmts[] = {"/boot/config-%s", "/lib/modules/%s/build/.config"};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    snprintf(t->config, sizeof t->config, fmts[i], t->uts.release);
    if (access(t->config, R_OK) == 0)
      return;
  }
  t->config[0] = '\0';
}

/* CONFIG_<name> value from the config ("y", "250", ...), or -1. */
static int config_value(const host_text *t, const char *name, char *out, size_t outsz)
{
  if (!t->config[0])
    return -1;
  char key[128];
  snprintf(key, sizeof key, "CONFIG_%s", name);
  return file_value(t->config, key, "=", 0, out, outsz);
}

static int config_yes(const host_text *t, const char *name)
{
  char v[16];
  return config_value(t, name, v, sizeof v) == 0 && strcmp(v, "y") == 0;
}

static void add_preempt(facts *fs, const host_text *t)
{
  char buf[256], mode[64];
  const char *model = NULL, *source = NULL, *dynamic = NULL;
  const char *ver = t->have_uts ? t->uts.version : "";

  if (strstr(ver, "PREEMPT_DYNAMIC") || config_yes(t, "PREEMPT_DYNAMIC"))
    dynamic = "yes";
  else if (t->have_uts || t->config[0])
    dynamic = "no";

  /* debugfs shows the choices with the current one in parentheses:
   * "none voluntary (full) lazy" */
  if (sleepacc__read_text("/sys/kernel/debug/sched/preempt", buf, sizeof buf) > 0) {
    char *open_p = strchr(buf, '('), *close_p = open_p ? strchr(open_p, ')') : NULL;
    if (open_p && close_p && (size_t)(close_p - open_p - 1) < sizeof mode) {
      memcpy(mode, open_p + 1, (size_t)(close_p - open_p - 1));
      mode[close_p - open_p - 1] = '\0';
      model = mode;
      source = "debugfs";
    }
  }
  if (!model && dynamic && strcmp(dynamic, "yes") == 0 &&
      cmdline_option(t->cmdline, "preempt", mode, sizeof mode) == 0) {
    model = mode;
    source = "cmdline";
  }
  if (!model && t->have_uts) {
    if (strstr(ver, "PREEMPT_RT"))
      model = "rt";
    else if (strstr(ver, "PREEMPT_DYNAMIC"))
      model = "dynamic";
    else if (strstr(ver, "PREEMPT_LAZY"))
      model = "lazy";
    else if (strstr(ver, "PREEMPT "))
      model = "full";
    if (model)
      source = "version";
  }
  if (!model && t->config[0]) {
    if (config_yes(t, "PREEMPT_RT"))
      model = "rt";
    else if (config_yes(t, "PREEMPT_LAZY"))
      model = "lazy";
    else if (config_yes(t, "PREEMPT"))
      model = "full";
    else if (config_yes(t, "PREEMPT_VOLUNTARY"))
      model = "voluntary";
    else if (config_yes(t, "PREEMPT_NONE"))
      model = "none";
    if (model)
      source = "config";
  }
  add_str(fs, "preempt_model", model);
  add_str(fs, "preempt_dynamic", dynamic);
  add_str(fs, "preempt_source", source);
}

static int64_t res_ns(clockid_t id)
{
  struct timespec ts;
  if (clock_getres(id, &ts) != 0)
    return -1;
  return sleepacc__ts_ns(&ts);
}

static void add_hz(facts *fs, const host_text *t)
{
  char v[32];
  if (config_value(t, "HZ", v, sizeof v) == 0 && atoi(v) > 0) {
    add_int(fs, "hz", atoi(v), 1);
    add_str(fs, "hz_source", "config");
    return;
  }
  /* the coarse clocks advance once per tick: their resolution is 1/HZ */
  int64_t r = res_ns(CLOCK_MONOTONIC_COARSE);
  if (r > 0) {
    add_int(fs, "hz", (1000000000LL + r / 2) / r, 1);
    add_str(fs, "hz_source", "coarse_clock_estimate");
  } else {
    add_int(fs, "hz", 0, 0);
    add_str(fs, "hz_source", NULL);
  }
}

/* First integer after "key" and ':' in /proc/timer_list (root only), or
 * -1.  The first CPU's block holds .hres_active and .nohz (.nohz_mode on
 * older kernels). */
static int timer_list_int(const char *key, int64_t *out)
{
  char v[64];
  if (file_value(TIMER_LIST, key, ":", 0, v, sizeof v) != 0)
    return -1;
  *out = strtoll(v, NULL, 10);
  return 0;
}

static void add_hres(facts *fs)
{
  int64_t v;
  const char *hres = NULL;
  if (timer_list_int("  .hres_active", &v) == 0)
    hres = v ? "yes" : "no";
  else {
    int64_t r = res_ns(CLOCK_MONOTONIC);
    if (r > 0)
      hres = r == 1 ? "yes" : "no";
  }
  add_str(fs, "high_res_timers", hres);
  int64_t r = res_ns(CLOCK_MONOTONIC);
  add_int(fs, "monotonic_res_ns", r, r > 0);
  r = res_ns(CLOCK_MONOTONIC_COARSE);
  add_int(fs, "coarse_res_ns", r, r > 0);
}

/* "none" for an empty list or "(null)", else the list itself. */
static const char *cpu_list(const char *path, char *buf, size_t size)
{
  ssize_t n = sleepacc__read_text(path, buf, size);
  if (n < 0)
    return NULL;
  if (n == 0 || strcmp(buf, "(null)") == 0)
    return "none";
  return buf;
}

static void add_nohz(facts *fs, const host_text *t)
{
  char full[256], opt[32];
  const char *fl = cpu_list("/sys/devices/system/cpu/nohz_full", full, sizeof full);
  const char *mode = NULL;
  int64_t v;
  if (fl && strcmp(fl, "none") != 0)
    mode = "full";
  else if (timer_list_int("  .nohz_mode", &v) == 0) /* older kernels: 0 inactive */
    mode = v ? "idle" : "off";
  else if (timer_list_int("  .nohz", &v) == 0)
    mode = v ? "idle" : "off";
  else if (cmdline_option(t->cmdline, "nohz", opt, sizeof opt) == 0 && strcmp(opt, "off") == 0)
    mode = "off";
  else if (config_yes(t, "NO_HZ_FULL") || config_yes(t, "NO_HZ_IDLE") || config_yes(t, "NO_HZ"))
    mode = "idle";
  else if (config_yes(t, "HZ_PERIODIC"))
    mode = "off";
  add_str(fs, "nohz", mode);
  add_str(fs, "nohz_full", fl);
}

static void add_cpu(facts *fs, const host_text *t)
{
  char v[256];
  const char *model = NULL;
  const char *keys[] = {"model name", "Processor", "cpu model", "Hardware", "cpu"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !model; i++)
    if (file_value(CPUINFO, keys[i], ":", 1, v, sizeof v) == 0 && v[0])
      model = v;
  add_str(fs, "cpu_model", model);

  char buf[256];
  const char *online = cpu_list("/sys/devices/system/cpu/online", buf, sizeof buf);
  add_str(fs, "cpus_online", online);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  add_int(fs, "cpus_online_count", n, n > 0);
  add_str(fs, "cpus_isolated", cpu_list("/sys/devices/system/cpu/isolated", buf, sizeof buf));

  if (t->have_flags) {
    const char *tsc[] = {"constant_tsc", "nonstop_tsc", "tsc_reliable", "tsc_known_freq"};
    char out[128] = "";
    for (size_t i = 0; i < sizeof tsc / sizeof tsc[0]; i++)
      if (has_word(t->flags, tsc[i])) {
        if (out[0])
          strcat(out, ",");
        strcat(out, tsc[i]);
      }
    add_str(fs, "tsc_flags", out[0] ? out : "none");
  } else {
    add_str(fs, "tsc_flags", NULL);
  }
}

static void add_cpuidle_states(facts *fs)
{
  char out[256] = "", path[128], name[64];
  size_t len = 0;
  int any = 0;
  for (int i = 0; i < 32; i++) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cpuidle/state%d/name", i);
    if (sleepacc__read_text(path, name, sizeof name) < 0)
      break;
    int64_t lat = -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cpuidle/state%d/latency", i);
    sleepacc__read_int(path, &lat);
    char item[96];
    int k = lat >= 0 ? snprintf(item, sizeof item, "%s%s:%lld", any ? "," : "", name, (long long)lat)
                     : snprintf(item, sizeof item, "%s%s", any ? "," : "", name);
    if (k < 0 || len + (size_t)k >= sizeof out)
      break;
    memcpy(out + len, item, (size_t)k + 1);
    len += (size_t)k;
    any = 1;
  }
  /* no state directories: idle states are unknown, not "none" (a guest
   * without a cpuidle driver simply halts) */
  add_str(fs, "cpuidle_states", any ? out : NULL);
}

static void add_virt(facts *fs, const host_text *t)
{
  const char *virt = NULL;
  if (t->have_flags)
    virt = has_word(t->flags, "hypervisor") ? "hypervisor" : "none";
  add_str(fs, "virtualization", virt);
  add_file(fs, "hypervisor_type", "/sys/hypervisor/type");
  char vendor[128], product[128], both[256];
  ssize_t a = sleepacc__read_text("/sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
  ssize_t b = sleepacc__read_text("/sys/class/dmi/id/product_name", product, sizeof product);
  if (a > 0 && b > 0)
    snprintf(both, sizeof both, "%s %s", vendor, product);
  else if (a > 0 || b > 0)
    snprintf(both, sizeof both, "%s", a > 0 ? vendor : product);
  add_str(fs, "dmi_product", a > 0 || b > 0 ? both : NULL);
}

static void add_sched(facts *fs)
{
  int pol = sched_getscheduler(0);
  const char *name = NULL;
  if (pol >= 0) {
    switch (pol & ~SCHED_RESET_ON_FORK) {
    case SCHED_OTHER: name = "other"; break;
    case SCHED_BATCH: name = "batch"; break;
    case SCHED_IDLE: name = "idle"; break;
    case SCHED_FIFO: name = "fifo"; break;
    case SCHED_RR: name = "rr"; break;
#ifdef SCHED_DEADLINE
    case SCHED_DEADLINE: name = "deadline"; break;
#endif
    default: name = "unknown"; break;
    }
  }
  add_str(fs, "sched_policy", name);
  struct sched_param sp;
  int ok = sched_getparam(0, &sp) == 0;
  add_int(fs, "sched_priority", ok ? sp.sched_priority : 0, ok);
}

/* Fill up to cap facts (see the contract at the top of the file). */
int sleepacc_host_facts(sleepacc_fact *facts_out, size_t cap, size_t *count)
{
  if (!count || (!facts_out && cap > 0))
    return -EINVAL;
  *count = 0;
  facts fs = {facts_out, cap < SLEEPACC_MAX_FACTS ? cap : SLEEPACC_MAX_FACTS, 0};

  host_text text, *t = &text;
  memset(t, 0, sizeof *t);
  t->have_uts = uname(&t->uts) == 0;
  if (sleepacc__read_text("/proc/cmdline", t->cmdline, sizeof t->cmdline) < 0)
    t->cmdline[0] = '\0';
  t->have_flags = file_value(CPUINFO, "flags", ":", 1, t->flags, sizeof t->flags) == 0;
  find_config(t);

  add_str(&fs, "kernel_release", t->have_uts ? t->uts.release : NULL);
  add_str(&fs, "kernel_version", t->have_uts ? t->uts.version : NULL);
  add_str(&fs, "arch", t->have_uts ? t->uts.machine : NULL);
  add_preempt(&fs, t);
  add_file(&fs, "clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
  add_file(&fs, "clocksources_available",
           "/sys/devices/system/clocksource/clocksource0/available_clocksource");
  add_hz(&fs, t);
  add_hres(&fs);
  add_nohz(&fs, t);
  int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  add_int(&fs, "timer_slack_ns", slack, slack >= 0);
  int64_t v = 0;
  add_int(&fs, "timer_migration", v, sleepacc__read_int("/proc/sys/kernel/timer_migration", &v) == 0);
  add_cpu(&fs, t);
  add_file(&fs, "cpufreq_driver", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver");
  add_file(&fs, "cpufreq_governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  add_file(&fs, "cpuidle_driver", "/sys/devices/system/cpu/cpuidle/current_driver");
  add_file(&fs, "cpuidle_governor", "/sys/devices/system/cpu/cpuidle/current_governor_ro");
  add_cpuidle_states(&fs);
  v = 0;
  add_int(&fs, "guest_halt_poll_ns", v,
          sleepacc__read_int("/sys/module/haltpoll/parameters/guest_halt_poll_ns", &v) == 0);
  add_virt(&fs, t);
  int64_t rt = 0;
  int ok = sleepacc__read_int("/proc/sys/kernel/sched_rt_runtime_us", &rt) == 0;
  add_int(&fs, "rt_runtime_us", rt, ok);
  ok = sleepacc__read_int("/proc/sys/kernel/sched_rt_period_us", &rt) == 0;
  add_int(&fs, "rt_period_us", rt, ok);
  add_sched(&fs);
  char load[128];
  if (sleepacc__read_text("/proc/loadavg", load, sizeof load) > 0) {
    load[strcspn(load, " ")] = '\0';
    add_real(&fs, "loadavg_1m", load);
  } else {
    add_real(&fs, "loadavg_1m", NULL);
  }
  add_str(&fs, "cmdline", t->cmdline[0] ? t->cmdline : NULL);

  *count = fs.n;
  return 0;
}

void sleepacc_fact_fields(const sleepacc_fact *facts, size_t count, sleepacc_field *rows)
{
  for (size_t i = 0; i < count; i++) {
    const sleepacc_fact *f = &facts[i];
    sleepacc_field row = {f->key, i * sizeof *f, SLEEPACC_FIELD_NULL, NULL, 0};
    switch (f->type) {
    case SLEEPACC_FACT_INT:
      row.offset += offsetof(sleepacc_fact, i);
      row.type = SLEEPACC_FIELD_INT64;
      break;
    case SLEEPACC_FACT_REAL:
      row.offset += offsetof(sleepacc_fact, d);
      row.type = SLEEPACC_FIELD_DOUBLE;
      break;
    case SLEEPACC_FACT_STR:
      row.offset += offsetof(sleepacc_fact, s);
      row.type = SLEEPACC_FIELD_TEXT;
      break;
    default: break;
    }
    rows[i] = row;
  }
  rows[count] = (sleepacc_field){NULL, 0, 0, NULL, 0};
}

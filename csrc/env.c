/*
 * env.c -- environment control for a run: timer slack, scheduling policy and
 * priority, CPU affinity, mlockall and /dev/cpu_dma_latency.  Everything is
 * applied to the CALLING THREAD only (prctl timer slack, sched_setscheduler(0)
 * and sched_setaffinity(0) act on the calling thread on Linux) and restored
 * exactly, on every path.  EPERM is returned as -EPERM, never swallowed.
 */
#include "sleepacc_int.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdio.h>
#include <sys/resource.h>

#if defined(__linux__)
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif

/* Bits of sleepacc_env_saved.applied. */
enum {
  SLEEPACC__APPLIED_SLACK = 1 << 0,   /* restore saved->slack_ns (whenever it differs) */
  SLEEPACC__APPLIED_POLICY = 1 << 1,
  SLEEPACC__APPLIED_AFFINITY = 1 << 2,
  SLEEPACC__APPLIED_MLOCK = 1 << 3,
  SLEEPACC__APPLIED_DMA = 1 << 4,
};

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define SLEEPACC__FLAG_RESET_ON_FORK 0x01ULL
#define SLEEPACC__FLAGS_RESTORABLE 0x07ULL /* RESET_ON_FORK, RECLAIM, DL_OVERRUN */

/* struct sched_attr, SCHED_ATTR_SIZE_VER0 (48 bytes: no util clamps, so the
 * caller's clamps are never touched). */
typedef struct sleepacc__sched_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
} sleepacc__sched_attr;
_Static_assert(sizeof(sleepacc__sched_attr) == 48, "sched_attr VER0 is 48 bytes");

/* Public policy -> OS policy (index = sleepacc_policy; names.c names them). */
static const int sleepacc__policies_os[] = {SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR};

/* 1 when the thread has CAP_SYS_NICE where it counts: effective in the
 * initial user namespace (inside another namespace the scheduler's
 * capable() check fails even with the bit set, so that counts as no). */
static int sleepacc__has_sys_nice(void) {
#if defined(__linux__)
  struct __user_cap_header_struct hdr;
  struct __user_cap_data_struct data[2];
  char map[128];
  unsigned long a = 1, b = 1, c = 0;
  FILE *f;
  memset(&hdr, 0, sizeof hdr);
  memset(data, 0, sizeof data);
  hdr.version = _LINUX_CAPABILITY_VERSION_3;
  if (syscall(SYS_capget, &hdr, data) != 0 ||
      !(data[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32))))
    return 0;
  if ((f = fopen("/proc/self/uid_map", "re")) != NULL) {
    int init_ns = fgets(map, sizeof map, f) && sscanf(map, "%lu %lu %lu", &a, &b, &c) == 3 &&
                  a == 0 && b == 0 && c == 4294967295UL;
    fclose(f);
    if (!init_ns) return 0;
  }
  return 1;
#else
  return 1;
#endif
}

/* RLIMIT_RTPRIO of the thread (the highest FIFO/RR priority it may take
 * without CAP_SYS_NICE), 99 for no limit, 0 when unreadable. */
static long sleepacc__rtprio_limit(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_RTPRIO, &rl) != 0) return 0;
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 99) return 99;
  return (long)rl.rlim_cur;
}

/* 1 when RLIMIT_NICE lets the thread take nice value `nice` itself. */
static int sleepacc__rlimit_allows_nice(int nice) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NICE, &rl) != 0) return 0;
  return rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur;
}

static int sleepacc__os_is_rt(int os) { return os == SCHED_FIFO || os == SCHED_RR; }

/* Could a thread whose state is in *saved, once switched to OS policy
 * new_os at priority new_prio, switch back to *saved by itself?  The rules
 * of the kernel's sched_setattr for a caller without CAP_SYS_NICE (sched(7),
 * kernel/sched/syscalls.c): SCHED_DEADLINE cannot be entered at all; FIFO/RR
 * needs RLIMIT_RTPRIO > 0 to change policy and covering the priority unless
 * it stays at or under the one held; leaving SCHED_IDLE needs RLIMIT_NICE to
 * cover the nice value.  0 with *why set when not. */
static int sleepacc__can_return(const sleepacc_env_saved *saved, int new_os, int new_prio,
                                const char **why) {
  int old = saved->policy;
  if (old == new_os && (!sleepacc__os_is_rt(old) || new_prio == saved->priority)) return 1;
  if (sleepacc__has_sys_nice()) return 1;
  if (old == SCHED_DEADLINE) {
    *why = "the thread is SCHED_DEADLINE and could not return to it without CAP_SYS_NICE; "
           "nothing was changed";
    return 0;
  }
  if (sleepacc__os_is_rt(old)) {
    long lim = sleepacc__rtprio_limit();
    int held = sleepacc__os_is_rt(new_os) ? new_prio : 0;
    if (old != new_os && lim == 0) {
      *why = "the thread is real-time (FIFO/RR) and RLIMIT_RTPRIO is 0 without CAP_SYS_NICE: "
             "it could not return to its policy; nothing was changed";
      return 0;
    }
    if (saved->priority > held && saved->priority > lim) {
      *why = "the thread's real-time priority is above RLIMIT_RTPRIO without CAP_SYS_NICE: "
             "it could not return to it after a lower one; nothing was changed";
      return 0;
    }
    return 1;
  }
  if (new_os == SCHED_IDLE && old != SCHED_IDLE && !sleepacc__rlimit_allows_nice(saved->nice)) {
    *why = "SCHED_IDLE could not be left again without CAP_SYS_NICE or an RLIMIT_NICE "
           "covering the thread's nice value; nothing was changed";
    return 0;
  }
  return 1;
}

static int sleepacc__tid(void) {
#if defined(__linux__)
  return (int)syscall(SYS_gettid);
#else
  return 0;
#endif
}

/* The calling thread's sched_attr into *saved (policy, priority, nice,
 * flags, DEADLINE parameters); sched_getscheduler where sched_getattr is
 * missing. */
static int sleepacc__sched_save(sleepacc_env_saved *saved) {
  int nice;
  errno = 0;
  nice = getpriority(PRIO_PROCESS, (id_t)sleepacc__tid());
  if (nice == -1 && errno) return -errno;
  saved->nice = nice;
#if defined(__linux__) && defined(SYS_sched_getattr)
  {
    sleepacc__sched_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0u) == 0) {
      saved->policy = (int)a.sched_policy;
      saved->priority = (int)a.sched_priority;
      saved->sched_flags = a.sched_flags & SLEEPACC__FLAGS_RESTORABLE;
      saved->reset_on_fork = (a.sched_flags & SLEEPACC__FLAG_RESET_ON_FORK) != 0;
      saved->dl_runtime_ns = a.sched_runtime;
      saved->dl_deadline_ns = a.sched_deadline;
      saved->dl_period_ns = a.sched_period;
      return 0;
    }
    if (errno != ENOSYS) return -errno;
  }
#endif
  {
    struct sched_param sp;
    int cur = sched_getscheduler(0);
    if (cur < 0 || sched_getparam(0, &sp) != 0) return -errno;
    saved->policy = cur & ~SCHED_RESET_ON_FORK;
    saved->reset_on_fork = (cur & SCHED_RESET_ON_FORK) != 0;
    saved->sched_flags = saved->reset_on_fork ? SLEEPACC__FLAG_RESET_ON_FORK : 0;
    saved->priority = sp.sched_priority;
  }
  return 0;
}

/* Set the calling thread's policy (OS value), priority, nice, flags and
 * DEADLINE parameters: sched_setattr, or sched_setscheduler where it is
 * missing (then DEADLINE cannot be set: -ENOSYS). */
static int sleepacc__sched_set(int os, int prio, int nice, uint64_t flags, uint64_t runtime,
                               uint64_t deadline, uint64_t period) {
#if defined(__linux__) && defined(SYS_sched_setattr)
  sleepacc__sched_attr a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.sched_policy = (uint32_t)os;
  a.sched_flags = flags;
  a.sched_nice = nice;
  a.sched_priority = (uint32_t)prio;
  a.sched_runtime = runtime;
  a.sched_deadline = deadline;
  a.sched_period = period;
  if (syscall(SYS_sched_setattr, 0, &a, 0u) == 0) return 0;
  if (errno != ENOSYS) return -errno;
#else
  (void)nice; (void)runtime; (void)deadline; (void)period;
#endif
  if (os == SCHED_DEADLINE) return -ENOSYS;
  {
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = prio;
    if (sched_setscheduler(0, os | ((flags & SLEEPACC__FLAG_RESET_ON_FORK) ? SCHED_RESET_ON_FORK
                                                                           : 0),
                           &sp) != 0)
      return -errno;
  }
  return 0;
}

/* Memory the process already holds locked (VmLck, kB), 0 when unknown: a
 * caller's own mlockall must survive our munlockall, so apply leaves
 * locking alone when something is locked already. */
static long sleepacc__locked_kb(void) {
  char line[256];
  long kb = 0;
  FILE *f = fopen("/proc/self/status", "re");
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmLck: %ld", &kb) == 1) break;
  fclose(f);
  return kb;
}

/* The env that changes nothing. */
void sleepacc_env_default(sleepacc_env *env) {
  if (!env) return;
  env->slack_ns = -1;
  env->policy = SLEEPACC_POLICY_KEEP;
  env->priority = 0;
  env->cpu = -1;
  env->lock_memory = 0;
  env->dma_latency_us = -1;
}

/* The calling thread's timer slack in ns, or -errno. */
int64_t sleepacc_current_slack(void) {
#if defined(__linux__)
  int r = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  /* prctl returns the slack as an int; -1 is an error */
  return r < 0 ? -(int64_t)errno : (int64_t)(unsigned)r;
#else
  return -ENOSYS;
#endif
}

/* The rules of an environment, the one place they are written: (id, field
 * as a run's config names it, message), in the order they are checked.
 * config.c's rules of a run apply them to its env in their place. */
#define SLEEPACC__ENV_RULES(XX)                                                         \
  XX(SLACK, "env.slack_ns", "must be 1 ns .. 1 s (or left as it is)")                  \
  XX(POLICY, "env.policy", "must be one of other, batch, idle, fifo, rr")              \
  XX(PRIORITY_RT, "env.priority", "must be 1..99 with policy fifo or rr")              \
  XX(PRIORITY_OTHER, "env.priority", "must be 0 unless the policy is fifo or rr")      \
  XX(CPU, "env.cpu", "is not in this thread's allowed CPU set")                        \
  XX(CPU_UNKNOWN, "env.cpu", "cannot be checked: the thread's allowed set is unknown") \
  XX(LOCK, "env.lock_memory", "must be 0 or 1")                                        \
  XX(DMA, "env.dma_latency_us", "must be 0..2000000000 us (or left as it is)")

enum {
#define SLEEPACC__ID(id, field, msg) SLEEPACC__E_##id,
  SLEEPACC__ENV_RULES(SLEEPACC__ID)
#undef SLEEPACC__ID
  SLEEPACC__E_OK
};

static const struct {
  const char *field, *message;
} sleepacc__env_rules[] = {
#define SLEEPACC__ROW(id, field, msg) {field, msg},
    SLEEPACC__ENV_RULES(SLEEPACC__ROW)
#undef SLEEPACC__ROW
};

/* The first environment rule env breaks, or SLEEPACC__E_OK. */
static int sleepacc__env_rule(const sleepacc_env *env) {
  if (env->slack_ns != -1 && (env->slack_ns < 1 || env->slack_ns > SLEEPACC_MAX_SLACK_NS))
    return SLEEPACC__E_SLACK;
  if (env->policy < SLEEPACC_POLICY_KEEP || env->policy > SLEEPACC_POLICY_RR)
    return SLEEPACC__E_POLICY;
  if (env->policy == SLEEPACC_POLICY_FIFO || env->policy == SLEEPACC_POLICY_RR) {
    int os = env->policy == SLEEPACC_POLICY_FIFO ? SCHED_FIFO : SCHED_RR;
    int lo = sched_get_priority_min(os), hi = sched_get_priority_max(os);
    if (lo < 0 || hi < 0) { lo = 1; hi = 99; }
    if (env->priority < lo || env->priority > hi) return SLEEPACC__E_PRIORITY_RT;
  } else if (env->priority != 0) {
    return SLEEPACC__E_PRIORITY_OTHER;
  }
  if (env->cpu != -1) {
    cpu_set_t set;
    if (env->cpu < 0 || env->cpu >= CPU_SETSIZE) return SLEEPACC__E_CPU;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return SLEEPACC__E_CPU_UNKNOWN;
    if (!CPU_ISSET(env->cpu, &set)) return SLEEPACC__E_CPU;
  }
  if (env->lock_memory != 0 && env->lock_memory != 1) return SLEEPACC__E_LOCK;
  if (env->dma_latency_us < -1 || env->dma_latency_us > SLEEPACC_MAX_DMA_LATENCY_US)
    return SLEEPACC__E_DMA;
  return SLEEPACC__E_OK;
}

int sleepacc__env_explain(const sleepacc_env *env, const char **field, const char **message) {
  int id;
  if (!env) return -EINVAL;
  id = sleepacc__env_rule(env);
  if (id == SLEEPACC__E_OK) return 0;
  if (field) *field = sleepacc__env_rules[id].field;
  if (message) *message = sleepacc__env_rules[id].message;
  return -EINVAL;
}

/* Validate env without changing anything: the rules above, -EINVAL when
 * one is broken.  *bad_field (when given) names the field ("slack_ns",
 * ...). */
int sleepacc_env_check_field(const sleepacc_env *env, const char **bad_field) {
  const char *f = NULL;
  int rc = sleepacc__env_explain(env, &f, NULL);
  if (bad_field) *bad_field = rc == 0 || !f ? NULL : f + sizeof "env." - 1;
  return rc;
}

int sleepacc_env_check(const sleepacc_env *env) { return sleepacc_env_check_field(env, NULL); }

/* Undo what saved->applied says, clearing each bit as it is undone.
 * Safe to call twice (the second call finds nothing to do).  Returns the
 * first error met, after trying every step. */
int sleepacc_env_restore(sleepacc_env_saved *saved) {
  int first = 0;
  if (!saved) return -EINVAL;
  if (saved->applied & SLEEPACC__APPLIED_DMA) {
    if (saved->dma_fd >= 0) close(saved->dma_fd);
    saved->dma_fd = -1;
    saved->applied &= ~SLEEPACC__APPLIED_DMA;
  }
  if (saved->applied & SLEEPACC__APPLIED_MLOCK) {
    if (munlockall() != 0 && !first) first = -errno;
    saved->applied &= ~SLEEPACC__APPLIED_MLOCK;
  }
  if (saved->applied & SLEEPACC__APPLIED_AFFINITY) {
    if (sched_setaffinity(0, sizeof(cpu_set_t), (const cpu_set_t *)(void *)saved->cpuset) != 0 &&
        !first)
      first = -errno;
    saved->applied &= ~SLEEPACC__APPLIED_AFFINITY;
  }
  if (saved->applied & SLEEPACC__APPLIED_POLICY) {
    int rc = sleepacc__sched_set(saved->policy, saved->priority, saved->nice, saved->sched_flags,
                                 saved->dl_runtime_ns, saved->dl_deadline_ns,
                                 saved->dl_period_ns);
    if (rc != 0 && !first) first = rc;
    saved->applied &= ~SLEEPACC__APPLIED_POLICY;
  }
#if defined(__linux__)
  /* After the policy: leaving FIFO/RR resets the slack to the default, so
   * the slack that was there is put back whenever it differs, whoever
   * changed it. */
  if (saved->applied & SLEEPACC__APPLIED_SLACK) {
    if (sleepacc_current_slack() != saved->slack_ns &&
        prctl(PR_SET_TIMERSLACK, (unsigned long)saved->slack_ns, 0, 0, 0) != 0 && !first)
      first = -errno;
    saved->applied &= ~SLEEPACC__APPLIED_SLACK;
  }
#endif
  saved->applied = 0;
  return first;
}

int sleepacc__rt_group_words(const char *cgroup_file, const char *root, char *buf, size_t cap) {
  char line[1024], dir[768], file[800];
  FILE *f = fopen(cgroup_file, "re");
  int found = 0;
  if (!f || !buf || !cap) return f ? fclose(f), 0 : 0;
  while (!found && fgets(line, sizeof line, f)) { /* "id:controllers:path" */
    char *ctrls = strchr(line, ':'), *path = ctrls ? strchr(ctrls + 1, ':') : NULL, *end;
    const char *mounts[3];
    int cpu = 0;
    if (!path) continue;
    *ctrls++ = '\0', *path++ = '\0';
    if ((end = strchr(path, '\n'))) *end = '\0';
    for (const char *c = ctrls; *c; c += strcspn(c, ",") + (c[strcspn(c, ",")] == ','))
      cpu |= strncmp(c, "cpu", 3) == 0 && (c[3] == ',' || c[3] == '\0');
    if (!cpu && *ctrls) continue; /* a v1 hierarchy without cpu; "" is the v2 one */
    /* v1: mounted as its controller list ("cpu,cpuacct") or "cpu"; v2: the root */
    mounts[0] = ctrls, mounts[1] = *ctrls ? "cpu" : NULL, mounts[2] = NULL;
    for (int i = 0; mounts[i] && !found; i++) {
      int64_t us = -1;
      snprintf(dir, sizeof dir, "%s%s%s%s", root, *mounts[i] ? "/" : "", mounts[i],
               strcmp(path, "/") ? path : "");
      snprintf(file, sizeof file, "%s/cpu.rt_runtime_us", dir);
      found = sleepacc__read_int(file, &us) == 0 && us == 0;
    }
  }
  fclose(f);
  if (found)
    snprintf(buf, cap, "the thread's cgroup %s has cpu.rt_runtime_us 0: its tasks get no "
             "real-time time, so SCHED_FIFO/RR is refused even to root (give the group some "
             "in cpu.rt_runtime_us, or run outside it)", dir);
  return found;
}

/* Apply env to the calling thread, recording in *saved what to undo.
 * On failure everything already applied is restored and the error returned
 * (-EPERM stays -EPERM; -ENOENT when /dev/cpu_dma_latency is missing). */
int sleepacc_env_apply(const sleepacc_env *env, sleepacc_env_saved *saved) {
  int rc;
  const char *field = NULL;
  if (!saved) return -EINVAL;
  memset(saved, 0, sizeof *saved);
  saved->dma_fd = -1;
  if ((rc = sleepacc_env_check_field(env, &saved->bad_field)) != 0) return rc;

#if defined(__linux__)
  /* The slack is saved whenever the slack or the policy changes (the
   * kernel resets it when a thread leaves FIFO/RR) and restored last. */
  if (env->slack_ns != -1 || env->policy != SLEEPACC_POLICY_KEEP) {
    int64_t cur = sleepacc_current_slack();
    if (cur < 0) { rc = (int)cur; field = "slack_ns"; goto fail; }
    saved->slack_ns = cur;
    saved->applied |= SLEEPACC__APPLIED_SLACK;
  }
#else
  if (env->slack_ns != -1) { rc = -ENOSYS; field = "slack_ns"; goto fail; }
#endif

  if (env->policy != SLEEPACC_POLICY_KEEP) {
    int os = sleepacc__policies_os[env->policy];
    const char *why = NULL;
    field = "policy";
    if ((rc = sleepacc__sched_save(saved)) != 0) goto fail;
    if (!sleepacc__can_return(saved, os, env->priority, &why)) {
      saved->bad_field = saved->policy == os ? "priority" : "policy";
      saved->why = why;
      saved->applied = 0; /* nothing was changed */
      return -EPERM;
    }
    if (os != saved->policy || env->priority != saved->priority) {
      /* the caller's nice and RESET_ON_FORK are kept */
      static __thread char rt_group[512]; /* saved->why: valid until the thread's next apply */
      rc = sleepacc__sched_set(os, env->priority, saved->nice,
                               saved->sched_flags & SLEEPACC__FLAG_RESET_ON_FORK, 0, 0, 0);
      if (rc == -EPERM && sleepacc__os_is_rt(os) && /* even root: the group has no RT time */
          sleepacc__rt_group_words("/proc/thread-self/cgroup", "/sys/fs/cgroup", rt_group, sizeof rt_group))
        saved->why = rt_group;
      if (rc != 0) goto fail;
      saved->applied |= SLEEPACC__APPLIED_POLICY;
    }
  }

#if defined(__linux__)
  /* After the policy, which may reset it. */
  if (env->slack_ns != -1 &&
      prctl(PR_SET_TIMERSLACK, (unsigned long)env->slack_ns, 0, 0, 0) != 0) {
    rc = -errno;
    field = "slack_ns";
    goto fail;
  }
#endif

  if (env->cpu != -1) {
    cpu_set_t one;
    field = "cpu";
    if (sched_getaffinity(0, sizeof(cpu_set_t), (cpu_set_t *)(void *)saved->cpuset) != 0) {
      rc = -errno;
      goto fail;
    }
    CPU_ZERO(&one);
    CPU_SET(env->cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) { rc = -errno; goto fail; }
    saved->applied |= SLEEPACC__APPLIED_AFFINITY;
  }

  if (env->lock_memory && sleepacc__locked_kb() == 0) {
    field = "lock_memory";
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) { rc = -errno; goto fail; }
    saved->applied |= SLEEPACC__APPLIED_MLOCK;
  }

  if (env->dma_latency_us != -1) {
    int32_t v = env->dma_latency_us;
    int fd;
    field = "dma_latency_us";
    fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    if (fd < 0) { rc = -errno; goto fail; }
    if (write(fd, &v, sizeof v) != (ssize_t)sizeof v) {
      rc = errno ? -errno : -EIO;
      close(fd);
      goto fail;
    }
    saved->dma_fd = fd;
    saved->applied |= SLEEPACC__APPLIED_DMA;
  }
  return 0;

fail:
  sleepacc_env_restore(saved);
  saved->bad_field = field;
  return rc;
}

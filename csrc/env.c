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
  SLEEPACC__APPLIED_SLACK = 1 << 0,
  SLEEPACC__APPLIED_POLICY = 1 << 1,
  SLEEPACC__APPLIED_AFFINITY = 1 << 2,
  SLEEPACC__APPLIED_MLOCK = 1 << 3,
  SLEEPACC__APPLIED_DMA = 1 << 4,
};

_Static_assert(sizeof(cpu_set_t) <= sizeof(((sleepacc_env_saved *)0)->cpuset),
               "cpuset storage too small");

/* Public policy -> OS policy, and its name (index = sleepacc_policy). */
static const struct {
  const char *name;
  int os;
} sleepacc__policies[] = {
    {"other", SCHED_OTHER}, {"batch", SCHED_BATCH}, {"idle", SCHED_IDLE},
    {"fifo", SCHED_FIFO},   {"rr", SCHED_RR},
};
#define SLEEPACC__NPOLICIES ((int)(sizeof sleepacc__policies / sizeof sleepacc__policies[0]))

/* Linux lets a thread leave SCHED_IDLE only with CAP_SYS_NICE or when
 * RLIMIT_NICE covers its nice value (sched(7)).  Without either, entering
 * SCHED_IDLE could not be undone, so apply refuses it up front with -EPERM. */
static int sleepacc__can_leave_idle(void) {
#if defined(__linux__)
  struct __user_cap_header_struct hdr;
  struct __user_cap_data_struct data[2];
  struct rlimit rl;
  int nice;
  memset(&hdr, 0, sizeof hdr);
  memset(data, 0, sizeof data);
  hdr.version = _LINUX_CAPABILITY_VERSION_3;
  if (syscall(SYS_capget, &hdr, data) == 0 &&
      (data[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32))))
    return 1;
  errno = 0;
  nice = getpriority(PRIO_PROCESS, 0); /* the calling thread's nice on Linux */
  if (nice == -1 && errno) return 0;
  if (getrlimit(RLIMIT_NICE, &rl) != 0) return 0;
  return rl.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice) <= rl.rlim_cur;
#else
  return 1;
#endif
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

int sleepacc_policy_from_name(const char *name) {
  if (!name) return -EINVAL;
  for (int i = 0; i < SLEEPACC__NPOLICIES; i++)
    if (strcmp(sleepacc__policies[i].name, name) == 0) return i;
  return -EINVAL;
}

const char *sleepacc_policy_name(int policy) {
  return policy >= 0 && policy < SLEEPACC__NPOLICIES ? sleepacc__policies[policy].name : NULL;
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

/* Validate env without changing anything: the environment rules of
 * config.c (one place), -EINVAL when one is broken. */
int sleepacc_env_check(const sleepacc_env *env) {
  return sleepacc__env_explain(env, NULL, NULL);
}

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
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = saved->priority;
    if (sched_setscheduler(0, saved->policy | (saved->reset_on_fork ? SCHED_RESET_ON_FORK : 0),
                           &sp) != 0 &&
        !first)
      first = -errno;
    saved->applied &= ~SLEEPACC__APPLIED_POLICY;
  }
#if defined(__linux__)
  if (saved->applied & SLEEPACC__APPLIED_SLACK) {
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)saved->slack_ns, 0, 0, 0) != 0 && !first)
      first = -errno;
    saved->applied &= ~SLEEPACC__APPLIED_SLACK;
  }
#endif
  saved->applied = 0;
  return first;
}

/* Apply env to the calling thread, recording in *saved what to undo.
 * On failure everything already applied is restored and the error returned
 * (-EPERM stays -EPERM; -ENOENT when /dev/cpu_dma_latency is missing). */
int sleepacc_env_apply(const sleepacc_env *env, sleepacc_env_saved *saved) {
  int rc;
  if (!saved) return -EINVAL;
  memset(saved, 0, sizeof *saved);
  saved->dma_fd = -1;
  if ((rc = sleepacc_env_check(env)) != 0) return rc;

  if (env->slack_ns != -1) {
#if defined(__linux__)
    int64_t cur = sleepacc_current_slack();
    if (cur < 0) { rc = (int)cur; goto fail; }
    saved->slack_ns = cur;
    if (prctl(PR_SET_TIMERSLACK, (unsigned long)env->slack_ns, 0, 0, 0) != 0) {
      rc = -errno;
      goto fail;
    }
    saved->applied |= SLEEPACC__APPLIED_SLACK;
#else
    rc = -ENOSYS;
    goto fail;
#endif
  }

  if (env->policy != SLEEPACC_POLICY_KEEP) {
    struct sched_param sp;
    int cur = sched_getscheduler(0);
    if (cur < 0 || sched_getparam(0, &sp) != 0) { rc = -errno; goto fail; }
    saved->policy = cur & ~SCHED_RESET_ON_FORK;
    saved->reset_on_fork = (cur & SCHED_RESET_ON_FORK) != 0;
    saved->priority = sp.sched_priority;
    if (sleepacc__policies[env->policy].os == SCHED_IDLE && saved->policy != SCHED_IDLE &&
        !sleepacc__can_leave_idle()) {
      rc = -EPERM;
      goto fail;
    }
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = env->priority;
    if (sched_setscheduler(0, sleepacc__policies[env->policy].os |
                                  (saved->reset_on_fork ? SCHED_RESET_ON_FORK : 0),
                           &sp) != 0) {
      rc = -errno;
      goto fail;
    }
    saved->applied |= SLEEPACC__APPLIED_POLICY;
  }

  if (env->cpu != -1) {
    cpu_set_t one;
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
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) { rc = -errno; goto fail; }
    saved->applied |= SLEEPACC__APPLIED_MLOCK;
  }

  if (env->dma_latency_us != -1) {
    int32_t v = env->dma_latency_us;
    int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
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
  return rc;
}

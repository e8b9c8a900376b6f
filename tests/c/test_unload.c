/* test_unload.c -- the shared library unloaded on a thread that then ends:
 * a Lua state closed on a worker thread dlcloses the module (Lua 5.4's
 * lua_close), and the thread ends after.  The io_uring row's per-thread
 * ring had a pthread key whose destructor stayed registered inside the
 * unmapped library: the thread's exit called it (SIGSEGV, this process
 * dying).  The core deletes the key when it is unloaded. */
#include "check.h"
#include "sleepacc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

typedef const sleepacc_method *(*find_fn)(const char *);
typedef int (*avail_fn)(const sleepacc_method *);
typedef int (*open_fn)(sleepacc_waiter *, const sleepacc_method *, int64_t);
typedef int (*wait_fn)(sleepacc_waiter *, int64_t, int64_t);
typedef void (*close_fn)(sleepacc_waiter *);
typedef int64_t (*now_fn)(void);

static sleepacc_waiter waiter;
static int waited; /* 1 waited on io_uring, 0 unavailable, -1 failed */

/* The thread: load the library, one io_uring wait (the thread's ring),
 * unload it, end. */
static void *worker(void *arg) {
  void *h = dlopen((const char *)arg, RTLD_NOW | RTLD_LOCAL);
  const sleepacc_method *m;
  waited = -1;
  if (!h) return fprintf(stderr, "  dlopen: %s\n", dlerror()), NULL;
  m = ((find_fn)dlsym(h, "sleepacc_method_find"))("io_uring");
  if (!m || !((avail_fn)dlsym(h, "sleepacc_method_available"))(m)) {
    waited = 0;
  } else if (((open_fn)dlsym(h, "sleepacc_waiter_open"))(&waiter, m, 0) == 0) {
    int64_t now = ((now_fn)dlsym(h, "sleepacc_now_ns"))();
    waited = ((wait_fn)dlsym(h, "sleepacc_waiter_wait"))(&waiter, 1000, now + 1000) == 0;
    ((close_fn)dlsym(h, "sleepacc_waiter_close"))(&waiter);
  }
  dlclose(h);
  return NULL; /* the thread ends: no destructor of the unloaded library may run */
}

static void test_a_thread_ends_after_the_library_is_unloaded(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, (void *)SLEEPACC_SO) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECKF(waited >= 0, "the io_uring wait failed");
  if (waited == 0) printf("# io_uring unavailable here: the ring's key was never made\n");
}

int main(void) {
  TEST(test_a_thread_ends_after_the_library_is_unloaded);
  return check_summary();
}

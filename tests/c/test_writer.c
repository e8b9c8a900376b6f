/* test_writer.c -- the results file writer (csrc/json.c): the same bytes as
 * the line renderers, a point larger than the writer's buffer, the KEEP rule
 * (a non-empty file is refused and left as it is), ATOMIC (whole or absent),
 * ATOMIC through a symbolic link (the link stays) and to a FIFO (written to,
 * the node stays), SYNC + abort (the lines so far stay, no footer), a failed write cutting
 * the file back to its last whole line, and the error paths. */
#include "check.h"
#include "sleepacc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static sleepacc_writer w; /* large: not on the stack */
static char dir[64];

static const char *at(const char *name) {
  static char p[2][128];
  static int k;
  k ^= 1;
  snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
  return p[k];
}

/* The whole file (NUL-terminated, malloc'd), or NULL when absent. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *s;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  s = malloc((size_t)n + 1);
  *len = fread(s, 1, (size_t)n, f);
  s[*len] = '\0';
  fclose(f);
  return s;
}

static size_t lines(const char *s) {
  size_t k = 0;
  for (; *s; s++) k += *s == '\n';
  return k;
}

static sleepacc_result result(int64_t n) {
  sleepacc_result r;
  memset(&r, 0, sizeof r);
  r.method = "nanosleep";
  r.mode = "relative";
  r.requested_ns = 1000;
  r.n = n;
  r.env.slack_ns = r.env.priority = r.env.cpu = r.env.dma_latency_us = r.env.margin_ns = -1;
  return r;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void test_bytes_and_big_point(void) {
  enum { N = 20000 }; /* ~ 180 KB of samples: several buffers */
  static int64_t s[N];
  static char line[N * 12 + 4096];
  sleepacc_result r = result(N), small = result(0);
  size_t len = 0;
  char *got, *p;
  int k;
  for (int i = 0; i < N; i++) s[i] = 1000000000LL + i;
  CHECK(sleepacc_writer_open(&w, at("a.jsonl"), 0, "c", "test") == 0);
  CHECK(sleepacc_writer_point(&w, &small, NULL, 0) == 0);
  CHECK(sleepacc_writer_point(&w, &r, s, N) == 0);
  CHECK(sleepacc_writer_close(&w) == 0);
  CHECK(sleepacc_writer_close(&w) == -EINVAL); /* closed */
  sleepacc_writer_abort(&w);                   /* safe after close */
  got = slurp(at("a.jsonl"), &len);
  CHECK(got && lines(got) == 4 && len == strlen(got));
  if (!got) return;
  CHECKF(!strncmp(got, "{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{", 46), "%.60s", got);
  CHECK(strstr(got, "\"settings\":{\"version\":\"" SLEEPACC_VERSION "\",\"writer\":\"c\",\"c\":\"test\"}"));
  p = strchr(got, '\n') + 1; /* the points: the renderer's bytes */
  k = sleepacc_json_point(&small, NULL, 0, line, sizeof line, NULL);
  CHECK(k > 0 && !strncmp(p, line, (size_t)k));
  p += k;
  k = sleepacc_json_point(&r, s, N, line, sizeof line, NULL);
  CHECKF(k > 65536 && !strncmp(p, line, (size_t)k), "%d", k);
  CHECK(!strncmp(p + k, "{\"type\":\"footer\",\"finished\":\"", 29));
  free(got);
  unlink(at("a.jsonl"));
}

static void test_keep(void) {
  sleepacc_result r = result(0);
  size_t len = 0;
  char *got;
  FILE *f = fopen(at("k.jsonl"), "w");
  fputs("precious\n", f);
  fclose(f);
  CHECK(sleepacc_writer_open(&w, at("k.jsonl"), SLEEPACC_WRITE_KEEP, "c", "t") == -EEXIST);
  sleepacc_writer_abort(&w); /* safe after a failed open */
  got = slurp(at("k.jsonl"), &len);
  CHECK(got && !strcmp(got, "precious\n")); /* left as it was */
  free(got);
  CHECK(truncate(at("k.jsonl"), 0) == 0); /* an empty file is fine, and so is a new one */
  CHECK(sleepacc_writer_open(&w, at("k.jsonl"), SLEEPACC_WRITE_KEEP, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0 && sleepacc_writer_close(&w) == 0);
  CHECK(sleepacc_writer_open(&w, at("k2.jsonl"), SLEEPACC_WRITE_KEEP, "c", "t") == 0);
  CHECK(sleepacc_writer_close(&w) == 0);
  got = slurp(at("k2.jsonl"), &len);
  CHECK(got && lines(got) == 2);
  free(got);
  /* a pipe: written (KEEP does not apply), its fsync's EINVAL is not an error */
  {
    int fds[2];
    char path[64], got2[16384];
    ssize_t k;
    CHECK(pipe(fds) == 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[1]);
    CHECK(sleepacc_writer_open(&w, path, SLEEPACC_WRITE_KEEP | SLEEPACC_WRITE_SYNC, "c", "t") == 0);
    CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0 && sleepacc_writer_close(&w) == 0);
    close(fds[1]);
    k = read(fds[0], got2, sizeof got2 - 1);
    got2[k > 0 ? k : 0] = '\0';
    CHECK(k > 0 && lines(got2) == 3 && strstr(got2, "\"type\":\"footer\""));
    close(fds[0]);
  }
  unlink(at("k.jsonl")), unlink(at("k2.jsonl"));
}

static void test_atomic(void) {
  sleepacc_result r = result(0);
  char tmp[160];
  size_t len = 0;
  char *got = NULL;
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", at("x.jsonl"), (long)getpid());
  CHECK(sleepacc_writer_open(&w, at("x.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0);
  CHECK(exists(tmp) && !exists(at("x.jsonl"))); /* absent until close */
  CHECK(sleepacc_writer_close(&w) == 0);
  CHECK(!exists(tmp) && (got = slurp(at("x.jsonl"), &len)) && lines(got) == 3);
  free(got);
  CHECK(sleepacc_writer_open(&w, at("y.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
  sleepacc_writer_abort(&w);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", at("y.jsonl"), (long)getpid());
  CHECK(!exists(tmp) && !exists(at("y.jsonl"))); /* aborted: nothing */
  /* ATOMIC + KEEP: the path is checked at open */
  CHECK(sleepacc_writer_open(&w, at("x.jsonl"), SLEEPACC_WRITE_ATOMIC | SLEEPACC_WRITE_KEEP, "c", "t") ==
        -EEXIST);
  CHECK((got = slurp(at("x.jsonl"), &len)) && lines(got) == 3); /* untouched */
  free(got);
  unlink(at("x.jsonl"));
}

/* ATOMIC on a path that is no plain file: a link's file is replaced, the
 * link kept; a node that is no regular file (a FIFO here, /dev/null for a
 * user: a rename over it would replace the device) is written to, and stays
 * what it was. */
static void test_atomic_link_and_node(void) {
  sleepacc_result r = result(0);
  struct stat st;
  char buf[65536];
  size_t len = 0;
  char *got = NULL;
  int rd;
  ssize_t n;
  CHECK(symlink("target.jsonl", at("link.jsonl")) == 0);
  CHECK(sleepacc_writer_open(&w, at("link.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
  sleepacc_writer_close(&w); /* a link to nothing: the file it names made */
  CHECK(lstat(at("link.jsonl"), &st) == 0 && S_ISLNK(st.st_mode) && exists(at("target.jsonl")));
  CHECK(sleepacc_writer_open(&w, at("link.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0 && sleepacc_writer_close(&w) == 0);
  CHECK(lstat(at("link.jsonl"), &st) == 0 && S_ISLNK(st.st_mode));
  CHECK((got = slurp(at("target.jsonl"), &len)) && lines(got) == 3);
  free(got);
  CHECK(sleepacc_writer_open(&w, at("link.jsonl"), SLEEPACC_WRITE_ATOMIC | SLEEPACC_WRITE_KEEP, "c", "t") ==
        -EEXIST); /* the file it names is not empty */
  unlink(at("link.jsonl")), unlink(at("target.jsonl"));
  CHECK(mkfifo(at("fifo"), 0600) == 0);
  CHECK((rd = open(at("fifo"), O_RDONLY | O_NONBLOCK)) >= 0); /* a reader: the writer's open returns */
  CHECK(sleepacc_writer_open(&w, at("fifo"), SLEEPACC_WRITE_ATOMIC | SLEEPACC_WRITE_KEEP, "c", "t") == 0);
  CHECK(sleepacc_writer_close(&w) == 0);
  n = read(rd, buf, sizeof buf - 1);
  CHECK(n > 0 && memcmp(buf, "{", 1) == 0);
  close(rd);
  CHECK(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
  CHECK(sleepacc_atomic_target(at("fifo"), buf, sizeof buf) == 0 && buf[0] == '\0'); /* the rule alone */
  unlink(at("fifo"));
  CHECK(sleepacc_atomic_target(at("new"), buf, sizeof buf) == 1 && strcmp(buf, at("new")) == 0);
  CHECK(sleepacc_atomic_target(at("new"), buf, 4) == -ENAMETOOLONG && buf[0] == '\0');
  CHECK(sleepacc_atomic_target(NULL, buf, sizeof buf) == -EINVAL);
}

/* ATOMIC's temporary file is its own: one already at its name (a link an
 * attacker made in /tmp, a stale file) is never written through.  A link
 * there was followed: the file it named was overwritten, and the rename
 * then put the link at the path. */
static void test_atomic_temporary_is_its_own(void) {
  sleepacc_result r = result(0);
  struct stat st;
  char tmp[160];
  size_t len = 0;
  char *got = NULL;
  FILE *f = fopen(at("victim"), "w");
  CHECK(f && fputs("precious\n", f) >= 0 && fclose(f) == 0);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", at("s.jsonl"), (long)getpid());
  CHECK(symlink(at("victim"), tmp) == 0);
  CHECK(sleepacc_writer_open(&w, at("s.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0 && sleepacc_writer_close(&w) == 0);
  CHECK((got = slurp(at("victim"), &len)) && strcmp(got, "precious\n") == 0); /* untouched */
  free(got);
  CHECK(lstat(at("s.jsonl"), &st) == 0 && S_ISREG(st.st_mode)); /* a file, not the link */
  CHECK((got = slurp(at("s.jsonl"), &len)) && lines(got) == 3);
  free(got);
  CHECK(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode)); /* what was there stays */
  /* two writers of one path at once (two threads): each its own temporary */
  {
    static sleepacc_writer w2;
    char tmp1[170];
    snprintf(tmp1, sizeof tmp1, "%s.1", tmp);
    CHECK(sleepacc_writer_open(&w, at("s.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
    CHECK(sleepacc_writer_open(&w2, at("s.jsonl"), SLEEPACC_WRITE_ATOMIC, "c", "t") == 0);
    CHECK(exists(tmp1) && strcmp(w.tmp, w2.tmp) != 0);
    CHECK(sleepacc_writer_point(&w2, &r, NULL, 0) == 0 && sleepacc_writer_close(&w2) == 0);
    CHECK(sleepacc_writer_close(&w) == 0); /* the last rename wins, whole */
    CHECK((got = slurp(at("s.jsonl"), &len)) && lines(got) == 2);
    free(got);
    CHECK(!exists(tmp1));
  }
  unlink(tmp), unlink(at("s.jsonl")), unlink(at("victim"));
}

static void test_sync_abort(void) {
  sleepacc_result r = result(0);
  size_t len = 0;
  char *got;
  CHECK(sleepacc_writer_open(&w, at("s.jsonl"), SLEEPACC_WRITE_SYNC | SLEEPACC_WRITE_KEEP, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0);
  got = slurp(at("s.jsonl"), &len); /* on disk before the next point */
  CHECK(got && lines(got) == 2);
  free(got);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == 0);
  sleepacc_writer_abort(&w);
  sleepacc_writer_abort(&w);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == -EINVAL);
  got = slurp(at("s.jsonl"), &len);
  CHECK(got && lines(got) == 3 && !strstr(got, "footer")); /* header, 2 points, no footer */
  free(got);
  unlink(at("s.jsonl"));
}

/* A write refused past RLIMIT_FSIZE (EFBIG) mid-point: the file is cut
 * back to the point before, and the error stays. */
static void test_write_error_cuts_back(void) {
  enum { N = 5000 }; /* a point of ~ 60 KB */
  static int64_t s[N];
  sleepacc_result r = result(N), small = result(0);
  struct rlimit old, lim;
  struct stat st;
  off_t before;
  size_t len = 0;
  char *got;
  for (int i = 0; i < N; i++) s[i] = 1000000000LL + i;
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  signal(SIGXFSZ, SIG_IGN);
  CHECK(sleepacc_writer_open(&w, at("f.jsonl"), SLEEPACC_WRITE_SYNC, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, &small, NULL, 0) == 0);
  CHECK(stat(at("f.jsonl"), &st) == 0);
  before = st.st_size;
  lim = old;
  lim.rlim_cur = (rlim_t)before + 20000; /* room for a third of the big point */
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  CHECK(sleepacc_writer_point(&w, &r, s, N) == -EFBIG);
  CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
  CHECK(stat(at("f.jsonl"), &st) == 0 && st.st_size == before); /* cut back */
  CHECK(sleepacc_writer_point(&w, &small, NULL, 0) == -EFBIG);  /* the error stays */
  CHECK(sleepacc_writer_close(&w) == -EFBIG);
  got = slurp(at("f.jsonl"), &len);
  CHECK(got && lines(got) == 2 && len == (size_t)before && got[len - 1] == '\n');
  free(got);
  signal(SIGXFSZ, SIG_DFL);
  unlink(at("f.jsonl"));
}

static void test_errors(void) {
  static char longp[PATH_MAX + 8];
  sleepacc_result r = result(0);
  CHECK(sleepacc_writer_open(&w, "/nonexistent-dir/x.jsonl", 0, "c", "t") == -ENOENT);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 0) == -EINVAL);
  CHECK(sleepacc_writer_open(&w, "/nonexistent-dir/x.jsonl", SLEEPACC_WRITE_ATOMIC, "c", "t") == -ENOENT);
  CHECK(sleepacc_writer_open(&w, at("e.jsonl"), 8, "c", "t") == -EINVAL); /* unknown flag */
  CHECK(sleepacc_writer_open(&w, NULL, 0, "c", "t") == -EINVAL);
  CHECK(sleepacc_writer_open(&w, at("e.jsonl"), 0, NULL, "t") == -EINVAL);
  CHECK(sleepacc_writer_open(NULL, at("e.jsonl"), 0, "c", "t") == -EINVAL);
  memset(longp, 'a', sizeof longp - 1);
  CHECK(sleepacc_writer_open(&w, longp, SLEEPACC_WRITE_ATOMIC, "c", "t") == -ENAMETOOLONG);
  CHECK(!exists(at("e.jsonl")));
  CHECK(sleepacc_writer_open(&w, at("e.jsonl"), 0, "c", "t") == 0);
  CHECK(sleepacc_writer_point(&w, NULL, NULL, 0) == -EINVAL);
  CHECK(sleepacc_writer_point(&w, &r, NULL, 3) == -EINVAL);
  CHECK(sleepacc_writer_close(&w) == 0);
  unlink(at("e.jsonl"));
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/sleepacc-writer-XXXXXX");
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  TEST(test_bytes_and_big_point);
  TEST(test_keep);
  TEST(test_atomic);
  TEST(test_atomic_link_and_node);
  TEST(test_atomic_temporary_is_its_own);
  TEST(test_sync_abort);
  TEST(test_write_error_cuts_back);
  TEST(test_errors);
  rmdir(dir);
  return check_summary();
}

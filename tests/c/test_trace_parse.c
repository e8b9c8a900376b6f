/* test_trace_parse.c -- the trace's reader of ring-buffer pages (trace.c,
 * sleepacc__trace_parse), on a page built here: runs everywhere, no tracefs
 * or privilege needed.  The layouts are read from format texts as the
 * kernel writes them (offsets that differ from one kernel to the next), and
 * the page holds every record kind: a time extend, small events, a long
 * event (its length in a word), a discarded one (padding with a delta), an
 * event of no interest, the page's end (padding with delta 0), and the
 * count of missed events stored after the data. */
#include "check.h"
#include "sleepacc_int.h"

#include <string.h>

static const char header_page[] =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON                                                                    \
  "format:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"          \
  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"  \
  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* softexpires before expires here (another order than 6.18's): read by name */
static const char start_fmt[] = "name: hrtimer_start\nID: 101\n" COMMON
    "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:s64 softexpires;\toffset:24;\tsize:8;\tsigned:1;\n"
    "\tfield:s64 expires;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:enum hrtimer_mode mode;\toffset:40;\tsize:4;\tsigned:0;\n";
static const char expire_fmt[] = "name: hrtimer_expire_entry\nID: 102\n" COMMON
    "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
    "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n";
static const char wakeup_fmt[] = "name: sched_wakeup\nID: 103\n" COMMON
    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";
static const char switch_fmt[] = "name: sched_switch\nID: 104\n" COMMON
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n";
static const char idle_fmt[] = "name: cpu_idle\nID: 105\n" COMMON
    "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n";

static unsigned char page[4096];
static size_t at; /* the next byte of the data area (page + 16) */

static void put32(uint32_t v) { memcpy(page + 16 + at, &v, 4), at += 4; }
static void put_at(unsigned char *rec, size_t off, const void *v, size_t n) { memcpy(rec + off, v, n); }

/* A record header: type_len (5 bits) and the time delta (27), in the host's bit order. */
static uint32_t hdr(unsigned type_len, uint32_t delta) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (uint32_t)type_len << 27 | delta;
#else
  return delta << 5 | type_len;
#endif
}

/* A data event of len bytes (a multiple of 4), short form (type_len = len / 4)
 * or long (type_len 0, its length + 4 in the next word); its payload. */
static unsigned char *event(uint32_t delta, uint16_t id, size_t len, int longform) {
  unsigned char *rec;
  if (longform) put32(hdr(0, delta)), put32((uint32_t)len + 4);
  else put32(hdr((unsigned)(len / 4), delta));
  rec = page + 16 + at;
  memset(rec, 0, len);
  put_at(rec, 0, &id, 2);
  at += len;
  return rec;
}

static void test_page(void) {
  const char *formats[5] = {start_fmt, expire_fmt, wakeup_fmt, switch_fmt, idle_fmt};
  int64_t ev[16][6], lost = -1, base = 1000 + (1LL << 27) + 5;
  uint64_t ts0 = 1000, commit, ptr = 0xffff888812345678ULL;
  int64_t soft = 5000000, hard = 5050000, now = 5058000;
  int32_t pid = 77, zero = 0, state = 1;
  long missed = 5;
  unsigned char *r;
  int n;
  memset(page, 0, sizeof page), at = 0;
  put32(hdr(30, 5)), put32(1);                          /* time extend: + (1 << 27) + 5 */
  r = event(100, 101, 44, 0);                           /* hrtimer_start, short */
  put_at(r, 8, &ptr, 8), put_at(r, 24, &soft, 8), put_at(r, 32, &hard, 8);
  r = event(10, 105, 16, 0);                            /* cpu_idle: enters state 1 */
  put_at(r, 8, &state, 4);
  r = event(20, 102, 32, 1);                            /* hrtimer_expire_entry, long */
  put_at(r, 8, &ptr, 8), put_at(r, 16, &now, 8);
  r = event(30, 104, 64, 0);                            /* sched_switch into the idle task */
  put_at(r, 24, &pid, 4), put_at(r, 56, &zero, 4);
  put32(hdr(29, 7)), put32(12), at += 8;                /* a discarded event: its length word (itself
                                                         * included) and 8 bytes, skipped */
  r = event(40, 103, 36, 0);                            /* sched_wakeup of pid 77 */
  put_at(r, 24, &pid, 4);
  event(1, 999, 8, 0);                                  /* no event of interest */
  commit = at | (1UL << 30);                            /* missed events stored after the data */
  put32(hdr(29, 0)), put32(0);                          /* the end: padding with delta 0 */
  memcpy(page + 16 + (commit & 0xffff), &missed, sizeof missed);
  memcpy(page, &ts0, 8), memcpy(page + 8, &commit, 8);

  n = sleepacc__trace_parse(header_page, formats, page, sizeof page, ev, 16, &lost);
  CHECKF(n == 4, "%d events", n);
  if (n != 4) return;
  CHECK(lost == 5);
  CHECK(ev[0][0] == base + 100 && ev[0][1] == 0 && (uint64_t)ev[0][2] == ptr && ev[0][3] == soft &&
        ev[0][4] == hard);                                            /* start: a, softexpires, expires */
  CHECK(ev[1][0] == base + 130 && ev[1][1] == 1 && (uint64_t)ev[1][2] == ptr && ev[1][3] == now);
  CHECK(ev[1][5] == 1);                                               /* idle at the expiry: cpu_idle */
  CHECK(ev[2][0] == base + 160 && ev[2][1] == 3 && ev[2][2] == 77 && ev[2][3] == 0);
  CHECK(ev[3][0] == base + 207 && ev[3][1] == 2 && ev[3][2] == 77);   /* the padding's delta counted */

  /* a format text without a field the trace reads is refused, not guessed */
  formats[1] = "name: hrtimer_expire_entry\nID: 102\n" COMMON "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n";
  CHECK(sleepacc__trace_parse(header_page, formats, page, sizeof page, ev, 16, &lost) == -ENOENT);
  formats[1] = expire_fmt;
  CHECK(sleepacc__trace_parse("no layout", formats, page, sizeof page, ev, 16, &lost) == -ENOENT);
  /* no room: events past it are not kept */
  CHECK(sleepacc__trace_parse(header_page, formats, page, sizeof page, ev, 2, &lost) == 2);
}

int main(void) {
  TEST(test_page);
  return check_summary();
}

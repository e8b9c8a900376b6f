/* test_fault_text.c -- sleepacc_fault_text (csrc/options.c, faults: issue
 * 12): the one sentence of a read's fault for both bindings, from real
 * faults of the core's readers (sleepacc_value_read) and built ones (a
 * key, a list's element): one template, each binding's words of what an
 * option kind takes, its index base, Lua's "a fraction", the value shown
 * as the binding gives it, and the refusals. */
#include "check.h"
#include "sleepacc_binding.h"

#include <math.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define PY SLEEPACC_BINDING_PYTHON
#define LUA SLEEPACC_BINDING_LUA

/* The fault of reading v as option name of sleepacc_options (or of list). */
static sleepacc_fault read_fault(const sleepacc_option *list, const char *name, sleepacc_value v) {
  sleepacc_config c;
  sleepacc_sleeper_config s;
  sleepacc_fault f;
  int64_t deadline = 0;
  void *base = list == sleepacc_options ? (void *)&c : list == sleepacc_sleeper_options ? (void *)&s
                                                                                         : (void *)&deadline;
  sleepacc_config_default(&c);
  CHECK(sleepacc_value_read(sleepacc_option_find(list, name), NULL, base, &v, &f) < 0);
  return f;
}

static sleepacc_value value(int kind, int64_t i, double d, const char *s) {
  sleepacc_value v;
  memset(&v, 0, sizeof v);
  v.kind = kind, v.i = i, v.d = d, v.s = s;
  return v;
}

/* The sentence of f for binding, checked against want (its length returned too). */
static void says(const sleepacc_fault *f, int binding, const sleepacc_value *v, const char *type,
                 const char *shown, const char *want) {
  char buf[SLEEPACC_FAULT_TEXT_MAX];
  int n = sleepacc_fault_text(f, binding, v, type, shown, buf, sizeof buf);
  CHECKF(n == (int)strlen(want) && !strcmp(buf, want), "got %d \"%s\", want \"%s\"", n, buf, want);
}

static void test_a_wrong_type_by_one_template(void) {
  sleepacc_value s = value(SLEEPACC_VALUE_TEXT, 1, 0.0, "1"), r = value(SLEEPACC_VALUE_REAL, 0, 2.5, NULL);
  sleepacc_fault f = read_fault(sleepacc_options, "duration", s);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && f.takes == SLEEPACC_OPT_SECONDS);
  says(&f, PY, &s, "str", "'1'", "duration: must be a number of seconds (int or float), got str");
  says(&f, LUA, &s, "string", "\"1\"", "duration: must be a number of seconds, got string");
  f = read_fault(sleepacc_options, "n", r); /* a number that is no integer */
  says(&f, PY, &r, "float", "2.5", "n: must be an int, got float");
  says(&f, LUA, &r, "number", "2.5", "n: must be an integer, got a fraction");
  says(&f, LUA, NULL, "number", NULL, "n: must be an integer, got number"); /* no value: its type */
  r.d = INFINITY; /* no fraction: it says which (Lua's tostring differs by version) */
  says(&f, LUA, &r, "number", "inf", "n: must be an integer, got inf");
  r.d = -INFINITY;
  says(&f, LUA, &r, "number", "-inf", "n: must be an integer, got -inf");
  r.d = NAN;
  says(&f, LUA, &r, "number", "-nan", "n: must be an integer, got nan");
  says(&f, PY, &r, "float", "nan", "n: must be an int, got float");
  r.d = 2.5;
  f = read_fault(sleepacc_options, "mode", r); /* not a whole-number option: the type name */
  says(&f, LUA, &r, "number", "2.5", "mode: must be a string, got number");
  says(&f, PY, &r, "float", "2.5", "mode: must be a str, got float");
  f = read_fault(sleepacc_options, "keep_samples", s);
  says(&f, LUA, &s, "string", NULL, "keep_samples: must be a boolean, got string");
  f = read_fault(sleepacc_sleeper_options, "quantile", s);
  says(&f, PY, &s, "str", NULL, "quantile: must be a number, got str");
  f = read_fault(sleepacc_deadline_option, "deadline_ns", r);
  says(&f, PY, &r, "float", NULL, "deadline_ns: must be an int (ns, as time.monotonic_ns()), got float");
  says(&f, LUA, &r, "number", NULL, "deadline_ns: must be an integer, got a fraction");
  f.takes = 99; /* a kind with no words */
  says(&f, PY, &r, "float", NULL, "deadline_ns: must be another value, got float");
}

static void test_a_broken_rule_with_the_value_shown(void) {
  sleepacc_value zero = value(SLEEPACC_VALUE_INT, 0, 0.0, NULL);
  sleepacc_value side = value(SLEEPACC_VALUE_TEXT, 8, 0.0, "sideways");
  sleepacc_fault f = read_fault(sleepacc_options, "n", zero);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && f.show);
  says(&f, PY, &zero, "int", "0", "n: must be >= 1, got 0");
  says(&f, LUA, &zero, "number", "0", "n: must be >= 1, got 0");
  zero = value(SLEEPACC_VALUE_REAL, 0, NAN, NULL);
  says(&f, LUA, &zero, "number", "-nan", "n: must be >= 1, got nan"); /* as the C library prints it: no sign */
  says(&f, LUA, NULL, "nil", NULL, "n: must be >= 1, got nil"); /* nothing shown: the type */
  zero = value(SLEEPACC_VALUE_BOOL, 1, 0.0, NULL); /* a boolean shown by the core, as Lua's tostring */
  says(&f, LUA, &zero, "boolean", NULL, "n: must be >= 1, got true");
  zero.i = 0;
  says(&f, LUA, &zero, "boolean", NULL, "n: must be >= 1, got false");
  says(&f, PY, &zero, "bool", NULL, "n: must be >= 1, got bool"); /* Python shows its own (repr) */
  f = read_fault(sleepacc_options, "mode", side);
  says(&f, PY, &side, "str", "'sideways'", "mode: must be 'relative' or 'periodic', got 'sideways'");
  says(&f, LUA, &side, "string", "\"sideways\"", "mode: must be 'relative' or 'periodic', got \"sideways\"");
  /* Lua's string shown by the core (was lua/helpers.c's): quoted, a NUL byte as \0, 60 bytes at most */
  says(&f, LUA, &side, "string", NULL, "mode: must be 'relative' or 'periodic', got \"sideways\"");
  side = value(SLEEPACC_VALUE_TEXT, 4, 0.0, "si\0d");
  says(&f, LUA, &side, "string", NULL, "mode: must be 'relative' or 'periodic', got \"si\\0d\"");
  side = value(SLEEPACC_VALUE_TEXT, 70, 0.0, "0123456789012345678901234567890123456789012345678901234567890123456789");
  says(&f, LUA, &side, "string", NULL,
       "mode: must be 'relative' or 'periodic', got \"012345678901234567890123456789012345678901234567890123456789\"");
  /* one line: a control byte, a quote and a backslash escaped as Lua writes them */
  side = value(SLEEPACC_VALUE_TEXT, 8, 0.0, "a\033[\n\"\\\tb");
  says(&f, LUA, &side, "string", NULL, "mode: must be 'relative' or 'periodic', got \"a\\027[\\n\\\"\\\\\\tb\"");
  says(&f, PY, &side, "str", NULL, "mode: must be 'relative' or 'periodic', got str"); /* Python: its repr() */
  f.show = 0; /* a sweep's plan: no value */
  says(&f, PY, &side, "str", "'sideways'", "mode: must be 'relative' or 'periodic'");
}

static void test_a_list_element_by_the_bindings_index(void) {
  sleepacc_value seven = value(SLEEPACC_VALUE_INT, 7, 0.0, NULL);
  sleepacc_fault f = read_fault(sleepacc_options, "method", seven);
  snprintf(f.option, sizeof f.option, "methods"), f.index = 1; /* as sleepacc_sweep_read names it */
  says(&f, PY, &seven, "int", "7", "methods[1]: must be a str, got int");
  says(&f, LUA, &seven, "number", "7", "methods[2]: must be a string, got number");
}

static void test_an_unknown_key(void) {
  sleepacc_fault f;
  memset(&f, 0, sizeof f);
  f.kind = SLEEPACC_FAULT_KEY, f.index = 2, f.show = 1;
  snprintf(f.option, sizeof f.option, "colour");
  snprintf(f.words, sizeof f.words, "method, duration");
  says(&f, PY, NULL, "str", NULL, "colour: unknown option; known: method, duration");
  says(&f, LUA, NULL, "string", NULL, "colour: unknown option; known: method, duration");
  f.show = 0; /* a key that is no string: its type */
  says(&f, PY, NULL, "int", NULL, "options: option names must be strings, got a key of type int");
  says(&f, LUA, NULL, "number", NULL, "options: option names must be strings, got a key of type number");
}

static void test_refusals_and_a_short_buffer(void) {
  sleepacc_value zero = value(SLEEPACC_VALUE_INT, 0, 0.0, NULL);
  sleepacc_fault f = read_fault(sleepacc_options, "n", zero), none;
  char buf[8];
  memset(&none, 0, sizeof none);
  CHECK(sleepacc_fault_text(&none, PY, NULL, "int", NULL, buf, sizeof buf) == -EINVAL && buf[0] == '\0');
  CHECK(sleepacc_fault_text(&f, 7, NULL, "int", NULL, buf, sizeof buf) == -EINVAL && buf[0] == '\0');
  CHECK(sleepacc_fault_text(NULL, PY, NULL, "int", NULL, buf, sizeof buf) == -EFAULT);
  CHECK(sleepacc_fault_text(&f, PY, NULL, "int", NULL, NULL, 8) == -EFAULT);
  /* cut to fit, terminated; the whole length returned */
  CHECK(sleepacc_fault_text(&f, PY, NULL, "int", "0", buf, sizeof buf) ==
        (int)strlen("n: must be >= 1, got 0"));
  CHECK(!strcmp(buf, "n: must"));
}

/* sleepacc_type_text, the template of a wrong type
 * for an argument that is no option; a TYPE fault's sentence is the same
 * template with the option kind's words. */
static void test_an_argument_by_the_same_template(void) {
  sleepacc_value s = value(SLEEPACC_VALUE_TEXT, 1, 0.0, "1");
  sleepacc_fault f = read_fault(sleepacc_options, "duration", s);
  char buf[SLEEPACC_FAULT_TEXT_MAX], typed[SLEEPACC_FAULT_TEXT_MAX], small[12];
  const char *want = "progress: must be a function, got number";
  CHECK(sleepacc_type_text("progress", "a function", "number", buf, sizeof buf) == (int)strlen(want));
  CHECKF(!strcmp(buf, want), "got \"%s\"", buf);
  CHECK(sleepacc_type_text("rows", "a sequence of mappings", "int", buf, sizeof buf) > 0);
  CHECKF(!strcmp(buf, "rows: must be a sequence of mappings, got int"), "got \"%s\"", buf);
  /* the TYPE sentence of a read's fault is this one, with the kind's words */
  sleepacc_fault_text(&f, LUA, &s, "string", "\"1\"", typed, sizeof typed);
  sleepacc_type_text("duration", "a number of seconds", "string", buf, sizeof buf);
  CHECKF(!strcmp(buf, typed), "got \"%s\", the fault's \"%s\"", buf, typed);
  /* NULL words: stand-ins; cut to fit, terminated, the whole length returned */
  CHECK(sleepacc_type_text(NULL, NULL, NULL, buf, sizeof buf) > 0);
  CHECKF(!strcmp(buf, "?: must be another value, got ?"), "got \"%s\"", buf);
  CHECK(sleepacc_type_text("options", "a table", "number", small, sizeof small) ==
        (int)strlen("options: must be a table, got number"));
  CHECK(!strcmp(small, "options: mu"));
  CHECK(sleepacc_type_text("x", "a table", "nil", NULL, 8) == -EFAULT);
  CHECK(sleepacc_type_text("x", "a table", "nil", small, 0) == -EFAULT);
}

/* sleepacc_text_option, the row of a string argument
 * that is no option: the string borrowed, a wrong type and a NUL byte
 * worded as a string option's. */
static void test_a_string_argument_by_the_text_row(void) {
  sleepacc_value ok = value(SLEEPACC_VALUE_TEXT, 4, 0.0, "wide");
  sleepacc_value num = value(SLEEPACC_VALUE_INT, 5, 0.0, NULL);
  sleepacc_value nul = value(SLEEPACC_VALUE_TEXT, 3, 0.0, "a\0b");
  const char *s = NULL;
  sleepacc_fault f;
  CHECK(sleepacc_value_read(sleepacc_text_option, "style", &s, &ok, &f) == 0 && s == ok.s);
  CHECK(sleepacc_value_read(sleepacc_text_option, "path", &s, &num, &f) == -EINVAL && s == ok.s);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && !strcmp(f.option, "path") && f.takes == SLEEPACC_OPT_NAME);
  says(&f, LUA, &num, "number", "5", "path: must be a string, got number");
  says(&f, PY, &num, "int", "5", "path: must be a str, got int");
  CHECK(sleepacc_value_read(sleepacc_text_option, "output", &s, NULL, &f) == -EINVAL); /* absent */
  says(&f, LUA, NULL, "nil", NULL, "output: must be a string, got nil");
  CHECK(sleepacc_value_read(sleepacc_text_option, "path", &s, &nul, &f) == -ERANGE && s == ok.s);
  says(&f, LUA, &nul, "string", "\"a\\0b\"", "path: must not contain a NUL byte, got \"a\\0b\"");
  /* a path is not empty (lo 1): named, not the OS's ENOENT of "" after the run */
  sleepacc_value empty = value(SLEEPACC_VALUE_TEXT, 0, 0.0, "");
  CHECK(sleepacc_value_read(sleepacc_text_option, "output", &s, &empty, &f) == -ERANGE && s == ok.s);
  says(&f, LUA, &empty, "string", "\"\"", "output: must not be empty, got \"\"");
  CHECK(sleepacc_text_option[1].name == NULL);
}

int main(void) {
  TEST(test_a_wrong_type_by_one_template);
  TEST(test_a_broken_rule_with_the_value_shown);
  TEST(test_a_list_element_by_the_bindings_index);
  TEST(test_an_unknown_key);
  TEST(test_refusals_and_a_short_buffer);
  TEST(test_an_argument_by_the_same_template);
  TEST(test_a_string_argument_by_the_text_row);
  return check_summary();
}

/*
 * words.c -- the sentences of the errors both bindings raise, composed once
 * by the core so Python and Lua word every fault alike.
 *
 * A read's fault (sleepacc_fault_text) follows one template, the shape of
 * the core's own rule words: "<option>: must be <what it takes>, got
 * <type>" for a wrong type, "<option>: <rule>, got <value>" for a broken
 * rule ("n: must be >= 1, got 0"), "<key>: unknown option; known: ..." for
 * a key that names no option.  A binding gives only what its language
 * knows (the value's type name, the value as the language shows it); the
 * table below has a column per binding of what each option kind takes and
 * of the index a list's first element has.  The same wrong-type template
 * (sleepacc_type_text) words an argument that is no option (a path, a
 * style, sa.sweep's progress, the results).
 *
 * Owns: sleepacc__fault_set (fill a fault), sleepacc__escaped (a text
 * shown in a message), sleepacc_fault_text, sleepacc_type_text,
 * sleepacc_text_words (the NUL-byte rule of every text), sleepacc_method_names,
 * sleepacc_config_words (the config check's words, the available methods
 * named), sleepacc_config_privileged and sleepacc_privilege_explain (what a
 * run refused for privileges needs).
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int sleepacc__fault_set(sleepacc_fault *f, int rc, int kind, const char *option, int64_t index, int takes,
                        int show, const char *words) {
  if (!f) return rc;
  f->kind = kind, f->index = index, f->takes = takes, f->show = show, f->depth = 0;
  snprintf(f->option, sizeof f->option, "%s", option ? option : "");
  snprintf(f->words, sizeof f->words, "%s", words ? words : "");
  return rc;
}

/* The len bytes of s (len < 0: strlen), at most max of them, as one line
 * of a message into out: a NUL byte as \0, a newline, tab or return as \n,
 * \t, \r, another control byte as \ddd (as Lua writes it), a quote and a
 * backslash escaped; in quotes when quote.  Cut to fit cap. */
void sleepacc__escaped(const char *s, int64_t len, int64_t max, int quote, char *out, size_t cap) {
  size_t k = 0;
  if (len < 0) len = (int64_t)strlen(s);
  if (quote && k + 1 < cap) out[k++] = '"';
  for (int64_t j = 0; j < len && j < max && k + 5 < cap; j++) {
    unsigned char c = (unsigned char)s[j];
    const char *e = c == 0 ? "\\0" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r"
                  : c == '"' ? "\\\"" : c == '\\' ? "\\\\" : NULL;
    if (e) k += (size_t)snprintf(out + k, cap - k, "%s", e);
    else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(out + k, cap - k, "\\%03u", c);
    else out[k++] = (char)c;
  }
  if (quote && k + 1 < cap) out[k++] = '"';
  out[k < cap ? k : cap - 1] = '\0';
}

const char *sleepacc_text_words(const char *s, size_t len) {
  return s && len && memchr(s, '\0', len) ? "must not contain a NUL byte" : NULL;
}

int sleepacc_config_words(const sleepacc_config *c, const char **field, char *buf, size_t cap) {
  const char *msg = NULL;
  int rc = sleepacc_config_explain(c, field, &msg), len;
  if (rc == 0 || !buf || !cap) return rc;
  len = snprintf(buf, cap, rc == -ENOSYS ? "%s; available methods: " : "%s", msg ? msg : "");
  if (rc == -ENOSYS && len > 0 && (size_t)len < cap) /* not available here: name those that are */
    sleepacc_method_names(buf + len, cap - (size_t)len);
  return rc;
}

void sleepacc_method_names(char *buf, size_t cap) {
  size_t len = 0;
  if (!buf || !cap) return;
  buf[0] = '\0';
  for (size_t i = 0; i < sleepacc_method_count() && len < cap; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (sleepacc_method_available(m))
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", m->name);
  }
}

const char *sleepacc_config_privileged(const sleepacc_config *c, char *buf, size_t cap) {
  if (!c || !buf || !cap) return NULL;
  snprintf(buf, cap, "%s%s%s", c->env.policy != SLEEPACC_POLICY_KEEP ? "policy " : "",
           c->env.lock_memory ? "lock_memory " : "", c->env.dma_latency_us >= 0 ? "dma_latency " : "");
  if (*buf) buf[strlen(buf) - 1] = '\0';
  return *buf ? buf : NULL;
}

/* The one explanation of a run refused for privileges, in the words the
 * Python API has always used, the values as the core holds them. */
const char *sleepacc_privilege_explain(const sleepacc_config *c, int err, char *buf, size_t cap) {
  size_t len = 0;
  if (err > 0) err = -err;
  if (!c || !buf || !cap || (err != -EPERM && err != -EACCES && !(err == -ENOMEM && c->env.lock_memory)))
    return NULL;
  buf[0] = '\0';
  if (c->env.policy != SLEEPACC_POLICY_KEEP)
    len += (size_t)snprintf(buf, cap, "policy='%s' (priority %d) needs CAP_SYS_NICE or an "
                            "RLIMIT_RTPRIO/RLIMIT_NICE allowance", sleepacc_policy_name(c->env.policy),
                            c->env.priority);
  if (c->env.lock_memory && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%slock_memory needs CAP_IPC_LOCK or a large "
                            "enough RLIMIT_MEMLOCK", len ? "; " : "");
  if (c->env.dma_latency_us >= 0 && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%sdma_latency=%d needs write access to "
                            "/dev/cpu_dma_latency (root)", len ? "; " : "", c->env.dma_latency_us);
  if (!len) snprintf(buf, cap, "the requested environment needs privileges");
  return buf;
}

/* One binding's words: what each option kind takes (a TYPE fault's "must
 * be ..."), its word for a number that is no integer where one is taken
 * (NULL: its type name says it), and the index of a list's first element. */
typedef struct binding_words {
  const char *takes[SLEEPACC_OPT_STYLE + 1];
  const char *fraction;
  int first;
} binding_words;

static const binding_words fault_words[] = {
    [SLEEPACC_BINDING_PYTHON] = {{
        [SLEEPACC_OPT_METHOD] = "a str", [SLEEPACC_OPT_SECONDS] = "a number of seconds (int or float)",
        [SLEEPACC_OPT_BUDGET] = "a number of seconds (int or float)", [SLEEPACC_OPT_INT64] = "an int",
        [SLEEPACC_OPT_INT] = "an int", [SLEEPACC_OPT_BOOL] = "a bool", [SLEEPACC_OPT_MODE] = "a str",
        [SLEEPACC_OPT_POLICY] = "a str", [SLEEPACC_OPT_NAME] = "a str", [SLEEPACC_OPT_NUMBER] = "a number",
        [SLEEPACC_OPT_METHODS] = "a list of method names", [SLEEPACC_OPT_DURATIONS] = "a list of seconds",
        [SLEEPACC_OPT_DEADLINE] = "an int (ns, as time.monotonic_ns())",
        [SLEEPACC_OPT_SLEEP] = "a number of seconds (int or float)",
        [SLEEPACC_OPT_RECORDS] = "a list of records", [SLEEPACC_OPT_RECORD] = "a record (a dict)",
        [SLEEPACC_OPT_STYLE] = "a str", [SLEEPACC_OPT_VALUES] = "a buffer of int64",
        [SLEEPACC_OPT_TABLE] = "a dict",
    }, NULL, 0},
    [SLEEPACC_BINDING_LUA] = {{
        [SLEEPACC_OPT_METHOD] = "a string", [SLEEPACC_OPT_SECONDS] = "a number of seconds",
        [SLEEPACC_OPT_BUDGET] = "a number of seconds", [SLEEPACC_OPT_INT64] = "an integer",
        [SLEEPACC_OPT_INT] = "an integer", [SLEEPACC_OPT_BOOL] = "a boolean",
        [SLEEPACC_OPT_MODE] = "a string", [SLEEPACC_OPT_POLICY] = "a string",
        [SLEEPACC_OPT_NAME] = "a string", [SLEEPACC_OPT_NUMBER] = "a number",
        [SLEEPACC_OPT_METHODS] = "an array of method names", [SLEEPACC_OPT_DURATIONS] = "an array of seconds",
        [SLEEPACC_OPT_DEADLINE] = "an integer", [SLEEPACC_OPT_SLEEP] = "a number of seconds",
        [SLEEPACC_OPT_RECORDS] = "an array of records", [SLEEPACC_OPT_RECORD] = "a record (a table)",
        [SLEEPACC_OPT_STYLE] = "a string", [SLEEPACC_OPT_VALUES] = "the samples of a run",
        [SLEEPACC_OPT_TABLE] = "a table",
    }, "a fraction", 1},
};

int sleepacc_fault_text(const sleepacc_fault *f, int binding, const sleepacc_value *v, const char *type,
                        const char *shown, char *buf, size_t cap) {
  const binding_words *w;
  const char *takes = "another value";
  char name[96 + SLEEPACC_GETTER_DEPTH * 56], quoted[4 * 60 + 3];
  size_t len = 0;
  int whole;
  if (!f || !buf || !cap) return -EFAULT;
  buf[0] = '\0';
  if (binding != SLEEPACC_BINDING_PYTHON && binding != SLEEPACC_BINDING_LUA) return -EINVAL;
  if (f->kind == SLEEPACC_FAULT_NONE) return -EINVAL;
  w = &fault_words[binding];
  if (!type) type = "?";
  if (f->kind == SLEEPACC_FAULT_KEY && !f->show)
    return snprintf(buf, cap, "options: option names must be strings, got a key of type %s", type);
  if (f->kind == SLEEPACC_FAULT_KEY)
    return snprintf(buf, cap, "%s: unknown option; known: %s", f->option, f->words);
  for (int d = 0; d < f->depth && d < SLEEPACC_GETTER_DEPTH; d++) /* the way: "results[2].stats." */
    len += (size_t)snprintf(name + len, sizeof name - len, f->at[d].index < 0 ? "%s." : "%s[%lld].",
                            f->at[d].name, (long long)f->at[d].index + w->first);
  snprintf(name + len, sizeof name - len, f->index < 0 ? "%s" : "%s[%lld]", f->option,
           (long long)f->index + w->first);
  if (f->kind == SLEEPACC_FAULT_RULE && !f->show) return snprintf(buf, cap, "%s: %s", name, f->words);
  if (f->kind == SLEEPACC_FAULT_RULE && !shown && binding == SLEEPACC_BINDING_LUA && v &&
      v->kind == SLEEPACC_VALUE_TEXT && v->s) { /* "its first 60 bytes", escaped */
    sleepacc__escaped(v->s, v->i > 0 ? v->i : -1, 60, 1, quoted, sizeof quoted);
    shown = quoted;
  }
  if (binding == SLEEPACC_BINDING_LUA && v && v->kind == SLEEPACC_VALUE_REAL && isnan(v->d))
    shown = "nan"; /* Lua's tostring: "-nan" or "nan", by the C library */
  if (binding == SLEEPACC_BINDING_LUA && !shown && v && v->kind == SLEEPACC_VALUE_BOOL)
    shown = v->i ? "true" : "false";
  if (f->kind == SLEEPACC_FAULT_RULE)
    return snprintf(buf, cap, "%s: %s, got %s", name, f->words, shown ? shown : type);
  whole = f->takes == SLEEPACC_OPT_INT64 || f->takes == SLEEPACC_OPT_INT ||
          f->takes == SLEEPACC_OPT_DEADLINE;
  if (whole && v && v->kind == SLEEPACC_VALUE_REAL && w->fraction) /* a whole kind: inf is no fraction */
    type = isfinite(v->d) ? w->fraction : isnan(v->d) ? "nan" : v->d > 0 ? "inf" : "-inf";
  if (f->takes >= 0 && f->takes <= SLEEPACC_OPT_STYLE && w->takes[f->takes]) takes = w->takes[f->takes];
  return sleepacc_type_text(name, takes, type, buf, cap);
}

int sleepacc_type_text(const char *name, const char *takes, const char *type, char *buf, size_t cap) {
  if (!buf || !cap) return -EFAULT;
  return snprintf(buf, cap, "%s: must be %s, got %s", name ? name : "?", takes ? takes : "another value",
                  type ? type : "?");
}

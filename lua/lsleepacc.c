/*
 * lsleepacc.c -- the Lua module `sleepacc` (API: lua/README.md): measure and
 * sweep read by the core (sleepacc_config_read, sleepacc_sweep_read), their
 * records by its field table (sleepacc_result_fields); the core's queries
 * (sleepacc_calls) behind one dispatcher; the precise handles: lsleeper.c.
 */
#include "binding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WRITER_MT "sleepacc.Writer"

/* ----------------------- Samples: a run's kept samples, a record's `samples` */

static sleepacc_lua_samples *self_samples(lua_State *L) {
  return (sleepacc_lua_samples *)sleepacc_lua_udata(L, 1, SLEEPACC_LUA_SAMPLES_MT, "self");
}

static int samples_totable(lua_State *L) {
  sleepacc_lua_samples *s = self_samples(L);
  lua_createtable(L, (int)s->len, 0);
  for (size_t i = 0; i < s->len; i++) {
    lua_pushinteger(L, (lua_Integer)s->data[i]);
    lua_rawseti(L, -2, (int)(i + 1));
  }
  return 1;
}

/* s[i] (1-based; nil outside 1..#s), s:totable() */
static int samples_index(lua_State *L) {
  sleepacc_lua_samples *s = self_samples(L);
  lua_Number i = lua_tonumber(L, 2); /* 0 for a non-number; the index is < 2^53 */
  if (lua_type(L, 2) == LUA_TNUMBER && i >= 1 && i <= (lua_Number)s->len && i == floor(i))
    lua_pushinteger(L, (lua_Integer)s->data[(size_t)i - 1]);
  else if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "totable") == 0)
    lua_pushcfunction(L, samples_totable);
  else
    lua_pushnil(L);
  return 1;
}

static int samples_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)self_samples(L)->len);
  return 1;
}

static int samples_tostring(lua_State *L) {
  lua_pushfstring(L, "sleepacc.Samples(%d ns values)", (int)self_samples(L)->len);
  return 1;
}

static int samples_gc(lua_State *L) {
  sleepacc_lua_samples *s = self_samples(L);
  free(s->data);
  s->data = NULL;
  s->len = 0;
  return 0;
}

/* A sweep's results file: after an error or a Ctrl-C the lines so far stay,
 * with no footer. */
static int writer_gc(lua_State *L) {
  sleepacc_writer_abort((sleepacc_writer *)sleepacc_lua_udata(L, 1, WRITER_MT, "self"));
  return 0;
}

static void run_finish(void *r) { sleepacc_run_finish((sleepacc_run *)r); }

/* Run the checked config c in the one block the core states
 * (sleepacc_run_memory): 1, its record pushed (with got: *got its samples,
 * *rec its record), or 3, nil, the core's words (sleepacc_run_words, flags
 * SLEEPACC_RUN_POINT: the point named), ENAME.  Ctrl-C finishes it, raises. */
static int sleepacc__run_one(lua_State *L, const sleepacc_config *c, int flags,
                             const sleepacc_lua_samples **got, sleepacc_result *rec) {
  char words[SLEEPACC_RUN_WORDS_MAX];
  sleepacc_result res;
  sleepacc_run *r = (sleepacc_run *)sleepacc_lua_newaligned(L, sizeof *r);
  sleepacc_lua_samples *s = (sleepacc_lua_samples *)lua_newuserdatauv(L, sizeof *s, 0);
  size_t size = sleepacc_run_memory(c, 0), used = 0;
  int rc;
  memset(s, 0, sizeof *s);
  luaL_getmetatable(L, SLEEPACC_LUA_SAMPLES_MT);
  lua_setmetatable(L, -2); /* from here its __gc frees the block */
  s->data = size ? (int64_t *)malloc(size) : NULL; /* NULL: open's -ENOMEM */
  if (sleepacc_run_open(r, c, s->data, size, 0) == 0) /* a chunk's failure ends the run, kept for close */
    sleepacc_lua_chunks(L, sleepacc_run_chunk, r, run_finish); /* Ctrl-C: finished, then raised */
  rc = sleepacc_run_close(r, &res, &used);
  s->len = used / sizeof *s->data;
  if (s->data) { /* the n samples at the front: give back the rest */
    int64_t *p = (int64_t *)realloc(s->data, used ? used : sizeof *p);
    if (p) s->data = p;
  }
  if (rc < 0) {
    sleepacc_run_words(r, flags, words, sizeof words);
    lua_pop(L, 2);
    lua_pushnil(L); /* as sleepacc_lua_pusherror: nil, "ENAME: message (...)", "ENAME" */
    lua_pushstring(L, words);
    lua_pushstring(L, sleepacc_errname(rc));
    return 3;
  }
  sleepacc_lua_push_fields(L, sleepacc_result_fields, &res, 0);
  if (c->keep_samples) { /* streamed: no samples key (Python's None) */
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "samples");
  }
  lua_replace(L, -3); /* the record replaces the run */
  lua_pop(L, 1);
  if (got) *got = s, *rec = res;
  return 1;
}

static int sleepacc__measure(lua_State *L) {
  sleepacc_lua_source src;
  sleepacc_getter g = sleepacc_lua_getter(L, &src, 1, NULL, 0);
  sleepacc_fault f;
  sleepacc_config c;
  int rc;
  if ((rc = sleepacc_config_read(&c, &g, 0, &f)) < 0) /* every option and rule is the core's */
    return sleepacc_lua_fault(&src, rc, &f, "measure");
  lua_settop(L, 1);
  return sleepacc__run_one(L, &c, 0, NULL, NULL);
}

/* sa.sweep{...}: the points of the core's plan, all read and checked before
 * anything runs (sleepacc_sweep_read), each run and its record kept (with
 * output=, on disk as it finishes). */
static int sleepacc__sweep(lua_State *L) {
  static const char *const own[] = {"progress", "output", NULL};
  const char *output = NULL;
  sleepacc_lua_source src;
  sleepacc_getter g;
  sleepacc_sweep_args a;
  sleepacc_fault fault;
  int total, out, err = 0;
  sleepacc_writer *w = NULL;
  if (lua_isnoneornil(L, 1)) lua_settop(L, 0), lua_newtable(L); /* sa.sweep(): the default sweep */
  lua_settop(L, 1);
  g = sleepacc_lua_getter(L, &src, 1, NULL, 0);
  g.own = own;
  if ((total = sleepacc_sweep_read(&a, &g, 1, &fault)) < 0)
    return sleepacc_lua_fault(&src, total, &fault, "sweep");
  lua_settop(L, 2); /* 2: the core's room, the plan */
  lua_pushliteral(L, "progress"), lua_rawget(L, 1); /* 3 (raw, as the core read it) */
  sleepacc_lua_must(L, lua_isnil(L, 3) || lua_type(L, 3) == LUA_TFUNCTION, 3, "progress", "a function");
  lua_pushliteral(L, "output"), lua_rawget(L, 1); /* 4, the writer 5 */
  if (!lua_isnil(L, 4)) {
    sleepacc_lua_value(L, 4, sleepacc_text_option, "output", &output);
    w = (sleepacc_writer *)lua_newuserdatauv(L, sizeof *w, 0); /* its __gc aborts it */
    err = sleepacc_writer_open(w, output, SLEEPACC_WRITE_SYNC | SLEEPACC_WRITE_KEEP, "lua", LUA_VERSION);
    luaL_getmetatable(L, WRITER_MT); /* no Lua error between the open and this */
    lua_setmetatable(L, -2);
    if (err == -EEXIST) /* a usage error, as the CLI's -o: the core's words of the refusal */
      luaL_error(L, "output: %s %s", output, sleepacc_strerror(err));
    if (err < 0) return sleepacc_lua_pusherror(L, err, output);
  }
  lua_createtable(L, total, 0); /* results */
  out = lua_gettop(L);
  for (int done = 1; done <= total; done++) {
    const sleepacc_lua_samples *s;
    sleepacc_result res;
    a.config.method = a.points[done - 1].method, a.config.duration_ns = a.points[done - 1].duration_ns;
    if (sleepacc__run_one(L, &a.config, SLEEPACC_RUN_POINT, &s, &res) != 1) return 3; /* nil, words, ENAME */
    if (w && (err = sleepacc_writer_point(w, &res, s->data, s->len)) < 0) /* on disk, then the next */
      return sleepacc_lua_pusherror(L, err, output);
    lua_rawseti(L, out, done);
    if (!lua_isnil(L, 3)) { /* progress(done, total, method, seconds) */
      lua_pushvalue(L, 3);
      lua_pushinteger(L, (lua_Integer)done);
      lua_pushinteger(L, (lua_Integer)total);
      lua_pushstring(L, a.config.method->name);
      lua_pushnumber(L, (lua_Number)a.config.duration_ns / 1e9);
      lua_call(L, 4, 0); /* no run is open here: errors simply propagate */
    }
  }
  if (w && (err = sleepacc_writer_close(w)) < 0) return sleepacc_lua_pusherror(L, err, output);
  lua_settop(L, out);
  return 1;
}

/* ------------------------------------------------------------ the core's queries */

/* The dispatcher of the core's call table (sleepacc_calls; the row is the
 * closure's upvalue): each argument by its option row (nil refused for a
 * required one, else the default; RECORDS read by the core through a
 * getter), the answer pushed as the row's shape says; an OS failure is
 * nil, err, ename. */
static int sleepacc__call(lua_State *L) {
  const sleepacc_call *c = (const sleepacc_call *)lua_touserdata(L, lua_upvalueindex(1));
  union { char bytes[256]; long double ld; void *p; } small; /* a small answer (now_ns) makes no garbage */
  const char *take[2] = {NULL, NULL};
  sleepacc_lua_source src;
  sleepacc_call_args a;
  sleepacc_answer ans;
  sleepacc_getter g;
  void *buf;
  int rc;
  memset(&a, 0, sizeof a);
  a.writer = "lua", a.writer_version = LUA_VERSION; /* who calls (a results file's header) */
  for (int i = 0; c->args && c->args[i].name; i++) {
    int arg = i + 1;
    if (c->args[i].kind == SLEEPACC_OPT_RECORDS || c->args[i].kind == SLEEPACC_OPT_TABLE) { /* read by the core */
      take[0] = c->args[i].name; /* RECORDS: over the one argument; TABLE: over its keys */
      g = c->args[i].kind == SLEEPACC_OPT_TABLE ? sleepacc_lua_getter(L, &src, arg, NULL, 0)
                                                : sleepacc_lua_getter(L, &src, 0, take, arg);
      a.options = &g, a.room = g.room, a.ctx = g.ctx;
    } else if (i < c->required || !lua_isnoneornil(L, arg)) {
      sleepacc_lua_value(L, arg, &c->args[i], NULL, &a);
    }
  }
  buf = c->size <= sizeof small ? (void *)&small : sleepacc_lua_newaligned(L, c->size);
  if ((rc = sleepacc_call_run(c, &a, buf, &ans)) < 0 && a.options) /* an OS failure names the context */
    return sleepacc_lua_fault(&src, rc, &ans.fault, ans.context ? ans.context : c->what);
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, NULL);
  if (!sleepacc_lua_push_fields(L, ans.fields, ans.base, c->shape == SLEEPACC_CALL_VALUE)) lua_pushnil(L);
  return 1;
}

/* The Lua rows of the call table into the module table on top: a closure
 * of sleepacc__call each, or a MODULE row's fields set on the module. */
static void sleepacc__open_calls(lua_State *L) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++) {
    sleepacc_answer ans;
    if (c->lua && c->shape == SLEEPACC_CALL_MODULE) {
      if (sleepacc_call_run(c, NULL, sleepacc_lua_newaligned(L, c->size), &ans) < 0)
        luaL_error(L, "%s failed", c->what); /* the constants cannot: never a module without them */
      for (const sleepacc_field *f = ans.fields; f->name; f++)
        if (sleepacc_lua_push_fields(L, f, ans.base, 1)) lua_setfield(L, -3, f->name);
      lua_pop(L, 1); /* the buffer */
    } else if (c->lua) {
      lua_pushlightuserdata(L, (void *)(uintptr_t)c);
      lua_pushcclosure(L, sleepacc__call, 1);
      lua_setfield(L, -2, c->lua);
    }
  }
}

static const luaL_Reg sleepacc__funcs[] = {
    {"measure", sleepacc__measure}, {"sweep", sleepacc__sweep}, {NULL, NULL}};

static const luaL_Reg samples_meta[] = {
    {"__index", samples_index}, {"__len", samples_len}, {"__tostring", samples_tostring},
    {"__gc", samples_gc},       {NULL, NULL}};
static const luaL_Reg writer_meta[] = {{"__gc", writer_gc}, {NULL, NULL}};

int luaopen_sleepacc(lua_State *L) {
  sleepacc_lua_mainthread(L); /* 5.1: remembered, when opened on it */
  if (luaL_newmetatable(L, SLEEPACC_LUA_SAMPLES_MT)) luaL_setfuncs(L, samples_meta, 0);
  lua_pop(L, 1);
  if (luaL_newmetatable(L, WRITER_MT)) luaL_setfuncs(L, writer_meta, 0);
  lua_pop(L, 1);
  lua_newtable(L);
  luaL_setfuncs(L, sleepacc__funcs, 0);
  sleepacc__open_calls(L);
  sleepacc_lua_open_precise(L);
  return 1;
}

-- test_trace.lua -- sa.trace{...}: each sample's lateness in its parts from
-- the kernel's events (Linux tracefs; root or CAP_DAC_OVERRIDE, skipped with
-- the reason elsewhere).  Invariants only: a table of arrays, one element
-- per sample; a complete sample's six terms sum exactly to its lateness
-- (relative and periodic mode); a missing term (NaN) only on an incomplete
-- one; the thread as found; bad options refused naming the option.
local sa = require "sleepacc"
local T = require "helpers"

local TERMS = {"rounding", "slack", "timer_irq", "wake_to_run", "to_user", "other"}

local tests = {}
local function test(name, fn) tests[#tests + 1] = {name, fn} end

local reason
local function traced(opts)
  if reason then T.skip(reason) end
  local t, err = sa.trace(opts)
  if not t then
    reason = "trace unavailable here: " .. tostring(err)
    T.skip(reason)
  end
  return t
end

local function check_sums(t, what)
  T.eq(#t.lateness, t.n, what .. ": #lateness")
  T.eq(#t.complete, t.n, what .. ": #complete")
  T.eq(#t.idle, t.n, what .. ": #idle")
  local complete = 0
  for i = 1, t.n do
    local sum = 0
    for _, name in ipairs(TERMS) do
      local v = t.terms[name][i]
      T.check(v ~= nil, "%s: terms.%s[%d] absent", what, name, i)
      if t.complete[i] then
        T.check(v == v, "%s: terms.%s[%d] NaN on a complete sample", what, name, i)
        sum = sum + v
      else
        T.check(v ~= v, "%s: terms.%s[%d] given on an incomplete sample", what, name, i)
      end
    end
    if t.complete[i] then
      complete = complete + 1
      T.check(sum == t.lateness[i], "%s sample %d: terms sum %s ~= lateness %s", what, i, tostring(sum),
              tostring(t.lateness[i]))
    else
      T.eq(t.idle[i], -1, what .. ": idle of an incomplete sample")
    end
  end
  T.eq(complete + t.gaps, t.n, what .. ": complete + gaps")
  T.check(complete > 0, "%s: no complete sample", what)
end

test("a table of arrays whose terms sum to the lateness", function()
  local before = T.state()
  local t = traced{method = "nanosleep", duration = 1e-3, n = 30, slack = 1}
  T.eq(t.schema, "sleepacc-trace/1", "schema")
  T.eq(t.method, "nanosleep", "method")
  T.eq(t.n, 30, "n")
  T.eq(#t.untraced, 30, "#untraced")
  check_sums(t, "nanosleep")
  T.eq(T.state(), before, "thread state")
end)

test("periodic mode: wake - deadline in parts", function()
  local t = traced{method = "clock_nanosleep_abs", duration = 1e-3, n = 30, mode = "periodic"}
  T.eq(t.mode, "periodic", "mode")
  check_sums(t, "clock_nanosleep_abs periodic")
end)

test("bad options refused naming them (before tracefs is touched: also unprivileged)", function()
  T.raises_naming("n", sa.trace, {method = "nanosleep", duration = 1e-3, n = 30000})
  T.raises_naming("method", sa.trace, {method = "no_such_method", duration = 1e-3, n = 3})
  T.raises_naming("slack", sa.trace, {method = "nanosleep", duration = 1e-3, n = 3, slack = 0})
  T.raises_naming("options", sa.trace, "nanosleep")
end)

return tests

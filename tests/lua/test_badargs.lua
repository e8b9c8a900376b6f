-- test_badargs.lua -- every bad call raises, and the message names the
-- argument ("<field>: <message>"); nothing runs, nothing changes.
local sa = require "sleepacc"
local T = require "helpers"

local nan = 0 / 0
local ok_m = {method = "nanosleep", duration = 1e-4, n = 1}
-- ok_m plus/minus fields (a field set to the string "<nil>" is removed)
local function with(extra)
  local t = {}
  for k, v in pairs(ok_m) do t[k] = v end
  for k, v in pairs(extra) do if v == "<nil>" then t[k] = nil else t[k] = v end end
  return t
end

-- {argument named, function, args...}
local cases = {
  {"options", sa.measure},
  {"options", sa.measure, "nanosleep"},
  {"options", sa.measure, 42},
  {"options", sa.measure, {[1] = "nanosleep"}},
  {"method", sa.measure, with{method = "<nil>"}},
  {"method", sa.measure, with{method = "bogus"}},
  {"method", sa.measure, with{method = 42}},
  {"method", sa.measure, with{method = true}},
  {"duration", sa.measure, with{duration = "<nil>"}},
  {"duration", sa.measure, with{duration = -1}},
  {"duration", sa.measure, with{duration = -1e-9}},
  {"duration", sa.measure, with{duration = nan}},
  {"duration", sa.measure, with{duration = math.huge}},
  {"duration", sa.measure, with{duration = -math.huge}},
  {"duration", sa.measure, with{duration = 86401}},
  {"duration", sa.measure, with{duration = 1e300}},
  {"duration", sa.measure, with{duration = T.minint}},
  {"duration", sa.measure, with{duration = "0.001"}},
  {"duration", sa.measure, with{duration = true}},
  {"duration", sa.measure, with{duration = {}}},
  {"duration", sa.measure, with{duration = 0, mode = "periodic"}},
  {"n", sa.measure, with{n = 0}},
  {"n", sa.measure, with{n = -5}},
  {"n", sa.measure, with{n = 2.5}},
  {"n", sa.measure, with{n = "10"}},
  {"n", sa.measure, with{n = nan}},
  {"n", sa.measure, with{n = "<nil>", budget = false}},
  {"budget", sa.measure, with{budget = 0}},
  {"budget", sa.measure, with{budget = -1}},
  {"budget", sa.measure, with{budget = nan}},
  {"budget", sa.measure, with{budget = math.huge}},
  {"budget", sa.measure, with{budget = "1"}},
  {"budget", sa.measure, with{budget = true}},
  {"mode", sa.measure, with{mode = "sideways"}},
  {"mode", sa.measure, with{mode = 1}},
  {"warmup", sa.measure, with{warmup = -1}},
  {"warmup", sa.measure, with{warmup = 0.5}},
  {"keep_samples", sa.measure, with{keep_samples = "yes"}},
  {"keep_samples", sa.measure, with{keep_samples = 1}},
  {"margin", sa.measure, with{method = "hybrid", margin = -1e-6}},
  {"slack", sa.measure, with{slack = 0}},
  {"slack", sa.measure, with{slack = -1}},
  {"slack", sa.measure, with{slack = "50us"}},
  {"slack", sa.measure, with{slack = 1e-6}},
  {"slack", sa.measure, with{slack = 1e20}},
  {"slack", sa.measure, with{slack = 1000000001}},
  {"policy", sa.measure, with{policy = "bogus"}},
  {"policy", sa.measure, with{policy = 3}},
  {"priority", sa.measure, with{policy = "fifo", priority = 500}},
  {"priority", sa.measure, with{policy = "other", priority = 5}},
  {"priority", sa.measure, with{priority = 1.5}},
  {"budget", sa.measure, with{method = "spin", policy = "fifo", budget = false, n = 10}},
  {"cpu", sa.measure, with{cpu = 100000}},
  {"cpu", sa.measure, with{cpu = 1000}},
  {"cpu", sa.measure, with{cpu = -1}},
  {"cpu", sa.measure, with{cpu = "0"}},
  {"lock_memory", sa.measure, with{lock_memory = "no"}},
  {"dma_latency", sa.measure, with{dma_latency = -1}},
  {"dma_latency", sa.measure, with{dma_latency = 1.5}},
  {"dma_latency", sa.measure, with{dma_latency = "0"}},
  {"durration", sa.measure, with{durration = 1}},
  {"options", sa.measure, with{[1] = 5}},
  {"options", sa.sweep, 42},
  {"methods", sa.sweep, {methods = "spin"}},
  {"methods", sa.sweep, {methods = {}}},
  {"methods[2]", sa.sweep, {methods = {"spin", "bogus"}}},
  {"methods[1]", sa.sweep, {methods = {7}}},
  {"margin", sa.sweep, {methods = {"spin", "nanosleep"}, margin = 1e-4}},   -- no hybrid to spend it
  {"durations", sa.sweep, {durations = 1e-3}},
  {"durations", sa.sweep, {durations = {}}},
  {"durations[2]", sa.sweep, {durations = {0, -1}}},
  {"durations[1]", sa.sweep, {durations = {nan}}},
  {"progress", sa.sweep, {methods = {"spin"}, durations = {0}, progress = 42}},
  {"budget", sa.sweep, {methods = {"spin"}, durations = {0}, budget = -1}},
  {"mode", sa.sweep, {methods = {"spin"}, durations = {0}, mode = "bogus"}},
  {"results", sa.table, 42},
  {"results", sa.table},
  {"results[1]", sa.table, {42}},
  {"results[1].mode", sa.table, {{method = "x", requested_ns = 1}}},
  {"results.mode", sa.table, {method = "x", requested_ns = 1, samples = 5}},
  {"results[1].stats", sa.table, {{method = "x", requested_ns = 1, mode = "relative", stats = 5}}},
  {"style", sa.table, {}, "fancy"},
  {"style", sa.table, {}, 1},
}

local tests = {
  {"at least 20 bad calls in the table", function()
    T.check(#cases >= 20, "only %d cases", #cases)
  end},
}
for i, c in ipairs(cases) do
  tests[#tests + 1] = {string.format("bad call %d names '%s'", i, c[1]), function()
    local before = T.state()
    T.raises_naming(c[1], T.unpack(c, 2))
    T.eq(T.state(), before, "thread state")
  end}
end
tests[#tests + 1] = {"an unknown method's message lists the available names", function()
  local err = T.raises_naming("method", sa.measure, with{method = "bogus"})
  T.check(err:find("nanosleep", 1, true) and err:find("spin", 1, true), "no list: %s", err)
end}
tests[#tests + 1] = {"a cpu outside the allowed set says which are allowed", function()
  local err = T.raises_naming("cpu", sa.measure, with{cpu = 1000})
  T.check(err:find("allowed", 1, true), "%s", err)
end}

-- One option's value by the core's one rule:
-- its words, then ", got <value>"; a wrong kind says what the option takes,
-- in the core's one template ("<option>: must be <what it
-- takes>, got <type>", Python's; it was "<option>: <takes> expected, got <type>").
-- {call, options, the error's start (plain text)}
local words = {
  {sa.measure, with{cpu = 2 ^ 31}, "cpu: must be <= 2147483647, got 2147483648"},
  {sa.measure, with{cpu = 2 ^ 40}, "cpu: must be <= 2147483647, got 1099511627776"},
  {sa.measure, with{cpu = -1}, "cpu: must be >= 0, got -1"},
  {sa.measure, with{n = 2.5}, "n: must be an integer, got a fraction"},
  {sa.measure, with{n = 0}, "n: must be >= 1, got 0"},
  {sa.measure, with{warmup = "1"}, "warmup: must be an integer, got string"},
  {sa.measure, with{mode = "sideways"}, "mode: must be 'relative' or 'periodic', got \"sideways\""},
  {sa.measure, with{mode = 1}, "mode: must be a string, got number"},
  -- words: the core's NUL rule, Python's words (was "mode: holds a NUL byte")
  {sa.measure, with{mode = "relative\0"}, "mode: must not contain a NUL byte, got \"relative\\0\""},
  {sa.measure, with{policy = "bogus"},
   "policy: must be one of 'other', 'batch', 'idle', 'fifo', 'rr', got \"bogus\""},
  {sa.measure, with{method = "bogus"}, "method: must be an available method (select, "},
  {sa.measure, with{method = "<nil>"}, "method: must be a string, got nil"},
  {sa.measure, with{duration = "<nil>"}, "duration: must be a number of seconds, got nil"},
  {sa.measure, with{duration = -1}, "duration: must be non-negative, got -1"},
  {sa.measure, with{duration = 86401}, "duration: must be at most 86400 s (one day), got 86401"},
  {sa.measure, with{duration = nan}, "duration: must be finite, got "},
  {sa.measure, with{budget = 0}, "budget: must be positive (or none: only n stops the run), got 0"},
  {sa.measure, with{budget = -1}, "budget: must be positive (or none: only n stops the run), got -1"},
  {sa.measure, with{margin = 1e-4},   -- nanosleep: no margin to spin (it was ignored)
   "margin: only the hybrid family has a margin, and no method measured here is one, got 0.0001"},
  {sa.measure, with{budget = true}, "budget: must be a number of seconds, got boolean"},
  {sa.measure, with{keep_samples = 1}, "keep_samples: must be a boolean, got number"},
  {sa.measure, with{slack = 1e-6}, "slack: must be an integer, got a fraction"},
  -- words: an integral number beyond int64 is out of range, as in Python (it was
  -- "integer expected, got a fraction"); a rule with a range words it first
  {sa.measure, with{warmup = 2 ^ 70}, "warmup: must be <= 9223372036854775807, got 1.1805916207174e+21"},
  {sa.measure, with{n = 10, warmup = -2 ^ 70}, "warmup: must be >= 0, got -1.1805916207174e+21"},
  {sa.measure, with{slack = 2 ^ 64}, "slack: must be 1 ns .. 1 s (or left as it is), got 1.844674407371e+19"},
  -- n + warmup beyond int64 blames the larger one: a huge warmup named n, even a sweep's n not given
  {sa.measure, with{n = 2000, warmup = 2 ^ 63 - 1024}, "warmup: must be <= 9223372036854775807 - n, got "},
  {sa.sweep, {methods = {"clock"}, durations = {0}, budget = 0.01, warmup = 2 ^ 63 - 1024},
   "warmup: must be <= 9223372036854775807 - n, got "},
  {sa.sweep, {methods = {"spin", "bogus"}}, "methods[2]: must be an available method ("},
  {sa.sweep, {methods = {7}}, "methods[1]: must be a string, got number"},
  -- a rule of the whole run, or of a sweep's plan: the core's words (its reader's fault)
  {sa.measure, with{duration = 0, mode = "periodic"},
   "duration: must be > 0 in periodic mode (it is the period), got 0"},
  {sa.measure, with{n = "<nil>", budget = false},
   "n: is required when there is no budget (nothing would stop the run), got nil"},
  {sa.sweep, {methods = {"nanosleep", "clock"}, durations = {1e-3}, mode = "periodic"},
   "methods[2]: 'clock' is a floor (family 'baseline', measured at duration 0 only): " ..
   "periodic mode cannot measure it"},
  {sa.sweep, {durations = {0, -1}}, "durations[2]: must be non-negative, got -1"},
  {sa.sweep, {durations = {0, "1"}}, "durations[2]: must be a number of seconds, got string"},
  -- a list given but empty: the core's sweep rule (nil is the default list)
  {sa.sweep, {methods = {}}, "methods: must not be empty"},
  {sa.sweep, {durations = {}}, "durations: must not be empty"},
  {sa.sweep, {methods = "spin"}, "methods: must be an array of method names, got string"},
  {sa.sweep, {durations = 1e-3}, "durations: must be an array of seconds, got number"},
}
tests[#tests + 1] = {"one option's value: the core's rule and words, then the value", function()
  for _, w in ipairs(words) do
    local ok, err = pcall(w[1], w[2])
    err = tostring(err)
    T.check(not ok and err:sub(1, #w[3]) == w[3], "expected %q..., got %s", w[3], err)
  end
  -- the unknown method's list ends the rule, the value follows it
  local err = T.raises_naming("method", sa.measure, with{method = "bogus"})
  T.check(err:sub(-#"), got \"bogus\"") == "), got \"bogus\"", "%s", err)
end}
-- An argument that is no option reads by the same template (the core's
-- sleepacc_type_text; it was "<arg>: <takes> expected, got <type>", "results[2]: record of
-- measure or sweep expected"; sa.table's and sa.save's records are read by the core since
-- records: "results[2]: must be a record of measure or sweep" -> "results[2]: must be a
-- record (a table)", and a record without a key names it, "results[1].mode: ...").
-- {the whole error, function, args...}
local args = {
  {"options: must be a table, got number", sa.measure, 42},
  {"options: must be a table, got no value", sa.measure},
  {"options: must be a table, got string", sa.pacer, 0.001, "skip"},
  {"progress: must be a function, got number", sa.sweep,
   {methods = {"clock"}, durations = {0}, progress = 5}},
  {"output: must be a string, got number", sa.sweep, {methods = {"clock"}, durations = {0}, output = 5}},
  {"results: must be an array of records, got number", sa.save, 42, "unused.jsonl"},
  {"results[1].mode: must be a string, got nil", sa.save, {{method = "x"}}, "unused.jsonl"},
  {"results[2]: must be a record (a table), got number", sa.table,
   {assert(sa.measure{method = "clock", duration = 0, n = 1}), 7}},
  {"path: must be a string, got number", sa.save, {}, 42},
  {"path: must not contain a NUL byte, got \"a\\0b\"", sa.save, {}, "a\0b"},
  -- an empty path: named before anything runs (it was 'ENOENT: no such file, directory or method ()')
  {"path: must not be empty, got \"\"", sa.save, {}, ""},
  {"output: must not be empty, got \"\"", sa.sweep, {methods = {"clock"}, durations = {0}, output = ""}},
  {"style: must be a string, got boolean", sa.table, {}, true},
}
tests[#tests + 1] = {"an argument that is no option: the one template, the whole error", function()
  for _, a in ipairs(args) do
    local ok, err = pcall(T.unpack(a, 2))
    T.check(not ok and err == a[1], "want %q, got %s", a[1], tostring(err))
  end
end}
tests[#tests + 1] = {"cpu: the largest int passes the option's rule (the allowed set refuses it)", function()
  local err = T.raises_naming("cpu", sa.measure, with{cpu = 2 ^ 31 - 1})
  T.check(err:find("allowed", 1, true), "%s", err)
end}
tests[#tests + 1] = {"budget=false (no budget) with n still runs, n stopping it", function()
  local r = assert(sa.measure(with{method = "clock", duration = 0, n = 3, budget = false}))
  T.eq(r.n, 3, "n")
end}
tests[#tests + 1] = {"style: the core's one rule and words, as Python's", function()
  -- was: style: unknown style "fancy"; known: irtt, wide
  local ok, err = pcall(sa.table, {}, "fancy")
  T.check(not ok and tostring(err):find("style: must be 'irtt' or 'wide', got \"fancy\"", 1, true), "%s",
          tostring(err))
end}
return tests

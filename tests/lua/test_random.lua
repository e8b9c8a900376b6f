-- test_random.lua -- a seeded random table of calls (durations, types and
-- keywords, good and bad).  The only outcomes allowed are a documented
-- error (a raise naming one of the fields passed, or nil, "ENAME: ...",
-- "ENAME") or a valid result; never a crash, a hang past the budget, or a
-- changed thread.
local sa = require "sleepacc"
local T = require "helpers"

local SEED = tonumber(os.getenv("SLEEPACC_LUA_SEED") or "") or 20261201
local CALLS = T.valgrind and 60 or 150
local nan = 0 / 0

-- per field: values that are valid, and values that are not (or may not be)
local valid = {
  method = {"nanosleep", "clock_nanosleep_abs", "poll", "spin", "hybrid", "clock", "timerfd",
            "sched_yield", "select", "futex"},
  duration = {0, 1e-9, 1e-6, 1e-5, 2e-4, 1e-3, 3},
  n = {1, 3, 17, 5.0},
  budget = {0.01, 0.02, 0.003},
  mode = {"relative", "periodic"},
  warmup = {0, 1, 2},
  keep_samples = {true, false},
  margin = {0, 1e-5},
  slack = {1000, 50000, 1, 1.0e3},
  policy = {"other", "batch", "idle"},
  cpu = {0},
  lock_memory = {false},
}
local bad = {
  method = {"bogus", 42, false, ""},
  duration = {-1, -1e-9, nan, math.huge, -math.huge, 86401, 1e300, "1e-3", true, {}, T.maxint},
  n = {0, -3, 2.5, "5", nan, 1e300, false},
  budget = {0, -1, nan, math.huge, "x", true, 1e6},
  mode = {"bogus", 1, ""},
  warmup = {-1, 1.5, "1"},
  keep_samples = {"yes", 0},
  margin = {-1, nan, "x"},
  slack = {0, -1, nan, "x", 1e-6, 1e20},
  policy = {"bogus", 1},
  cpu = {9999, -1, 0.5, "0"},
  lock_memory = {"no"},
  durration = {1},
  [1] = {"positional"},
}
local order = {"method", "duration", "n", "budget", "mode", "warmup", "keep_samples", "margin",
               "slack", "policy", "cpu", "lock_memory", "durration", 1}
-- probability that an optional field is present in the valid base call
local present = {n = 0.6, mode = 0.3, warmup = 0.3, keep_samples = 0.3, margin = 0.15,
                 slack = 0.25, policy = 0.15, cpu = 0.15, lock_memory = 0.05}

local function pick(list) return list[math.random(#list)] end

-- A valid call, then 0..2 fields replaced by bad values or removed.
-- Returns the options and the set of fields changed.
local function random_call()
  local opts = {method = pick(valid.method), duration = pick(valid.duration), budget = pick(valid.budget)}
  for _, k in ipairs(order) do -- a fixed order (pairs() order varies run to run)
    if present[k] and math.random() < present[k] then opts[k] = pick(valid[k]) end
  end
  local mutated = {}
  for _ = 1, math.random(0, 2) do
    local k = order[math.random(#order)]
    if math.random() < 0.15 and (k == "method" or k == "duration") then
      opts[k] = nil
    else
      opts[k] = pick(bad[k])
    end
    mutated[k == 1 and "options" or k] = true
  end
  return opts, mutated
end

local function describe(opts)
  local parts = {}
  for _, k in ipairs(order) do
    if opts[k] ~= nil then parts[#parts + 1] = tostring(k) .. "=" .. tostring(opts[k]) end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

return {
  {string.format("seeded random calls (seed %d)", SEED), function()
    math.randomseed(SEED)
    local before = T.state()
    local outcomes = {ok = 0, raised = 0, returned = 0}
    for i = 1, CALLS do
      local opts, mutated = random_call()
      -- keep valid runs short: long durations only with a small n
      if type(opts.duration) == "number" and opts.duration >= 1 and opts.duration <= 86400 then
        opts.n, opts.budget, opts.mode = 1, 0.01, "relative"
        opts.method = "clock" -- the harness floor: requested 3 s, returns at once
      end
      local t0 = sa.now_ns()
      local ok, r, msg, name = pcall(sa.measure, opts)
      local took = (sa.now_ns() - t0) / 1e9
      local what = string.format("call %d %s", i, describe(opts))
      local changed = {}
      for k in pairs(mutated) do changed[#changed + 1] = k end
      table.sort(changed)
      what = what .. " changed: " .. table.concat(changed, ",")
      if not ok then
        local field = T.named(r)
        T.check(field, "%s: undocumented error: %s", what, tostring(r))
        -- it names a field that was changed to a bad value (or removed), or
        -- the period of a periodic run that was given 0, the floor clock in
        -- periodic mode, a margin given to a method that is not hybrid, or
        -- n when budget=false left only n to stop the run
        T.check(mutated[field] or (field == "duration" and opts.mode == "periodic" and opts.duration == 0)
          or (field == "method" and opts.mode == "periodic" and opts.method == "clock")
          or (field == "margin" and opts.method ~= "hybrid")
          or (field == "n" and opts.budget == false),
          "%s: error names '%s', which was not made bad: %s", what, field, tostring(r))
        outcomes.raised = outcomes.raised + 1
      elseif r == nil then
        T.check(type(msg) == "string" and type(name) == "string" and name:match("^E%u+$")
          and msg:sub(1, #name + 1) == name .. ":", "%s: bad error return %s %s", what, tostring(msg), tostring(name))
        outcomes.returned = outcomes.returned + 1
      else
        T.check(type(r) == "table" and r.method == opts.method, "%s: bad result", what)
        if r.n > 0 then T.ordered(r.stats, what) end
        if opts.keep_samples ~= false then T.eq(#r.samples, r.n, what .. " #samples") end
        if T.isint(opts.n) then
          T.check(r.n <= opts.n, "%s: %d samples > n", what, r.n)
        end
        outcomes.ok = outcomes.ok + 1
      end
      -- never a hang: bounded by the budget (1 s by default) plus one sleep
      T.check(took < (T.valgrind and 20 or 5), "%s: took %.2f s", what, took)
      T.eq(T.state(), before, what .. ": thread state")
    end
    print(string.format("  random calls: %d valid results, %d raised, %d returned errors",
      outcomes.ok, outcomes.raised, outcomes.returned))
    T.check(outcomes.ok > 0 and outcomes.raised > 0, "the table exercised only one outcome")
  end},
}

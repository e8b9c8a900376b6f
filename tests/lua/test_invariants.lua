-- test_invariants.lua -- what the instrument promises, as invariants (never
-- tight timings: the machine is shared and noisy).
local sa = require "sleepacc"
local T = require "helpers"

local function run_all(mode, durations)
  for _, m in ipairs(T.available()) do
    for _, d in ipairs(durations) do
      local opts = {method = m.name, duration = d, n = 5, warmup = 1, budget = 0.5, mode = mode}
      if mode == "periodic" and m.family == "baseline" then
        -- a floor ignores the request: periodic mode cannot measure it (the core's rule)
        local err = T.raises_naming("method", sa.measure, opts)
        T.check(err:find("is a floor", 1, true), "%s periodic: %s", m.name, err)
      else
        local before = T.slack()
        local r, msg = sa.measure(opts)
        T.check(r, "%s %s %g: %s", m.name, mode, d, tostring(msg))
        T.eq(T.slack(), before, m.name .. ": slack after the run")
        T.check(r.n >= 1, "%s %g: no sample", m.name, d)
        T.ordered(r.stats, m.name)
        local want = T.rounded(math.floor(d * 1e9 + 0.5), m.granularity_ns)
        if mode == "relative" and m.family ~= "baseline" then
          -- a sleep never ends early (after the method's own rounding)
          T.check(r.stats.min >= want, "%s woke early: min %d ns < requested %d ns", m.name, r.stats.min, want)
          T.eq(r.stats.undersleeps, 0, m.name .. " undersleeps")
        elseif mode == "periodic" and m.family ~= "baseline" then
          -- periodic lateness is never negative
          T.check(r.stats.min >= 0, "%s periodic: lateness %d ns < 0", m.name, r.stats.min)
        end
      end
    end
  end
end

return {
  {"every available method runs at 0, 1 us, 1 ms; none wakes early", function()
    run_all("relative", {0, 1e-6, 1e-3})
  end},

  {"every available method runs periodic at 100 us; lateness >= 0", function()
    run_all("periodic", {1e-4})
  end},

  {"unavailable methods are refused naming 'method'", function()
    local found = 0
    for _, m in ipairs(sa.methods()) do
      if not m.available then
        found = found + 1
        local err = T.raises_naming("method", sa.measure, {method = m.name, duration = 0, n = 1})
        T.check(err:find("not available", 1, true), "message: %s", err)
      end
    end
    if found == 0 then T.skip("every registered method is available on this host") end
  end},

  {"a 0.2 s budget stops after >= 0.2 s and well under 1 s", function()
    for _, case in ipairs{{"nanosleep", 1e-3, true}, {"spin", 1e-3, true}, {"clock", 0, false}} do
      local t0 = sa.now_ns()
      local r = assert(sa.measure{method = case[1], duration = case[2], budget = 0.2, warmup = 0,
                                  keep_samples = case[3]})
      local took = (sa.now_ns() - t0) / 1e9
      T.check(took >= 0.2, "%s: stopped after %.3f s < 0.2 s", case[1], took)
      T.check(took < (T.valgrind and 5 or 1), "%s: took %.3f s for a 0.2 s budget", case[1], took)
      T.check(r.n > 0, "%s: no samples", case[1])
      T.ordered(r.stats, case[1])
    end
  end},

  {"n stops the run before the budget", function()
    local r = assert(sa.measure{method = "nanosleep", duration = 1e-4, n = 7, budget = 10})
    T.eq(r.n, 7, "n")
    T.eq(#r.samples, 7, "#samples")
  end},

  {"budget=false: only n stops", function()
    local r = assert(sa.measure{method = "clock", duration = 0, n = 1000, budget = false})
    T.eq(r.n, 1000, "n")
  end},

  {"periodic mode counts misses when forced (nanosleep, 10 us period)", function()
    local r = assert(sa.measure{method = "nanosleep", duration = 1e-5, mode = "periodic", budget = 0.2})
    T.check(r.n > 0, "no samples")
    T.check(r.missed > 0, "no missed deadline at a 10 us period (min lateness %d ns)", r.stats.min)
    T.ordered(r.stats, "periodic")
  end},

  {"slack is applied during the run and restored after", function()
    local before = T.slack()
    local want = before == 1000 and 2000 or 1000
    local seen = {}
    -- the binding fires call hooks between chunks: read the slack there
    debug.sethook(function() seen[#seen + 1] = T.slack() end, "c")
    local r = sa.measure{method = "nanosleep", duration = 1e-3, budget = 0.2, slack = want}
    debug.sethook()
    T.check(r, "measure failed")
    local during = false
    for _, v in ipairs(seen) do if v == want then during = true end end
    T.check(during, "slack %d never seen during the run (%d hook calls)", want, #seen)
    T.eq(T.slack(), before, "slack after")
    T.eq(r.env.slack_ns, want, "env.slack_ns")
  end},

  {"an error raised between chunks (as Ctrl-C does) restores slack and affinity", function()
    local before = T.state()
    for _, method in ipairs{"spin", "nanosleep", "hybrid"} do
      local calls = 0
      debug.sethook(function()
        calls = calls + 1
        if calls == 3 then error("simulated interrupt") end
      end, "c")
      local ok, err = pcall(sa.measure, {method = method, duration = 1e-3, budget = 5, slack = 1000,
                                         cpu = 0, policy = "batch"})
      debug.sethook()
      T.check(not ok and tostring(err):find("simulated interrupt", 1, true),
        "%s: expected the hook's error, got %s %s", method, tostring(ok), tostring(err))
      T.eq(T.state(), before, method .. ": thread state after an interrupted run")
    end
    -- and the module still works afterwards
    assert(sa.measure{method = "nanosleep", duration = 0, n = 3})
  end},

  {"slack is unchanged after bad-argument errors", function()
    local before = T.slack()
    pcall(sa.measure, {method = "nanosleep", duration = 1e-3, slack = 1000, cpu = 100000})
    pcall(sa.measure, {method = "nanosleep", duration = -1, slack = 1000})
    pcall(sa.measure, {method = "nanosleep", duration = 0, slack = 1000, policy = "bogus"})
    T.eq(T.slack(), before, "slack")
  end},

  {"cpu and policy: applied for the run, restored after", function()
    local before = T.state()
    local states = {}
    debug.sethook(function() states[#states + 1] = T.state() end, "c")
    local r = sa.measure{method = "nanosleep", duration = 1e-3, budget = 0.15, cpu = 0, policy = "batch"}
    debug.sethook()
    T.check(r, "measure failed")
    T.eq(r.env.cpu, 0, "env.cpu")
    T.eq(r.env.policy, "batch", "env.policy")
    local pinned = false
    for _, st in ipairs(states) do
      if st:find("cpus=0 ", 1, true) and st:find("policy=3 ", 1, true) then pinned = true end
    end
    T.check(pinned, "never seen on cpu 0 under SCHED_BATCH during the run: %s", table.concat(states, "; "))
    T.eq(T.state(), before, "thread state after")
  end},
}

-- test_precise.lua -- sa.sleep, sa.sleep_stats and sa.pacer: invariants only.
-- No strategy or kernel method returns before its deadline; learned margins
-- stay within [0, band]; the pacer never drifts and its missed-tick
-- policies do what they say; Ctrl-C ends a 60 s sa.sleep within 0.5 s with
-- the slack unchanged; a sleep longer than a day sleeps (daysleep); bad
-- input raises naming the argument; auto's contended state under a spinner
-- on every CPU and its stats (decision, reason) are consistent; the opt-in
-- rt_priority leaves the thread as found.
local sa = require "sleepacc"
local T = require "helpers"

local DURS = {0, 1e-9, 1e-6, 2e-5, 1e-4, 3e-4, 1e-3, 2.5e-3}

local function kernel_methods()
  local out = {}
  for _, m in ipairs(sa.methods()) do
    if m.family == "kernel" and m.available then out[#out + 1] = m.name end
  end
  return out
end

local function busy(seconds)
  local stop = sa.now_ns() + math.floor(seconds * 1e9)
  while sa.now_ns() < stop do end
end

local tests = {}
local function test(name, fn) tests[#tests + 1] = {name, fn} end

test("no method returns before its deadline", function()
  local names = {"auto", "hybrid", "comp", "spin"}
  for _, k in ipairs(kernel_methods()) do names[#names + 1] = k end
  T.check(#names >= 9, "only %d methods", #names)
  for _, m in ipairs(names) do
    local n = (m == "auto" or m == "comp") and 80 or #DURS
    local c0 = (sa.sleep_stats(m) or {count = 0}).count
    for i = 1, n do
      local d = DURS[(i - 1) % #DURS + 1]
      local t0 = sa.now_ns()
      T.eq(sa.sleep(d, m), true, m .. " result")
      local took = sa.now_ns() - t0
      T.check(took >= math.floor(d * 1e9 + 0.5), "%s: %s s sleep returned after %d ns", m, d, took)
    end
    local st = sa.sleep_stats(m)
    T.check(st.count == c0 + n, "%s: count %d, expected %d", m, st.count, c0 + n)
    T.check(st.lateness.min >= 0 and st.lateness.undersleeps == 0, "%s: early wake recorded", m)
    T.ordered(st.lateness, m)
  end
end)

test("learned margins stay within their band", function()
  local seed = 7
  for _ = 1, 400 do
    seed = (seed * 1103515245 + 12345) % 2147483648
    sa.sleep((seed % 1500000) / 1e9, "auto")
  end
  local st = sa.sleep_stats("auto")
  T.check(#st.margins > 3, "only %d bands learned", #st.margins)
  for _, b in ipairs(st.margins) do
    T.check(b.margin_ns >= 0 and b.margin_ns <= b.band_lo_ns,
      "band %d: margin %d outside [0, band]", b.band_lo_ns, b.margin_ns)
  end
  T.eq(st.strategy, "auto", "strategy")
  T.check(st.kernel ~= "", "no kernel wait")
end)

test("pacer never drifts: 200 ticks of 1 ms end at start + 200 ms", function()
  local p = sa.pacer(0.001, {missed = "burst"})
  local d
  for k = 1, 200 do
    d = p:wait()
    local st = p:stats()
    T.eq(d, st.start_ns + k * 1000000, "deadline of tick " .. k)
    T.check(sa.now_ns() >= d, "tick %d returned before its deadline", k)
  end
  local st = p:stats()
  T.eq(d, st.start_ns + 200000000, "200th deadline")
  T.eq(st.count, 200, "count")
  T.eq(st.timer_misses, 0, "timer_misses")
  T.check(st.lateness.min >= 0, "negative lateness")
  local te = st.timer_err
  T.check(te.min >= 0 and te.min <= te.mean and te.mean <= te.max and te.stddev >= 0,
    "timer_err not ordered")
  T.check(math.abs(st.timer_err_percent - 100 * te.mean / 1e6) < 1e-9, "timer_err_percent")
  p:close()
end)

test("pacer skip drops the missed ticks", function()
  local per = 2000000
  local p = sa.pacer(per / 1e9)
  local d1 = p:wait()
  busy(5.5 * per / 1e9)
  local called = sa.now_ns()
  local d2 = p:wait()
  T.check(d2 > called, "skip delivered a past tick")
  T.check((d2 - d1) % per == 0 and d2 - d1 >= 6 * per, "d2 - d1 = %d", d2 - d1)
  local st = p:stats()
  T.check(st.misses >= 5 and st.timer_misses == st.misses and st.count == 2,
    "misses %d timer_misses %d count %d", st.misses, st.timer_misses, st.count)
  T.eq(st.missed_policy, "skip", "default policy")
  T.eq(st.missed, st.timer_misses, "missed: the count, as a point's")
  p:close()
end)

test("pacer burst delivers every missed tick at once", function()
  local per = 2000000
  local p = sa.pacer(per / 1e9, {missed = "burst", method = "auto"})
  local d1 = p:wait()
  busy(5.5 * per / 1e9)
  local called = sa.now_ns()
  local d2, d3 = p:wait(), p:wait()
  T.check(d2 == d1 + per and d3 == d2 + per and d3 < called, "burst order")
  local last
  for _ = 1, 6 do last = p:wait() end
  T.eq(last, d1 + 8 * per, "nothing dropped")
  local st = p:stats()
  T.check(st.misses >= 5 and st.timer_misses == 0 and st.count == 9, "burst counters")
  p:close()
end)

test("pacer delay restarts the schedule from now", function()
  local per = 2000000
  local p = sa.pacer(per / 1e9, {missed = "delay"})
  local start0 = p:stats().start_ns
  p:wait()
  busy(5.5 * per / 1e9)
  local called = sa.now_ns()
  local d2 = p:wait()
  local st = p:stats()
  T.check(st.start_ns >= called and called > start0, "schedule not restarted")
  T.eq(d2, st.start_ns + per, "first tick after the restart")
  T.check(st.misses >= 5 and st.timer_misses >= 5, "delay counters")
  p:close()
end)

test("Lua 5.4: a to-be-closed pacer is closed at the end of its scope", function()
  if _VERSION ~= "Lua 5.4" then T.skip("<close> is Lua 5.4 syntax (" .. T.lua .. ")") end
  local chunk = assert(load([[
    local sa = ...
    local keep
    do
      local p <close> = sa.pacer(0.001)
      p:wait()
      keep = p
    end
    return keep
  ]]))
  local p = chunk(sa)
  T.check(tostring(p):find("closed", 1, true), "not closed at scope end: %s", tostring(p))
end)

test("a closed pacer refuses to wait", function()
  local p = sa.pacer(0.01, {method = "spin"})
  p:close()
  p:close()
  local ok, err = pcall(p.wait, p)
  T.check(not ok and tostring(err):find("closed", 1, true), "wait on a closed pacer: %s", tostring(err))
  -- words: the core's whole message, Python's "Pacer is closed" (sleepacc_precise_message;
  -- was "sleepacc.Pacer: closed", then "sleepacc.Pacer: is closed")
  T.check(tostring(err):find("Pacer is closed", 1, true), "the words: %s", tostring(err))
  T.check(tostring(p):find("closed", 1, true), "tostring: %s", tostring(p))
end)

test("sa.sleeper: its own sleeper, the same lifecycle as a pacer", function()
  local s = assert(sa.sleeper("hybrid"))
  T.check(tostring(s):find("open", 1, true), "tostring: %s", tostring(s))
  for _, d in ipairs{0, 1e-5, 5e-4} do
    local t0 = sa.now_ns()
    T.eq(s:sleep(d), true, "sleep")
    T.check(sa.now_ns() - t0 >= math.floor(d * 1e9 + 0.5), "woke early at %s s", d)
  end
  local dl = sa.now_ns() + 200000
  T.eq(s:sleep_until(dl), true, "sleep_until")
  T.check(sa.now_ns() >= dl, "sleep_until woke early")
  local st = s:stats()
  T.eq(st.count, 4, "count")
  T.eq(st.strategy, "hybrid", "strategy")
  T.check(T.isint(st.margin_ns) and st.margin_ns > 0, "margin_ns %s", tostring(st.margin_ns))
  T.eq(type(st.contended), "boolean", "contended")
  T.ordered(st.lateness, "sleeper lateness")
  s:close()
  s:close()
  T.check(tostring(s):find("closed", 1, true), "closed: %s", tostring(s))
  -- the core's whole message, Python's (sleepacc_precise_message; was "sleepacc.Sleeper: is closed")
  local ok, err = pcall(s.sleep, s, 0.001)
  T.check(not ok and tostring(err) == "Sleeper is closed", "sleep on a closed sleeper: %s", tostring(err))
  T.eq(s:stats().count, 4, "stats of a closed handle stay readable")
  local p = assert(sa.pacer(0.001))
  local ps = p:stats()
  T.eq(ps.period_ns, 1000000, "pacer period_ns")
  T.eq(ps.missed_policy, "skip", "pacer missed_policy")
  T.eq(ps.missed, 0, "pacer missed (a count)")
  T.eq(type(ps.sleeper), "table", "the pacer's sleeper stats")
  p:close()
end)

-- A hand-off (handoff=) ends the core's spin handoff before the deadline;
-- the binding polls the rest (sleepacc_precise_poll).  Lua used to step the
-- call again instead, which slept a second kernel wait past the deadline.
test("handoff: each sleep and tick ends once, one kernel wait each, never early", function()
  local s = assert(sa.sleeper("hybrid", {handoff = 5e-4}))
  for _ = 1, 4 do
    local t0 = sa.now_ns()
    T.eq(s:sleep(0.003), true, "sleep")
    T.check(sa.now_ns() - t0 >= 3000000, "woke early")
  end
  local st = s:stats()
  T.eq(st.handoff_ns, 500000, "handoff_ns")
  T.eq(st.count, 4, "sleeps counted")
  T.check(st.kernel_waits <= st.count, "%d kernel waits for %d sleeps", st.kernel_waits, st.count)
  s:close()
  local p = assert(sa.pacer(0.003, {method = "hybrid", handoff = 5e-4}))
  local last = 0
  for _ = 1, 4 do
    local dl = p:wait()
    T.check(sa.now_ns() >= dl and dl > last, "tick %d after %d, now %d", dl, last, sa.now_ns())
    last = dl
  end
  local ps = p:stats()
  T.eq(ps.count, 4, "ticks")
  T.check(ps.sleeper.kernel_waits <= ps.count, "%d kernel waits for %d ticks", ps.sleeper.kernel_waits, ps.count)
  p:close()
end)

-- A sleep on a handle re-entered from a hook (it runs at the checkpoint
-- between two chunks of that very handle's sleep) gets a sleeper of its
-- own: it runs to its end, the outer sleep resumes toward its own deadline
-- and only the outer one is counted on the handle.
test("a sleep re-entered from a hook gets a sleeper of its own", function()
  local s = assert(sa.sleeper("auto"))
  local sleep = getmetatable(s).__index.sleep
  local inner
  debug.sethook(function()
    local caller = debug.getinfo(3, "f")
    if inner == nil and caller and caller.func == sleep then -- inside s:sleep's checkpoint
      local t = sa.now_ns()
      inner = {s:sleep(0.002)}
      inner.took = sa.now_ns() - t
    end
  end, "c")
  local t0 = sa.now_ns()
  local ok = s:sleep(0.12) -- longer than one 50 ms chunk
  local took = sa.now_ns() - t0
  debug.sethook()
  T.eq(ok, true, "outer sleep")
  T.check(took >= 120000000, "outer woke early: %d ns", took)
  T.check(inner ~= nil, "the hook never ran inside the sleep")
  T.eq(inner[1], true, "inner sleep")
  T.check(inner.took >= 2000000, "inner woke early: %d ns", inner.took)
  T.eq(s:stats().count, 1, "sleeps counted on the handle")
  T.eq(s:sleep(0.001), true, "usable afterwards, not left busy")
  s:close()
end)

-- margins are the sleeper's: a sleeper's stats, or its pacer's .sleeper
test("margins: a sleeper's stats, and a pacer's under sleeper", function()
  local p = assert(sa.pacer(0.002, {method = "auto"}))
  for _ = 1, 5 do p:wait() end
  local st = p:stats()
  T.eq(st.margins, nil, "pacer: no top-level margins")
  T.eq(type(st.sleeper.margins), "table", "pacer: sleeper.margins")
  for _, b in ipairs(st.sleeper.margins) do
    T.check(b.margin_ns >= 0 and b.margin_ns <= b.band_lo_ns, "band %d: margin %d", b.band_lo_ns, b.margin_ns)
  end
  p:close()
end)

local DECISIONS = {["none"] = 1, ["startup"] = 1, ["learned"] = 1, ["probe"] = 1,
  ["short spin"] = 1, ["kernel only"] = 1, ["fixed"] = 1, ["spin"] = 1, ["kernel"] = 1, ["comp"] = 1}
local REASONS = {["idle"] = 1, ["spins lost the CPU"] = 1, ["CPU pressure"] = 1,
  ["wake-ups waited for a CPU"] = 1, ["more runnable tasks than CPUs"] = 1,
  ["short spins lost to the kernel wait"] = 1}

-- The invariants of a sleeper's stats (the core's fields, read by table).
local function consistent(st)
  T.check(DECISIONS[st.decision], "decision %s", tostring(st.decision))
  T.check(REASONS[st.reason], "reason %s", tostring(st.reason))
  T.check(st.contention >= 0 and st.contention <= 1, "contention %s", tostring(st.contention))
  T.check(st.cpu_pressure == -1 or (st.cpu_pressure >= 0 and st.cpu_pressure <= 1),
          "cpu_pressure %s", tostring(st.cpu_pressure))
  T.check(T.isint(st.contended_episodes) and st.contended_episodes >= 0, "episodes")
  if st.strategy == "auto" and st.count > 0 then
    local way = st.decision == "short spin" or st.decision == "kernel only"
    T.eq(st.contended, way, "contended <=> the contended decision")
  end
  T.ordered(st.lateness, "lateness")
end

test("auto under a spinner on every CPU: contended, never early, stats consistent", function()
  local n = 0
  for line in io.lines("/proc/cpuinfo") do if line:match("^processor") then n = n + 1 end end
  if n < 1 then n = 1 end
  -- each spinner ends by itself after 4 s (bounded)
  for _ = 1, n do assert(T.sh_ok("timeout 4 sh -c 'while :; do :; done' >/dev/null 2>&1 &")) end
  local s = assert(sa.sleeper("auto"))
  local t0, entered = sa.now_ns(), false
  while sa.now_ns() - t0 < 3e9 do -- bounded: 3 s
    local dl = sa.now_ns() + 1000000
    T.eq(s:sleep_until(dl), true, "sleep_until")
    T.check(sa.now_ns() >= dl, "woke early under load")
    consistent(s:stats())
    if s:stats().contended then entered = true break end
  end
  T.check(entered, "not contended after 3 s under %d spinners", n)
  local st = s:stats()
  T.check(st.reason ~= "idle" and st.contended_episodes >= 1, "reason %s", st.reason)
  T.eq(st.lateness.undersleeps, 0, "undersleeps")
  s:close()
  local p = assert(sa.pacer(0.001))
  for _ = 1, 50 do
    local dl = p:wait()
    T.check(sa.now_ns() >= dl, "tick early under load")
  end
  consistent(p:stats().sleeper)
  p:close()
end)

test("rt_priority: opt-in, refused out of range naming it, the thread as found", function()
  local before = T.state()
  T.eq(sa.sleeper("auto"):stats().rt_priority, 0, "never the default")
  T.raises_naming("rt_priority", sa.sleeper, "auto", {rt_priority = 100})
  T.raises_naming("rt_priority", sa.pacer, 0.001, {rt_priority = -1})
  for _, m in ipairs{"auto", "hybrid", "spin"} do
    local s = assert(sa.sleeper(m, {rt_priority = 1}))
    for _, d in ipairs{1e-4, 3e-4, 1e-3} do
      local t0 = sa.now_ns()
      T.eq(s:sleep(d), true, "sleep")
      T.check(sa.now_ns() - t0 >= math.floor(d * 1e9 + 0.5), "woke early")
      T.eq(T.state(), before, "thread after a sleep")
    end
    local st = s:stats()
    T.eq(st.rt_priority, 1, "rt_priority")
    T.check(st.rt_denied or st.rt_spins > 0, "%s: no spin under FIFO, none denied", m)
    s:close()
  end
  local p = assert(sa.pacer(0.001, {rt_priority = 1}))
  for _ = 1, 20 do p:wait() end
  T.eq(T.state(), before, "thread after a pacer")
  p:close()
end)

test("slice: opt-in, refused out of range naming it, held until close", function()
  local probe = function() local s = sa.sleeper("auto"); local v = s:stats().slice_ns; s:close(); return v end
  local before = probe()
  T.eq(sa.sleeper("auto"):stats().slice_held_ns, 0, "never the default")
  T.raises_naming("slice", sa.sleeper, "auto", {slice = 1e-6})
  T.raises_naming("slice", sa.pacer, 0.001, {slice = 0.2})
  T.eq(probe(), before, "thread after a refused slice")
  local s = assert(sa.sleeper("auto", {slice = 1e-4}))
  local st = s:stats()
  if st.slice_denied then
    T.eq(st.slice_held_ns, 0, "denied: nothing held")
  else
    T.eq(st.slice_held_ns, 100000, "held")
    T.eq(probe(), 100000, "the thread's slice while held")
    local p = assert(sa.pacer(0.001, {method = "clock_nanosleep", slice = 2e-4}))
    T.eq(p:stats().sleeper.slice_held_ns, 200000, "a pacer holds it too")
    for _ = 1, 5 do p:wait() end
    s:close()   -- out of order: the pacer's is still held
    T.eq(probe(), 200000, "the last open hold")
    p:close()
  end
  s:close()
  T.eq(probe(), before, "thread after close")
end)

test("dma_latency on a sleeper and a pacer: held, or an error naming it", function()
  for _, make in ipairs{function() return sa.sleeper("auto", {dma_latency = 0}) end,
                        function() return sa.pacer(0.001, {dma_latency = 0}) end} do
    local h, msg = make()
    if h then
      local st = h:stats()
      local held = st.dma_latency_us or (st.sleeper and st.sleeper.dma_latency_us)
      T.eq(held, 0, "dma_latency_us held")
      h:close()
    else
      T.check(tostring(msg):find("dma_latency", 1, true), "error does not name dma_latency: %s", tostring(msg))
    end
  end
  T.raises_naming("dma_latency", sa.sleeper, "auto", {dma_latency = -1})
  T.raises_naming("dma_latency", sa.pacer, 0.001, {dma_latency = "0"})
  T.raises_naming("bogus", sa.sleeper, "auto", {bogus = 1})
end)

test("a method called on another handle's kind raises naming self", function()
  -- it was luaL_checkudata's "bad argument #1 to '?' (sleepacc.Pacer expected, ...)"
  local s, p = sa.sleeper("spin"), sa.pacer(0.001)
  local samples = sa.measure{method = "clock", duration = 0, n = 2}.samples
  local err = T.raises_naming("self", p.wait, s)
  T.eq(err, "self: must be a sleepacc.Pacer, got userdata", "message")
  T.eq(T.raises_naming("self", s.sleep, nil, 0), "self: must be a sleepacc.Sleeper, got nil", "message")
  T.raises_naming("self", s.stats, p) -- the shared methods check their own kind
  T.raises_naming("self", s.sleep_until, samples, 0)
  T.raises_naming("self", samples.totable, 5)
  s:close()
  p:close()
end)

test("bad input raises naming the argument", function()
  local nan = 0 / 0
  local cases = {
    {"seconds", sa.sleep},
    {"seconds", sa.sleep, -1},
    {"seconds", sa.sleep, -1e-9},
    {"seconds", sa.sleep, nan},
    {"seconds", sa.sleep, math.huge},
    {"seconds", sa.sleep, 1e300},
    {"seconds", sa.sleep, 2^63},
    {"seconds", sa.sleep, "0.1"},
    {"seconds", sa.sleep, true},
    {"seconds", sa.sleep, {}},
    {"method", sa.sleep, 0.001, "bogus"},
    {"method", sa.sleep, 0.001, "clock"},
    {"method", sa.sleep, 0.001, 5},
    {"method", sa.sleep, 0.001, true},
    {"method", sa.sleep_stats, "bogus"},
    {"period", sa.pacer},
    {"period", sa.pacer, 0},
    {"period", sa.pacer, -0.5},
    {"period", sa.pacer, nan},
    {"period", sa.pacer, 1e9},
    {"period", sa.pacer, "1"},
    {"options", sa.pacer, 0.001, "skip"},
    {"missed", sa.pacer, 0.001, {missed = "late"}},
    {"missed", sa.pacer, 0.001, {missed = 1}},
    {"method", sa.pacer, 0.001, {method = "bogus"}},
    {"method", sa.pacer, 0.001, {method = 1}},
    {"bogus", sa.pacer, 0.001, {bogus = 1}},
  }
  local before = T.state()
  for _, c in ipairs(cases) do T.raises_naming(c[1], T.unpack(c, 2)) end
  T.eq(T.state(), before, "thread state")
end)

test("seconds, period and deadline_ns: the core's rule and words, then the value", function()
  local s = sa.sleeper("spin")
  local day2 = sa.now_ns() + 2 * 86400 * 1000000000
  -- a wrong type: the core's one template (it was "<takes> expected, got <type>")
  local cases = { -- {the error's start (plain text), function, args...}
    {"seconds: must be non-negative, got -1", sa.sleep, -1},
    -- daysleep: no day cap (86401 was refused here), only int64 ns from now
    {"seconds: must end before the int64 ns clock does (292 years from boot), got 1e+300", sa.sleep, 1e300},
    {"seconds: must end before the int64 ns clock does (292 years from boot), got ", s.sleep, s, 1e12},
    {"seconds: must be finite, got inf", sa.sleep, math.huge},
    {"seconds: must be finite, got ", s.sleep, s, 0 / 0},
    {"seconds: must be non-negative, got -1", s.sleep, s, -1},
    {"seconds: must be a number of seconds, got boolean", sa.sleep, true},
    {"seconds: must be a number of seconds, got boolean", s.sleep, s, false},
    {"seconds: must be a number of seconds, got string", sa.sleep, "0.1"},
    {"seconds: must be non-negative, got ", s.sleep, s, -1e-9},
    {"method: must be a string, got number", sa.sleep, 0, 5},
    {"method: must not contain a NUL byte, got \"auto\\0\"", sa.sleep, 0, "auto\0"}, -- words
    {"period: must be positive, got -0.5", sa.pacer, -0.5},   -- one rule with 0 ("non-negative", which 0 is)
    {"period: must be positive, got 0", sa.pacer, 0},
    {"period: must be a number of seconds, got no value", sa.pacer},
    {"dma_latency: must be an integer, got a fraction", sa.pacer, 0.001, {dma_latency = 0.5}},
    {"deadline_ns: must be a CLOCK_MONOTONIC time in ns, got -5", s.sleep_until, s, -5},
    {"deadline_ns: must be an integer, got a fraction", s.sleep_until, s, 1.5},
    -- more than one day ahead: refused, as Python's sleep_until (the core's rule)
    {"deadline_ns: must be at most one day ahead, got ", s.sleep_until, s, day2},
  }
  for _, c in ipairs(cases) do
    local ok, err = pcall(T.unpack(c, 2))
    err = tostring(err)
    T.check(not ok and err:sub(1, #c[1]) == c[1], "expected %q..., got %s", c[1], err)
  end
  T.eq(s:stats().count, 0, "no sleep ran")
  s:close()
end)

test("Ctrl-C ends a 60 s sa.sleep within 0.5 s, slack unchanged", function()
  local lua = (arg and arg[-1]) or "lua5.4"
  local results = {}
  for _, m in ipairs({"auto", "spin", "nanosleep"}) do
    local script = 'local sa = require "sleepacc" ' ..
      'local function slack() local f = io.open("/proc/self/timerslack_ns") local v = f:read("*n") f:close() return v end ' ..
      'local s0 = slack() ' ..
      'local ok, e = pcall(sa.sleep, 60, "' .. m .. '") ' ..
      'print("caught", ok, tostring(e):match("interrupted") or tostring(e), s0 == slack())'
    local sh = "sh -c '" .. lua .. " -e \"$0\" & pid=$!; sleep 0.3; " ..
      "t0=$(date +%s%N); kill -INT $pid; wait $pid; st=$?; t1=$(date +%s%N); " ..
      "echo stop_ms $(( (t1 - t0) / 1000000 )) status $st' '" .. script:gsub("'", "'\\''") .. "'"
    local f = assert(io.popen(sh))
    local out = f:read("*a")
    f:close()
    local stop_ms = tonumber(out:match("stop_ms (%d+)"))
    T.check(out:find("caught\tfalse\tinterrupted\ttrue", 1, true),
      "%s: not interrupted cleanly: %s", m, out)
    T.check(stop_ms and stop_ms < 500, "%s: stopped %s ms after SIGINT", m, tostring(stop_ms))
    results[#results + 1] = m .. " " .. tostring(stop_ms) .. " ms"
  end
  print("  Ctrl-C to exit: " .. table.concat(results, ", "))
end)

-- daysleep: a sleep longer than a day sleeps (it was refused: "seconds: must
-- be at most 86400 s (one day)"), toward one deadline; SIGINT 0.3 s after the
-- call (sent by a background shell the script starts just before it) finds
-- it still sleeping (a refusal or a return ends the call with other words
-- first), and no sleep was counted.  A child that never ends is killed at 20 s.
test("sa.sleep(86401) and s:sleep(86401) sleep until Ctrl-C", function()
  local lua = (arg and arg[-1]) or "lua5.4"
  local calls = {
    ["sa.sleep"] = "sa.sleep(86401)",
    ["s:sleep"] = "s:sleep(86401)",
    ["s:sleep 2 days"] = "s:sleep(2 * 86400)",
    ["sa.sleep 1e9 s"] = "sa.sleep(1e9)",
  }
  for name, call in pairs(calls) do
    local script = 'local sa = require "sleepacc" local s = sa.sleeper() ' ..
      'os.execute("(sleep 0.3; kill -INT $PPID) &") ' .. -- $PPID: this Lua process
      'local ok, e = pcall(function() return ' .. call .. ' end) ' ..
      'print("caught", ok, tostring(e):match("interrupted") or tostring(e), ' ..
      's:stats().count, (sa.sleep_stats() or {count = 0}).count)'
    local sh = "timeout -s KILL 20 " .. lua .. " -e '" .. script:gsub("'", "'\\''") .. "'"
    local f = assert(io.popen(sh))
    local out = f:read("*a")
    f:close()
    T.check(out:find("caught\tfalse\tinterrupted\t0\t0", 1, true),
      "%s: not sleeping until interrupted: %s", name, out)
  end
end)

return tests

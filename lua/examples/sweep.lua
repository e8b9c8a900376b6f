-- sweep.lua -- Lua's answer to `irtt sleep`: the irtt-style sleep accuracy
-- table for every sleep method available on this machine.
--
--   LUA_CPATH="build/lua/?.so;;" lua5.4 lua/examples/sweep.lua [budget_s] [method ...]
--   SLEEPACC_OUT=router.jsonl ... also writes the results (sleepacc/1 JSON
--   Lines: `sleepacc report|compare|plot|doctor --from` read it)
--
-- budget_s is the time budget per (method, duration) point (default 0.1 s);
-- the durations are the core's ladder (irtt sleep's, 1 ns to 500 ms); floor
-- methods are measured at 0 only.  There is no warm-up, and n is given (a
-- large one, so the budget stops each point): a point longer than the budget
-- then gets one sleep.  Progress goes to stderr, the tables (rendered by the
-- C core, the same bytes as C and Python) to stdout.
local sa = require "sleepacc"

local budget = tonumber(arg[1]) or 0.1
local methods = {}
for i = 2, #arg do methods[#methods + 1] = arg[i] end
if #methods == 0 then
  for _, m in ipairs(sa.methods()) do
    if m.available then methods[#methods + 1] = m.name end
  end
end

local info = sa.system_info()
print(string.format("sleepacc %s (Lua) on %s, kernel %s, clocksource %s, HZ %s, timer slack %s ns",
  sa._VERSION, tostring(info.cpu_model), tostring(info.kernel_release), tostring(info.clocksource),
  tostring(info.hz), tostring(info.timer_slack_ns)))

local family = {}
for _, m in ipairs(sa.methods()) do family[m.name] = m.family end

local all = {}
for _, name in ipairs(methods) do
  local results, msg = sa.sweep{methods = {name}, budget = budget, warmup = 0, n = 1000000,
    keep_samples = false,
    progress = function(done, total, method, d)
      io.stderr:write(string.format("\r%-20s %2d/%d %-10s", method, done, total, tostring(d)))
      io.stderr:flush()
    end}
  io.stderr:write("\r" .. string.rep(" ", 50) .. "\r")
  print()
  print(string.format("== %s (%s)", name, family[name] or "?"))
  if results then
    io.write(sa.table(results, "irtt"))
    for _, r in ipairs(results) do all[#all + 1] = r end
  else
    print("  failed: " .. msg)
  end
end
local out = os.getenv("SLEEPACC_OUT")
if out then assert(sa.save(all, out)) print("\nresults: " .. out) end

-- helpers.lua -- assertions and probes shared by the Lua tests.
local sa = require "sleepacc"
local T = {}

-- One suite for Lua 5.1, 5.3, 5.4 and LuaJIT: on 5.1/LuaJIT every number is
-- a double, and an "integer" is a number with an integral value.
T.lua = (type(jit) == "table" and jit.version) or _VERSION
T.unpack = table.unpack or unpack
T.maxint = math.maxinteger or 2 ^ 63
T.minint = math.mininteger or -2 ^ 63
function T.isint(v)
  if math.type then return math.type(v) == "integer" end
  return type(v) == "number" and v == math.floor(v) and v > -2 ^ 63 and v < 2 ^ 63
end

local SKIP = {}
-- Mark the running test as skipped (counted apart, never as passed).
function T.skip(reason) error(setmetatable({reason = reason}, SKIP), 0) end
function T.is_skip(e) return type(e) == "table" and getmetatable(e) == SKIP end

-- The calling thread's timer slack (ns).  Lua is single-threaded, so the
-- process entry is the running thread's.
function T.slack()
  local f = assert(io.open("/proc/self/timerslack_ns"))
  local v = f:read("*n")
  f:close()
  return v
end

-- The thread's scheduling state: "slack|cpus|policy|rt_priority", from
-- /proc/self/timerslack_ns, /proc/self/status (Cpus_allowed_list) and
-- /proc/self/stat (fields 40 rt_priority and 41 policy).
function T.state()
  local f = assert(io.open("/proc/self/status"))
  local cpus = f:read("*a"):match("Cpus_allowed_list:%s*(%S+)")
  f:close()
  f = assert(io.open("/proc/self/stat"))
  local stat = f:read("*a")
  f:close()
  local fields = {}
  for w in stat:match("%) (.*)$"):gmatch("%S+") do fields[#fields + 1] = w end
  -- fields[1] is field 3 (state): field k is fields[k - 2]
  return string.format("slack=%d cpus=%s policy=%s prio=%s", T.slack(), cpus, fields[39], fields[38])
end

-- True when running under valgrind (make sanitize-lua): wall-time upper
-- bounds are widened there, lower bounds never are.
T.valgrind = os.getenv("SLEEPACC_TEST_VALGRIND") == "1"

-- os.execute(cmd) succeeded (5.1 returns a status number, 5.2+ a boolean).
function T.sh_ok(cmd)
  local r = os.execute(cmd)
  return r == true or r == 0
end

function T.eq(a, b, what)
  if a ~= b then error(string.format("%s: expected %s, got %s", what or "value", tostring(b), tostring(a)), 2) end
end

function T.check(cond, fmt, ...)
  if not cond then error(string.format(fmt or "check failed", ...), 2) end
end

-- min <= median <= p90 <= p99 <= p999 <= max, n samples.
function T.ordered(st, what)
  local chain = {"min", "median", "p90", "p99", "p999", "max"}
  for i = 1, #chain - 1 do
    local a, b = st[chain[i]], st[chain[i + 1]]
    T.check(T.isint(a) and T.isint(b),
      "%s: stats.%s/%s not integers", what, chain[i], chain[i + 1])
    T.check(a <= b, "%s: stats.%s=%d > stats.%s=%d", what, chain[i], a, chain[i + 1], b)
  end
  T.check(st.min <= st.mean + 1e-6 and st.mean <= st.max + 1e-6, "%s: mean outside [min, max]", what)
  T.check(st.std >= 0, "%s: std < 0", what)
end

-- Call f(...) and expect it to raise "<name>: <message>" (the module's
-- error for a bad argument).
function T.raises_naming(name, f, ...)
  local ok, err = pcall(f, ...)
  T.check(not ok, "expected an error naming '%s', got a result", name)
  err = tostring(err)
  T.check(err:sub(1, #name + 2) == name .. ": ", "error does not name '%s': %s", name, err)
  return err
end

-- The option an error names ("<name>: ..."), or nil.
function T.named(err) return tostring(err):match("^([%w_%[%]%.]+): ") end

-- Available methods, by name.
function T.available()
  local out = {}
  for _, m in ipairs(sa.methods()) do
    if m.available then out[#out + 1] = m end
  end
  return out
end

-- The request a method actually makes: d rounded UP to its granularity
-- (never down to 0 for a nonzero request).
function T.rounded(d_ns, gran)
  if gran <= 1 or d_ns == 0 then return d_ns end
  return math.floor((d_ns + gran - 1) / gran) * gran
end

return T

-- run.lua -- a plain Lua test runner for the sleepacc Lua module.
--   LUA_CPATH=build/lua/?.so lua5.4 tests/lua/run.lua [pattern]
-- Loads every tests/lua/test_*.lua (each returns an array of {name, fn}),
-- pcalls each test, prints "ok"/"not ok" lines, then "N passed, N failed,
-- N skipped (<Lua version>)" on a line of its own, and exits non-zero when
-- anything failed.  The same suite runs on Lua 5.1, 5.3, 5.4 and LuaJIT.
-- A test may call T.skip(reason): it is counted and listed as skipped
-- (never as passed).
local here = (arg and arg[0] or "tests/lua/run.lua"):match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local T = require "helpers"
T.root = here .. "/../.."

local pattern = arg[1]
local files = {}
local p = assert(io.popen('ls "' .. here .. '"/test_*.lua 2>/dev/null'))
for f in p:lines() do files[#files + 1] = f end
p:close()
table.sort(files)

local passed, failed, skipped = 0, 0, 0
for _, file in ipairs(files) do
  local chunk = assert(loadfile(file))
  local tests = chunk()
  local fname = file:match("([^/]*)%.lua$")
  for _, t in ipairs(tests) do
    local name = fname .. ": " .. t[1]
    if not pattern or name:find(pattern, 1, true) then
      local ok, err = xpcall(t[2], function(e)
        if T.is_skip(e) then return e end
        return debug.traceback(tostring(e), 2)
      end)
      if ok then
        passed = passed + 1
        print("ok - " .. name)
      elseif T.is_skip(err) then
        skipped = skipped + 1
        print("skip - " .. name .. ": " .. err.reason)
      else
        failed = failed + 1
        print("not ok - " .. name)
        print("  " .. tostring(err):gsub("\n", "\n  "))
      end
      io.stdout:flush()
    end
  end
end
print(passed .. " passed, " .. failed .. " failed, " .. skipped .. " skipped (" .. T.lua .. ")")
-- close the state so valgrind sees every block freed (5.2+; 5.1 and
-- LuaJIT take a status number and no close flag)
local ok = failed == 0 and passed > 0
if _VERSION == "Lua 5.1" then os.exit(ok and 0 or 1) end
os.exit(ok, true)

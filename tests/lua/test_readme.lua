-- test_readme.lua -- every ```lua block of lua/README.md runs as written, on
-- each Lua the suite runs on, its output discarded: a block that errors, or
-- that leaves the thread's slack, policy or CPUs changed, fails.  (The
-- API block used to be a sketch with `-->` lines that no Lua could load.)
local T = require "helpers"

local function blocks(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  local out = {}
  for code in text:gmatch("\n```lua\n(.-)\n```") do out[#out + 1] = code end
  return out
end

-- code compiled in an environment whose print and io.write write nothing.
local function quiet(code, name)
  local nop = function() end
  local env = setmetatable({print = nop, io = setmetatable({write = nop}, {__index = io})},
                           {__index = _G})
  if setfenv then -- 5.1, LuaJIT
    local chunk = assert(loadstring(code, name))
    return setfenv(chunk, env)
  end
  return assert(load(code, name, "t", env))
end

local tests = {}

tests[1] = {"every lua block of lua/README.md runs as written", function()
  local found = blocks(T.root .. "/lua/README.md")
  T.check(#found >= 1, "no ```lua block found in lua/README.md")
  for i, code in ipairs(found) do
    local before = T.state()
    local ok, err = pcall(quiet(code, "=lua/README.md block " .. i))
    T.check(ok, "block %d: %s", i, tostring(err))
    T.eq(T.state(), before, "block " .. i .. ": the thread as found")
  end
end}

return tests

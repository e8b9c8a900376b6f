-- test_build.lua -- one build truth: mk/sources.mk names the sources, flags,
-- defines and libraries; the version is SLEEPACC_VERSION in csrc/sleepacc.h;
-- the rockspec is generated from mk/rockspec.in; the module exports one
-- symbol.
local sa = require "sleepacc"
local T = require "helpers"

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function header_version()
  return slurp(T.root .. "/csrc/sleepacc.h"):match('#define SLEEPACC_VERSION "([^"]+)"')
end

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- A Lua file (the rockspec) evaluated in an empty environment (5.1 and 5.2+).
local function load_config(path)
  local env = {}
  local chunk
  if setfenv then
    chunk = assert(loadfile(path))
    setfenv(chunk, env)
  else
    chunk = assert(loadfile(path, "t", env))
  end
  chunk()
  return env
end

-- The file the running interpreter loaded the module from.
local function module_path()
  for tmpl in package.cpath:gmatch("[^;]+") do
    local f = tmpl:gsub("%?", "sleepacc")
    local h = io.open(f, "rb")
    if h then h:close() return f end
  end
end

return {
  {"the rockspec is mk/rockspec.in at SLEEPACC_VERSION", function()
    local v = header_version()
    T.check(v, "no SLEEPACC_VERSION in csrc/sleepacc.h")
    local specs = lines_of('cd "' .. T.root .. '" && ls lua/*.rockspec')
    T.check(#specs == 1, "expected one lua/*.rockspec, found %d: %s", #specs, table.concat(specs, " "))
    T.eq(specs[1], "lua/sleepacc-" .. v .. "-1.rockspec", "rockspec file name")
    local want = slurp(T.root .. "/mk/rockspec.in"):gsub("@VERSION@", v)
    T.check(slurp(T.root .. "/" .. specs[1]) == want,
      "%s is stale: run `make rockspec` (it is generated from mk/rockspec.in)", specs[1])
    local env = load_config(T.root .. "/" .. specs[1])
    T.eq(env.package, "sleepacc", "package")
    T.eq(env.version, v .. "-1", "version")
    T.eq(env.dependencies[1], "lua >= 5.1", "dependencies")
    T.eq(env.build.type, "make", "build.type")
    T.eq(env.build.makefile, "mk/rock.make", "build.makefile")
  end},

  {"_VERSION is SLEEPACC_VERSION", function()
    T.eq(sa._VERSION, header_version(), "_VERSION")
  end},

  {"sources, flags and libraries are named only in mk/sources.mk", function()
    local truth = slurp(T.root .. "/mk/sources.mk")
    for _, k in ipairs{"SLEEPACC_CORE_SOURCES", "SLEEPACC_LUA_SOURCES", "SLEEPACC_PY_SOURCES",
                       "SLEEPACC_STD", "SLEEPACC_WARNINGS", "SLEEPACC_DEFINES",
                       "SLEEPACC_MODULE_FLAGS", "SLEEPACC_LIBRARIES"} do
      T.check(truth:find("\n" .. k .. " := ", 1, true), "mk/sources.mk lacks %s", k)
    end
    local v = header_version()
    for _, f in ipairs{"setup.py", "mk/core.mk", "mk/lua.mk", "mk/rock.make", "mk/rockspec.in"} do
      local s = slurp(T.root .. "/" .. f)
      for _, bad in ipairs{"-lpthread", "\"pthread\"", "-std=", "_GNU_SOURCE", "-Wextra",
                           "-fvisibility", "csrc/clock.c", "lua/lsleepacc.c", v} do
        T.check(not s:find(bad, 1, true), "%s names %q: take it from mk/sources.mk (or the header)", f, bad)
      end
    end
  end},

  {"the module exports luaopen_sleepacc only (nm -D)", function()
    local path = module_path()
    T.check(path, "module not found on package.cpath %s", package.cpath)
    if not T.sh_ok("command -v nm >/dev/null 2>&1") then T.skip("nm is missing (binutils)") end
    local syms = lines_of("nm -D --defined-only '" .. path .. "' 2>&1")
    local names = {}
    for _, l in ipairs(syms) do names[#names + 1] = l:match("(%S+)$") end
    T.check(#names == 1 and names[1] == "luaopen_sleepacc",
      "%s exports %d symbols: %s", path, #names, table.concat(names, " "))
  end},

  {"io_uring: present exactly when the kernel headers have it", function()
    local h = io.open("/usr/include/linux/io_uring.h")
    local has_hdr = h ~= nil
    if h then h:close() end
    local row = false
    for _, m in ipairs(sa.methods()) do if m.name == "io_uring" then row = true end end
    T.eq(row, has_hdr, "io_uring row")
  end},
}

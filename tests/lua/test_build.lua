-- test_build.lua -- the rockspec (luarocks `builtin` cannot glob) names
-- exactly the C files every other build compiles: csrc/*.c and lua/*.c.
local T = require "helpers"

return {
  {"rockspec sources = csrc/*.c + lua/*.c", function()
    local path = T.root .. "/lua/sleepacc-0.1.0-1.rockspec"
    local env = {}
    local chunk = assert(loadfile(path, "t", env))
    chunk()
    T.eq(env.package, "sleepacc", "package")
    T.eq(env.build.type, "builtin", "build.type")
    local listed = {}
    for _, s in ipairs(env.build.modules.sleepacc.sources) do listed[s] = true end
    local p = assert(io.popen('cd "' .. T.root .. '" && ls csrc/*.c lua/*.c'))
    local missing = {}
    local n = 0
    for f in p:lines() do
      n = n + 1
      if not listed[f] then missing[#missing + 1] = f end
      listed[f] = nil
    end
    p:close()
    local extra = {}
    for f in pairs(listed) do extra[#extra + 1] = f end
    T.check(n > 0, "no C sources found under %s", T.root)
    T.check(#missing == 0 and #extra == 0,
      "update build.modules.sleepacc.sources in %s: missing {%s}, not on disk {%s}",
      path, table.concat(missing, ", "), table.concat(extra, ", "))
  end},
}

-- test_save.lua -- sa.save writes sleepacc/1 JSON Lines (tests/python/
-- test_lua_records.py loads the file in Python): one header, a point line
-- per result, a footer; integers as integers and the core's doubles with a
-- decimal point on every Lua (5.1 and LuaJIT have only doubles).
local sa = require "sleepacc"
local T = require "helpers"

local function tmpname()
  local p = os.tmpname()
  os.remove(p)
  return p .. ".jsonl"
end

local function lines(path)
  local out = {}
  for l in io.lines(path) do out[#out + 1] = l end
  return out
end

return {
  {"save: header, one point per result, footer", function()
    local rs = assert(sa.sweep{methods = {"nanosleep", "clock"}, durations = {0, 1e-5}, budget = 0.01,
                               keep_samples = false})
    rs[#rs + 1] = assert(sa.measure{method = "spin", duration = 1e-6, n = 4})
    local path = tmpname()
    T.eq(sa.save(rs, path), true, "save")
    local ls = lines(path)
    os.remove(path)
    T.eq(#ls, #rs + 2, "lines")
    T.check(ls[1]:find('^{"schema":"sleepacc/1","type":"header","host":{') , "header: %s", ls[1]:sub(1, 80))
    T.check(ls[1]:find('"hostname":"', 1, true) and ls[1]:find('"started":"%d%d%d%d%-%d%d%-%d%dT'), "header fields")
    T.check(ls[#ls]:find('^{"type":"footer","finished":"'), "footer: %s", ls[#ls])
    for i = 2, #ls - 1 do
      local l = ls[i]
      T.check(l:find('^{"type":"point",'), "point %d: %s", i, l:sub(1, 60))
      T.check(l:find('"n":%d+[,}]') and not l:find('"n":%d+%.'), "point %d: n not an integer", i)
      T.check(l:find('"mean":%-?[%d.]+[eE.]') or l:find('"mean":%-?%d+%.%d'), "point %d: mean not a float", i)
      T.check(l:find('"ctx_switches":{', 1, true), "point %d: ctx_switches object", i)
    end
    T.check(ls[#ls - 1]:find('"samples":[', 1, true), "kept samples written as an array")
    T.check(ls[2]:find('"samples":null', 1, true), "streamed samples written as null")
  end},

  {"save: one result, bad input, an unwritable path", function()
    local path = tmpname()
    T.eq(sa.save(assert(sa.measure{method = "clock", duration = 0, n = 2}), path), true, "one result")
    T.eq(#lines(path), 3, "lines")
    os.remove(path)
    T.raises_naming("results", sa.save, 42, path)
    T.raises_naming("results[1].mode", sa.save, {{method = "x"}}, path) -- the core reads the records
    T.raises_naming("results[2]", sa.save, {assert(sa.measure{method = "clock", duration = 0, n = 1}), 7}, path)
    T.raises_naming("path", sa.save, {}, 42)
    local r, msg, name = sa.save({}, "/nonexistent-dir/x.jsonl")
    T.check(r == nil and name == "ENOENT" and msg:find("^ENOENT: "), "unwritable: %s %s", tostring(msg), tostring(name))
    T.check(msg:find("(/nonexistent-dir/x.jsonl)", 1, true), "the path named: %s", msg)
    T.check(not io.open(path, "r"), "nothing written for a refused call")
  end},

  {"save: the records are read by the core, key by key", function()
    -- a copy of a record (its keys, no samples) writes the record's point, samples null; the
    -- kept samples are the run's (a Samples userdata): an array in their place is refused
    local r = assert(sa.measure{method = "clock", duration = 0, n = 3})
    local copy = {}
    for k, v in pairs(r) do copy[k] = v end
    copy.samples = nil
    local a, b = tmpname(), tmpname()
    T.eq(sa.save(r, a), true, "the record")
    T.eq(sa.save({copy}, b), true, "its copy")
    local la, lb = lines(a), lines(b)
    T.eq(lb[2], (la[2]:gsub('"samples":%b[]', '"samples":null')), "the same point, samples null")
    copy.samples = {1, 2, 3}
    local err = T.raises_naming("results[1].samples", sa.save, {copy}, b)
    T.check(err:find("must be the samples of a run, got table", 1, true), "%s", err)
    copy.samples, copy.stats = nil, 5
    T.raises_naming("results[1].stats", sa.save, {copy}, b)
    T.eq(#lines(b), #lb, "a refused call leaves the file as it was")
    os.remove(a)
    os.remove(b)
  end},

  {"save: a statistic left out is refused, not written as 0 (p1..p75 may be: older records lack them)", function()
    local r = assert(sa.measure{method = "clock", duration = 0, n = 3})
    local function copy(drop)
      local c, st = {}, {}
      for k, v in pairs(r) do c[k] = v end
      for k, v in pairs(r.stats) do st[k] = v end
      st[drop], c.stats, c.samples = nil, st, nil
      return c
    end
    local path = tmpname()
    T.eq(T.raises_naming("results[1].stats.p90", sa.save, {copy("p90")}, path),
         "results[1].stats.p90: must be an integer, got nil", "message")
    T.raises_naming("results[1].stats.n", sa.save, {copy("n")}, path)
    T.raises_naming("results[1].ctx_switches.involuntary", sa.save,
                    {(function() local c = copy("p1"); c.ctx_switches = {voluntary = 1}; return c end)()}, path)
    T.check(not io.open(path), "nothing written")
    T.eq(sa.save({copy("p1")}, path), true, "an older record, without p1")
    os.remove(path)
  end},

  {"sweep{output=}: each point on disk as it finishes; an interrupted sweep keeps them", function()
    local path = tmpname()
    local rs = assert(sa.sweep{methods = {"nanosleep", "clock"}, durations = {1e-5, 1e-4}, budget = 0.01,
                               output = path})
    local ls = lines(path)
    T.eq(#ls, #rs + 2, "header, points, footer")
    T.check(ls[#ls]:find('^{"type":"footer"'), "footer")
    local ok, err = pcall(sa.sweep, {methods = {"clock"}, durations = {0}, output = path})
    T.eq(tostring(err):match("output: .*"), "output: " .. path .. " exists and is not empty (results are never "
      .. "overwritten)", "the core's words of its refusal (sleepacc_strerror(-EEXIST))")
    T.check(not ok, "an existing output refused")
    T.eq(#lines(path), #ls, "a non-empty output is never overwritten")
    os.remove(path)
    local seen = 0
    local ok, err = pcall(sa.sweep, {methods = {"nanosleep"}, durations = {1e-5, 2e-5, 3e-5}, budget = 0.01,
      output = path, progress = function(done)
        seen = done
        if done == 2 then error("stop after two") end
      end})
    T.check(not ok and tostring(err):find("stop after two", 1, true), "progress error: %s", tostring(err))
    collectgarbage() -- the writer's __gc closes the file
    ls = lines(path)
    os.remove(path)
    T.eq(#ls, 3, "header and the two finished points, no footer")
    T.check(ls[3]:find('"requested_ns":20000', 1, true), "second point: %s", ls[3]:sub(1, 80))
    T.raises_naming("output", sa.sweep, {methods = {"clock"}, durations = {0}, output = 5})
    local r, msg, name = sa.sweep{methods = {"clock"}, durations = {0}, output = "/nonexistent-dir/x.jsonl"}
    T.check(r == nil and name == "ENOENT", "unwritable output: %s", tostring(msg))
  end},

  {"a path too long is the OS's ENAMETOOLONG, the same for save and sweep's output", function()
    -- one rule: nil, "ENAMETOOLONG: ...", "ENAMETOOLONG" (sa.save used to raise "path: too long")
    local long = string.rep("d/", 2100) .. "x.jsonl"
    local r, msg, name = sa.save({}, long)
    T.check(r == nil and name == "ENAMETOOLONG" and msg:find("^ENAMETOOLONG: "), "save: %s", tostring(msg))
    r, msg, name = sa.sweep{methods = {"clock"}, durations = {0}, n = 2, output = long}
    T.check(r == nil and name == "ENAMETOOLONG" and msg:find("^ENAMETOOLONG: "), "sweep: %s", tostring(msg))
  end},
  {"records and options are read raw: no metamethod runs while the core reads them", function()
    -- an __index ran Lua inside the core's read: one returning a run's samples that nothing held let
    -- the GC free them before save wrote them (valgrind: invalid read; junk numbers in the file)
    local calls, path = 0, tmpname()
    local proxy = setmetatable({}, {__index = function(_, k)
      calls = calls + 1
      return assert(sa.measure{method = "clock", duration = 0, n = 3})[k]
    end})
    local ok, err = pcall(sa.save, {proxy}, path)
    T.check(not ok and tostring(err) == "results[1].method: must be a string, got nil", "%s", tostring(err))
    T.check(io.open(path) == nil, "no file")
    ok, err = pcall(sa.measure, setmetatable({}, getmetatable(proxy)))
    T.check(not ok and tostring(err) == "method: must be a string, got nil", "%s", tostring(err))
    T.eq(calls, 0, "__index calls")
  end},
  {"save refuses a record a reader of the file refuses, before any file", function()
    -- it wrote mode "sideways", method "", requested_ns -5: sleepacc.load refused the whole file
    local r = assert(sa.measure{method = "clock", duration = 0, n = 2})
    local path = tmpname()
    for _, c in ipairs{{"mode", "sideways", "results.mode: must be 'relative' or 'periodic', got \"sideways\""},
                       {"method", "", "results.method: must be a method name (printable text), got \"\""},
                       {"requested_ns", -5, "results.requested_ns: must be >= 0, got -5"},
                       {"n", -1, "results.n: must be >= 0, got -1"}} do
      local t = {}
      for k, v in pairs(r) do t[k] = v end
      t[c[1]] = c[2]
      local ok, err = pcall(sa.save, t, path)
      T.check(not ok and tostring(err) == c[3], "want %q, got %s", c[3], tostring(err))
      T.check(io.open(path) == nil, "no file")
    end
  end},
}

-- sleepacc: how well does this machine sleep?  The Lua 5.4 module over the
-- C core.  Build from a checkout (no network needed):
--   luarocks --lua-version=5.4 make lua/sleepacc-0.1.0-1.rockspec
-- `builtin` cannot glob, so the source list below must name every csrc/*.c
-- and lua/*.c file; tests/lua/test_build.lua fails when it does not.
rockspec_format = "3.0"
package = "sleepacc"
version = "0.1.0-1"
source = {
   url = "git+https://example.invalid/sleepacc.git",
   tag = "v0.1.0",
}
description = {
   summary = "Measure how well a machine sleeps: every sleep primitive, statistics, host facts",
   detailed = [[
sleepacc measures every sleep primitive of the platform (nanosleep, poll,
epoll, timerfd, futex, spin, hybrid, ...), in relative or periodic mode,
with min/median/p99/max, CPU cost and the irtt-style table, over the same
C core as the Python package.
]],
   license = "MIT",
}
dependencies = {
   "lua >= 5.4, < 5.5",
}
build = {
   type = "builtin",
   modules = {
      sleepacc = {
         sources = {
            -- the binding (lua/*.c)
            "lua/lsleepacc.c",
            "lua/lsleeper.c",
            -- the core (csrc/*.c)
            "csrc/clock.c",
            "csrc/config.c",
            "csrc/engine.c",
            "csrc/env.c",
            "csrc/errors.c",
            "csrc/host.c",
            "csrc/methods.c",
            "csrc/pacer.c",
            "csrc/sleeper.c",
            "csrc/stats.c",
            "csrc/table.c",
         },
         incdirs = { "csrc", "lua" },
         defines = { "_GNU_SOURCE" },
         libraries = { "pthread", "rt", "m" },
      },
   },
}

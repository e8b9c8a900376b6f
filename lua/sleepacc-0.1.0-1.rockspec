-- sleepacc: how well does this machine sleep?  The Lua module (Lua 5.1,
-- 5.3, 5.4, LuaJIT) over the C core.  Build from a checkout, from the repo
-- root (no network needed):
--   luarocks make lua/sleepacc-0.1.0-1.rockspec
-- or, offline anywhere, from the source rock `make rock` packs (the tree's
-- files and this rockspec in one file):
--   luarocks install build/rock/sleepacc-0.1.0-1.src.rock
-- GENERATED from mk/rockspec.in by `make rockspec` (version: SLEEPACC_VERSION
-- in csrc/sleepacc.h); tests/lua/test_build.lua fails when it is stale.
-- The build is mk/rock.make, which takes the sources, flags and libraries
-- from mk/sources.mk, the build truth every build shares.
rockspec_format = "3.0"
package = "sleepacc"
version = "0.1.0-1"
source = {
   url = "git+https://github.com/sleepacc/sleepacc.git",
   tag = "v0.1.0",
}
description = {
   summary = "Measure how well a machine sleeps: every sleep primitive, statistics, host facts",
   detailed = [[
sleepacc measures every sleep primitive of the platform (nanosleep, poll,
epoll, timerfd, futex, io_uring, spin, hybrid, ...), in relative or periodic
mode, with min/median/p99/max, CPU cost and the irtt-style table, over the
same C core as the Python package.
]],
   license = "MIT",
   homepage = "https://github.com/sleepacc/sleepacc",
   issues_url = "https://github.com/sleepacc/sleepacc/issues",
   maintainer = "The sleepacc authors",
   labels = { "timer", "sleep", "latency", "benchmark" },
}
dependencies = {
   "lua >= 5.1",
}
build = {
   type = "make",
   makefile = "mk/rock.make",
   build_target = "build",
   install_target = "install",
   build_variables = {
      CC = "$(CC)",
      CFLAGS = "$(CFLAGS)",
      LIBFLAG = "$(LIBFLAG)",
      LUA_INCDIR = "$(LUA_INCDIR)",
   },
   install_variables = {
      LUA_INCDIR = "$(LUA_INCDIR)",
      INST_LIBDIR = "$(LIBDIR)",
   },
}

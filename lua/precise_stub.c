/*
 * precise_stub.c -- placeholder for the precise-sleep part of the Lua
 * module (sa.sleep, sa.pacer).  lua/lsleeper.c replaces this file: whoever
 * adds it deletes this one (and updates the rockspec's source list).
 */
#include "binding.h"

/* Adds nothing to the module table on top of the stack. */
int sleepacc_lua_open_precise(lua_State *L) {
  (void)L;
  return 0;
}

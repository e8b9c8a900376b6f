/*
 * precise_stub.c -- placeholder for the precise-sleep binding.
 *
 * sleeper.c (sleepacc.sleep, Sleeper, Pacer) replaces this file: it defines
 * sleepacc_py_init_precise() itself and deletes this stub.  Until then the
 * hook adds nothing.
 */
#include "binding.h"

int sleepacc_py_init_precise(PyObject *module) {
  (void)module;
  return 0;
}

/*
 * cnum.c -- numbers in the C locale: every number the core writes as text
 * (JSON lines, tables, host facts) or reads from text (/proc/loadavg) is
 * the same bytes whatever LC_NUMERIC the process set with setlocale() (a
 * comma-decimal locale made "%.17g" write 0,5, a result file no JSON reader
 * takes, and strtod read "0.39" as 0).
 *
 * Owns: sleepacc__c_numbers_enter, sleepacc__c_numbers_leave.  The switch
 * is uselocale(), which changes the calling thread only, so another thread's
 * locale (and the process's) is never touched; the C locale object is made
 * once and kept for the life of the process.
 */
#include "sleepacc_int.h"

#include <locale.h>

static locale_t sleepacc__c_locale; /* made once, never freed */

locale_t sleepacc__c_numbers_enter(void) {
  locale_t c = __atomic_load_n(&sleepacc__c_locale, __ATOMIC_ACQUIRE), none = (locale_t)0;
  if (c == (locale_t)0) {
    if ((c = newlocale(LC_ALL_MASK, "C", (locale_t)0)) == (locale_t)0) return (locale_t)0;
    if (!__atomic_compare_exchange_n(&sleepacc__c_locale, &none, c, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
      freelocale(c); /* another thread made it first */
      c = none;
    }
  }
  return uselocale(c);
}

void sleepacc__c_numbers_leave(locale_t prev) {
  if (prev != (locale_t)0) uselocale(prev);
}

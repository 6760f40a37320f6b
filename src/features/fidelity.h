/* fidelity: the switches that turn on departures from cosock 0.2.0 that a
 * working program could observe (fidelity.c owns loop->fid). The rule
 * (README, "Differences from cosock 0.2.0"): by default a program sees what
 * it saw on cosock 0.2.0; every other improvement waits for its switch. */
#ifndef COSOCK_FIDELITY_H
#define COSOCK_FIDELITY_H

#include "compat.h"

#include "hooks.h"
#include "loop.h"

/* set_close_wakes(true) is in force: closing a socket or a channel wakes the
 * tasks waiting on it, and a closed end is ready to select. Off, close does
 * as cosock 0.2.0's: waiters stay parked on their timeouts. */
static inline int cn_close_wakes(const cn_loop *lp) { return cn_at_on(lp, CN_AT_CLOSE_WAKES); }

/* set_luasocket_timeouts(true) is in force: a wrapper's zero timeout fails a
 * call at once, without the one yield cosock's makes (and settimeout's "t"
 * mode limits a whole call: lua/cosock/socket/wrap.lua asks). */
static inline int cn_luasocket_timeouts(const cn_loop *lp) { return lp->fid.luasocket_timeouts; }

/* Adds set_close_wakes, close_wakes, set_luasocket_timeouts and
 * luasocket_timeouts to the module table on top (the loop just below it),
 * and attaches the hook (a switch only). */
void cn_fid_open(lua_State *L, cn_loop *lp);

#endif

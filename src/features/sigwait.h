/* sigwait: the waits of cosock.signal and their queues, in C (sigwait.c). */
#ifndef COSOCK_SIGWAIT_H
#define COSOCK_SIGWAIT_H

#include "compat.h"

/* On first use (core.open "signal"): adds signal_wait, signal_park,
 * signal_fire, signal_seq, signal_queued and signal_passer to the module
 * table on top (the loop just below it). */
void cn_sigwait_open(lua_State *L);

/* A task (at slot) is being cancelled: its wait leaves its queue, and if
 * signal.one woke it and it has not run since, cosock/signal.lua passes the
 * signal on. Returns the status of that call; an error is left on top. */
int cn_sigwait_cancelled(lua_State *L, int slot);

#endif

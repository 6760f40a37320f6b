/* sigwait: the wait of a cosock.signal waiter, in C (sigwait.c). */
#ifndef COSOCK_SIGWAIT_H
#define COSOCK_SIGWAIT_H

#include "compat.h"

/* Adds signal_park, signal_wake and signal_ticket to the module table on top
 * (the loop just below it). */
void cn_sigwait_open(lua_State *L);

/* A task (at slot) is being cancelled: if a signal woke it and it has not
 * run since, cosock/signal.lua passes the signal on. Returns the status of
 * that call; an error is left on top. */
int cn_sigwait_cancelled(lua_State *L, int slot);

#endif

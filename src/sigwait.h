/* sigwait: the wait of a cosock.signal waiter, in C (sigwait.c). */
#ifndef COSOCK_SIGWAIT_H
#define COSOCK_SIGWAIT_H

#include "compat.h"

/* Adds signal_park, signal_wake and signal_ticket to the module table on top
 * (the loop just below it). */
void cn_sigwait_open(lua_State *L);

#endif

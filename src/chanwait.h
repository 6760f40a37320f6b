/* chanwait: the wait of cosock.channel's receive, in C (chanwait.c). */
#ifndef COSOCK_CHANWAIT_H
#define COSOCK_CHANWAIT_H

#include <lua.h>

/* Adds channel_wait, channel_wake, channel_waiting to the module table on
 * top (the loop just below it). */
void cn_chanwait_open(lua_State *L);

#endif

/* ossignal: the C part of cosock.ossignal, the operating system's signals
 * as messages (ossignal.c; the Lua part is lua/cosock/ossignal.lua). */
#ifndef COSOCK_OSSIGNAL_H
#define COSOCK_OSSIGNAL_H

#include "compat.h"

/* ossignal_open() -> the C functions of cosock.ossignal (made on that call:
 * nothing at load but this one function). */
int cn_ossignal_open(lua_State *L);

#endif

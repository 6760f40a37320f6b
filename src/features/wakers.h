/* wakers: what the Lua layer may ask about the loop's wakers (wakers.c). */
#ifndef COSOCK_WAKERS_H
#define COSOCK_WAKERS_H

#include "compat.h"

/* Adds waker_stale to the module table on top (the loop just below it). */
void cn_wakers_open(lua_State *L);

/* Anchored wakers, for objects of C that take one waker (timer objects,
 * lookups): the waker is the value of the object's userdata (at index ud),
 * and while it is set the userdata is anchored in a registry table (the
 * reference anchor) under a light key (the object's C state), so that the
 * collector cannot take an object whose waker the loop will call. The
 * object keeps its own flag of whether one is set.
 * cn_anchored_set: sets the function at fn; anchors first, the only step
 * that may raise (memory): then nothing changed.
 * cn_anchored_drop: takes the waker and the anchor off. Cannot fail.
 * cn_anchored_clear: takes every waker of the table off (reset; no
 * allocation), calling forget(key) for each, for the object's flag. */
void cn_anchored_set(lua_State *L, int anchor, const void *key, int ud, int fn);
void cn_anchored_drop(lua_State *L, int anchor, const void *key, int ud);
void cn_anchored_clear(lua_State *L, int anchor, void (*forget)(void *key));

#endif

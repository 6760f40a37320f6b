/* fdset: which objects wait on which fd, kept from pass to pass.
 *
 * Interest persists: a wait adds to fdcount[fd*2+kind]; the poller learns
 * about an fd the moment its first wait arrives, and about the end of
 * interest only at the end of the pass (cn_fd_apply), so a task that waits on
 * the same socket again costs no system call. Work per pass grows with what
 * is waited on and ready, never with the number of parked tasks.
 *
 * Two kinds of waiters share an fd:
 * - objects that speak the waker protocol: fdsets[fd*2+kind] = {obj = waits},
 *   and the loop calls obj:_wake(kind) when the fd is ready;
 * - the project's own socket wrappers (their metatable is registered as
 *   native): at most one task per fd and kind, kept in natslot/natwait, woken
 *   directly from C without any Lua call. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "loop.h"

/* Resizes a per-fd array from oldn to n elements of size bytes, zeroing the
 * new ones. NULL when memory is exhausted (the array is unchanged). */
static void *grow(cn_loop *lp, void *p, size_t oldn, size_t n, size_t size) {
  char *q = cn_mem_resize(&lp->mem, p, oldn * size, n * size);
  if (q) memset(q + oldn * size, 0, (n - oldn) * size);
  return q;
}

/* grow_fds's steps: an array with mult entries per fd; grown counts those done. */
#define GROW_ONE(field, mult)                                                        \
  do {                                                                               \
    void *q_ = grow(lp, (void *)lp->field, (mult) * old, (mult) * n, sizeof *lp->field); \
    if (q_ == NULL) goto fail;                                                       \
    lp->field = q_;                                                                  \
    grown++;                                                                         \
  } while (0)
#define SHRINK_ONE(k, field, mult)                                                   \
  if (grown > (k))                                                                   \
    lp->field = cn_mem_resize(&lp->mem, (void *)lp->field, (mult) * n * sizeof *lp->field, \
                              (mult) * old * sizeof *lp->field)

static void grow_fds(lua_State *L, cn_loop *lp, int fd) {
  size_t old = (size_t)lp->nfd, n = old ? old : 64;
  int grown = 0;
  if (fd >= CN_MAX_FD) luaL_error(L, "cosock: descriptor %d is too large", fd);
  while (n <= (size_t)fd) n *= 2;
  GROW_ONE(fdcount, 2);
  GROW_ONE(natslot, 2);
  GROW_ONE(natwait, 2);
  GROW_ONE(fdflag, 1);
  GROW_ONE(fdobj, 1);
  /* dirty[] holds each fd at most once (fdflag): nfd entries always do. */
  GROW_ONE(dirty, 1);
  lp->nfd = (int)n;
  return;
fail:
  /* Every array back to the nfd entries the loop's sizes say (shrinking
   * cannot fail): the allocator is told each block's true size. */
  SHRINK_ONE(0, fdcount, 2);
  SHRINK_ONE(1, natslot, 2);
  SHRINK_ONE(2, natwait, 2);
  SHRINK_ONE(3, fdflag, 1);
  SHRINK_ONE(4, fdobj, 1);
  luaL_error(L, "cosock: out of memory");
}

/* Pushes fdsets[key], creating it when create is set (else pushes nil). */
static void push_set(lua_State *L, cn_loop *lp, int key, int create) {
  cn_push_ref(L, lp->r_fdsets);            /* sets */
  if (lua_rawgeti(L, -1, key) == LUA_TNIL && create) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, key);               /* sets, set */
  }
  lua_remove(L, -2);
}

/* True when inner (a socket object) is not the one last seen on fd. The
 * table holds its values weakly: a collected socket reads as "not the same". */
static int new_file(lua_State *L, cn_loop *lp, int fd, int inner) {
  int same;
  cn_push_ref(L, lp->r_inner);
  lua_rawgeti(L, -1, fd);
  same = lua_rawequal(L, -1, inner);
  lua_pop(L, 2);
  return !same;
}

/* Remembers inner as the object on fd (once the poller has it). fdobj keeps
 * the address too, for the shortcut in cn_fd_register. */
static void remember_file(lua_State *L, cn_loop *lp, int fd, int inner) {
  cn_push_ref(L, lp->r_inner);
  lua_pushvalue(L, inner);
  lua_rawseti(L, -2, fd);
  lua_pop(L, 1);
  lp->fdobj[fd] = lua_topointer(L, inner);
}

/* Adds wait i of task slot on fd for kind: the object is at index obj, its
 * socket at index inner. Raises a Lua error, before changing anything, when
 * the poller refuses the fd or a native wrapper already has a waiter. */
void cn_fd_register(lua_State *L, cn_loop *lp, int slot, int i, int fd, int kind, int obj,
                    int inner, int how) {
  int key = fd * 2 + kind, force, want, native = how & CN_FD_NATIVE;
  const void *id;
  obj = lua_absindex(L, obj);
  inner = lua_absindex(L, inner);
  if (fd >= lp->nfd) grow_fds(L, lp, fd);
  if (native && lp->natslot[key] != 0)
    luaL_error(L, "%s waker already set, sockets can only block one thread per waker kind",
               cn_kind_name(kind));
  /* Another socket on a watched fd number may be a different file that reuses
   * the number of a closed one, which epoll dropped by itself: tell the poller
   * again. The same socket waiting again costs nothing. */
  /* A wrapper with a cached fd was registered on it before (the cache is
   * only filled then), so if the last object seen there has its address,
   * that object is this live wrapper: no other can have taken its place. */
  id = lua_topointer(L, inner);
  if ((how & CN_FD_CACHED) && lp->fdobj[fd] == id) force = 0;
  else {
    luaL_checkstack(L, 4, NULL);
    force = new_file(L, lp, fd, inner);
  }
  want = cn_poller_get(&lp->poller, fd) | (kind == K_RECV ? CN_READ : CN_WRITE);
  if (force || want != cn_poller_get(&lp->poller, fd)) {
    if (cn_poller_set(&lp->poller, fd, want, force) != 0) {
      int err = errno;
      luaL_checkstack(L, 4, NULL);
      cn_push_label(L, lp, slot);
      if (err == ERANGE)
        luaL_error(L, "descriptor too large for set size (fd %d of task %s does not fit the %s poller)",
                   fd, lua_tostring(L, -1), lp->poller.backend->name);
      luaL_error(L, "cosock: cannot poll fd %d of task %s: %s", fd, lua_tostring(L, -1), strerror(err));
    }
  }
  if (force) remember_file(L, lp, fd, inner);
  else lp->fdobj[fd] = id;                 /* the same live object */
  if (native) {
    lp->natslot[key] = slot + 1;
    lp->natwait[key] = i;
  } else {
    lua_Integer c;
    luaL_checkstack(L, 4, NULL);
    push_set(L, lp, key, 1);               /* set */
    lua_pushvalue(L, obj);
    lua_rawget(L, -2);
    c = lua_tointeger(L, -1);
    lua_pop(L, 1);
    lua_pushvalue(L, obj);
    lua_pushinteger(L, c + 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  if (lp->fdcount[fd * 2] + lp->fdcount[fd * 2 + 1] == 0) lp->nwaitfds++;
  lp->fdcount[key]++;
}

/* Removes a wait registered by cn_fd_register (obj: the object's index). */
void cn_fd_unregister(lua_State *L, cn_loop *lp, int slot, int fd, int kind, int obj, int native) {
  int key = fd * 2 + kind;
  if (fd < 0 || fd >= lp->nfd || lp->fdcount[key] == 0) return;
  if (native) {
    if (lp->natslot[key] == slot + 1) lp->natslot[key] = 0;
  } else {
    lua_Integer c;
    obj = lua_absindex(L, obj);
    push_set(L, lp, key, 0);               /* set or nil */
    if (lua_istable(L, -1)) {
      lua_pushvalue(L, obj);
      lua_rawget(L, -2);
      c = lua_tointeger(L, -1) - 1;
      lua_pop(L, 1);
      lua_pushvalue(L, obj);
      if (c > 0) lua_pushinteger(L, c); else lua_pushnil(L);
      lua_rawset(L, -3);
    }
    lua_pop(L, 1);
  }
  if (--lp->fdcount[key] == 0) {
    if (lp->fdcount[fd * 2] + lp->fdcount[fd * 2 + 1] == 0) lp->nwaitfds--;
    if (!lp->fdflag[fd]) {
      lp->fdflag[fd] = 1;
      lp->dirty[lp->ndirty++] = fd;
    }
  }
}

/* Ends the poller's interest in what nobody waits on any more. */
void cn_fd_apply(cn_loop *lp) {
  int i;
  for (i = 0; i < lp->ndirty; i++) {
    int fd = lp->dirty[i];
    int want = (lp->fdcount[fd * 2] ? CN_READ : 0) | (lp->fdcount[fd * 2 + 1] ? CN_WRITE : 0);
    lp->fdflag[fd] = 0;
    /* Removing interest cannot fail in a way that matters: a closed fd has
     * already left the kernel's set. */
    cn_poller_set(&lp->poller, fd, want & cn_poller_get(&lp->poller, fd), 0);
  }
  lp->ndirty = 0;
}

/* Wakes what waits on fd for kind: the native waiter directly, then every
 * protocol object through obj:_wake(kind). */
static void wake_key(lua_State *L, cn_loop *lp, int fd, int kind) {
  int key = fd * 2 + kind, top, nobj = 0, j;
  int others = lp->fdcount[key];
  if (lp->natslot[key] != 0) {
    cn_task *t = cn_task_get(lp, lp->natslot[key] - 1);
    others--;
    if (t != NULL) cn_deliver(L, lp, t, lp->natwait[key]);
  }
  if (others <= 0) return;
  top = lua_gettop(L);
  push_set(L, lp, key, 0);                  /* set */
  if (!lua_istable(L, -1)) { lua_settop(L, top); return; }
  /* Collect first: a _wake may change the set. */
  lua_pushnil(L);
  while (lua_next(L, top + 1)) {            /* set, objs..., obj, count */
    lua_pop(L, 1);
    luaL_checkstack(L, 3, NULL);
    lua_pushvalue(L, -1);                   /* set, objs..., obj, obj */
    lua_insert(L, -2);
    nobj++;
  }
  for (j = 0; j < nobj; j++) {
    int o = top + 2 + j;
    if (lua_getfield(L, o, "_wake") == LUA_TNIL)
      luaL_error(L, "non-wakeable socket (an object polled for %s has no _wake method)",
                 cn_kind_name(kind));
    lua_pushvalue(L, o);
    lua_pushstring(L, cn_kind_name(kind));
    lua_call(L, 2, 0);
  }
  lua_settop(L, top);
}

void cn_fd_dispatch(lua_State *L, cn_loop *lp, const cn_event *ev, int n) {
  int i, kind;
  for (i = 0; i < n; i++) {
    int fd = ev[i].fd;
    if (fd < 0 || fd >= lp->nfd) continue;
    for (kind = K_RECV; kind <= K_SEND; kind++) {
      int bit = kind == K_RECV ? CN_READ : CN_WRITE;
      if ((ev[i].events & bit) && lp->fdcount[fd * 2 + kind] > 0) wake_key(L, lp, fd, kind);
    }
  }
}

/* fd is about to be closed: wake everything that waits on it (their next call
 * reports the close) and drop it from the poller while it is still open. */
void cn_fd_closing(lua_State *L, cn_loop *lp, int fd) {
  cn_event ev;
  if (fd < 0 || fd >= lp->nfd) return;
  ev.fd = fd;
  ev.events = CN_READ | CN_WRITE;
  cn_fd_dispatch(L, lp, &ev, 1);
  cn_poller_set(&lp->poller, fd, 0, 0);
  lp->fdobj[fd] = NULL;
}

/* Frees the poller and every per-fd array. */
void cn_fd_free(cn_loop *lp) {
  size_t n = (size_t)lp->nfd;
  cn_poller_free(&lp->poller);
  cn_mem_free(&lp->mem, lp->fdcount, 2 * n * sizeof *lp->fdcount);
  cn_mem_free(&lp->mem, lp->natslot, 2 * n * sizeof *lp->natslot);
  cn_mem_free(&lp->mem, lp->natwait, 2 * n * sizeof *lp->natwait);
  cn_mem_free(&lp->mem, lp->fdflag, n * sizeof *lp->fdflag);
  cn_mem_free(&lp->mem, (void *)lp->fdobj, n * sizeof *lp->fdobj);
  cn_mem_free(&lp->mem, lp->dirty, n * sizeof *lp->dirty);
  lp->fdcount = lp->natslot = lp->natwait = lp->dirty = NULL;
  lp->fdflag = NULL;
  lp->fdobj = NULL;
  lp->nfd = lp->ndirty = lp->nwaitfds = 0;
}

/* Forgets every fd (for reset). Returns 0, or -1 if the poller cannot be made. */
int cn_fd_reset(cn_loop *lp, const cn_backend *b) {
  cn_poller fresh;
  /* The new poller first: on failure the loop keeps a working one. */
  if (cn_poller_init(&fresh, b) != 0) {
    int err = errno;
    cn_poller_free(&fresh);
    errno = err;
    return -1;
  }
  cn_fd_free(lp);
  lp->poller = fresh;
  return 0;
}

/* waiters: the waiter index, which objects wait on which fd, kept from pass
 * to pass, and the poller behind it. Owns loop->waiters, the tables fdsets
 * and inner, and the fd cache kept in the project's wrappers.
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

#include "hooks.h"
#include "mem.h"
#include "task.h"
#include "waiters.h"
#include "messages.h"

/* The per-fd arrays: where each is, its entries per fd, its element size.
 * They come from the Lua state's allocator (mem.c), which is told each
 * block's true size, so they always have exactly the size nfd says. */
typedef struct fd_array { void **p; size_t mult, size; } fd_array;

static int fd_arrays(cn_loop *lp, fd_array *a) {
  a[0] = (fd_array){ (void **)&lp->waiters.fdcount, 2, sizeof *lp->waiters.fdcount };
  a[1] = (fd_array){ (void **)&lp->waiters.natslot, 2, sizeof *lp->waiters.natslot };
  a[2] = (fd_array){ (void **)&lp->waiters.natwait, 2, sizeof *lp->waiters.natwait };
  a[3] = (fd_array){ (void **)&lp->waiters.fdflag, 1, sizeof *lp->waiters.fdflag };
  a[4] = (fd_array){ (void **)&lp->waiters.fdobj, 1, sizeof *lp->waiters.fdobj };
  /* dirty[] holds each fd at most once (fdflag): nfd entries always do. */
  a[5] = (fd_array){ (void **)&lp->waiters.dirty, 1, sizeof *lp->waiters.dirty };
  return 6;
}

/* fdflag bits: queued in dirty[]; watched for reading, for writing (by the
 * loop's own C code, see cn_fd_watch: the watch bits are CN_READ/CN_WRITE
 * shifted by one). */
enum { FD_DIRTY = 1, FD_WATCH_SHIFT = 1 };

/* What C code of the loop watches fd for (CN_READ | CN_WRITE), 0 if nothing. */
static int watched(const cn_loop *lp, int fd) {
  return (lp->waiters.fdflag[fd] >> FD_WATCH_SHIFT) & (CN_READ | CN_WRITE);
}

/* Grows the per-fd arrays to hold fd. Returns 0, or -1 with errno (ERANGE:
 * fd is too large; ENOMEM) and the arrays as they were. */
static int grow_fds_to(cn_loop *lp, int fd) {
  fd_array a[6];
  size_t old = (size_t)lp->waiters.nfd, n = old ? old : 64;
  int i, count = fd_arrays(lp, a);
  if (fd >= CN_MAX_FD) return errno = ERANGE, -1;
  while (n <= (size_t)fd) n *= 2;
  for (i = 0; i < count; i++) {
    char *q = cn_mem_resize(&lp->mem, *a[i].p, a[i].mult * old * a[i].size, a[i].mult * n * a[i].size);
    if (q == NULL) {
      /* Those already grown go back to nfd entries (shrinking cannot fail). */
      while (--i >= 0)
        *a[i].p = cn_mem_resize(&lp->mem, *a[i].p, a[i].mult * n * a[i].size,
                                a[i].mult * old * a[i].size);
      return errno = ENOMEM, -1;
    }
    memset(q + a[i].mult * old * a[i].size, 0, a[i].mult * (n - old) * a[i].size);
    *a[i].p = q;
  }
  lp->waiters.nfd = (int)n;
  return 0;
}

static void grow_fds(lua_State *L, cn_loop *lp, int fd) {
  if (grow_fds_to(lp, fd) == 0) return;
  if (errno == ERANGE) luaL_error(L, "cosock: descriptor %d is too large", fd);
  luaL_error(L, CN_MSG_NO_MEMORY);
}

/* Pushes fdsets[key], creating it when create is set (else pushes nil). */
static void push_set(lua_State *L, cn_loop *lp, int key, int create) {
  cn_push_ref(L, lp->waiters.r_fdsets);            /* sets */
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
  cn_push_ref(L, lp->waiters.r_inner);
  lua_rawgeti(L, -1, fd);
  same = lua_rawequal(L, -1, inner);
  lua_pop(L, 2);
  return !same;
}

/* Remembers inner as the object on fd (once the poller has it). fdobj keeps
 * the address too, for the shortcut in cn_fd_register. */
static void remember_file(lua_State *L, cn_loop *lp, int fd, int inner) {
  cn_push_ref(L, lp->waiters.r_inner);
  lua_pushvalue(L, inner);
  lua_rawseti(L, -2, fd);
  lua_pop(L, 1);
  lp->waiters.fdobj[fd] = lua_topointer(L, inner);
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
  if (fd >= lp->waiters.nfd) grow_fds(L, lp, fd);
  if (native && lp->waiters.natslot[key] != 0) {
    luaL_checkstack(L, 4, NULL);
    cn_push_label(L, lp, slot);
    cn_push_object_name(L, obj);
    luaL_error(L, "%s " CN_MSG_SOCKET_WAKER_SET "\n"
               "(task %s waiting on %s)", cn_kind_name(kind), lua_tostring(L, -2), lua_tostring(L, -1));
  }
  /* Another socket on a watched fd number may be a different file that reuses
   * the number of a closed one, which epoll dropped by itself: tell the poller
   * again. The same socket waiting again costs nothing. */
  /* A wrapper with a cached fd was registered on it before (the cache is
   * only filled then), so if the last object seen there has its address,
   * that object is this live wrapper: no other can have taken its place. */
  id = lua_topointer(L, inner);
  if ((how & CN_FD_CACHED) && lp->waiters.fdobj[fd] == id) force = 0;
  else {
    luaL_checkstack(L, 4, NULL);
    force = new_file(L, lp, fd, inner);
  }
  want = cn_poller_get(&lp->waiters.poller, fd) | (kind == K_RECV ? CN_READ : CN_WRITE);
  if (force || want != cn_poller_get(&lp->waiters.poller, fd)) {
    if (cn_poller_set(&lp->waiters.poller, fd, want, force) != 0) {
      int err = errno;
      luaL_checkstack(L, 4, NULL);
      cn_push_label(L, lp, slot);
      if (err == ERANGE)
        luaL_error(L, "descriptor too large for set size (fd %d of task %s does not fit the %s poller)",
                   fd, lua_tostring(L, -1), lp->waiters.poller.backend->name);
      luaL_error(L, "cosock: cannot poll fd %d of task %s: %s", fd, lua_tostring(L, -1), strerror(err));
    }
  }
  if (force) remember_file(L, lp, fd, inner);
  else lp->waiters.fdobj[fd] = id;                 /* the same live object */
  if (native) {
    lp->waiters.natslot[key] = slot + 1;
    lp->waiters.natwait[key] = i;
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
  if (lp->waiters.fdcount[fd * 2] + lp->waiters.fdcount[fd * 2 + 1] == 0) lp->waiters.nwaitfds++;
  lp->waiters.fdcount[key]++;
}

/* Removes a wait registered by cn_fd_register (obj: the object's index). */
void cn_fd_unregister(lua_State *L, cn_loop *lp, int slot, int fd, int kind, int obj, int native) {
  int key = fd * 2 + kind;
  if (fd < 0 || fd >= lp->waiters.nfd || lp->waiters.fdcount[key] == 0) return;
  if (native) {
    if (lp->waiters.natslot[key] == slot + 1) lp->waiters.natslot[key] = 0;
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
  if (--lp->waiters.fdcount[key] == 0) {
    if (lp->waiters.fdcount[fd * 2] + lp->waiters.fdcount[fd * 2 + 1] == 0) lp->waiters.nwaitfds--;
    if (!(lp->waiters.fdflag[fd] & FD_DIRTY)) {
      lp->waiters.fdflag[fd] |= FD_DIRTY;
      lp->waiters.dirty[lp->waiters.ndirty++] = fd;
    }
  }
}

/* Ends the poller's interest in what nobody waits on any more. */
void cn_fd_apply(cn_loop *lp) {
  int i;
  for (i = 0; i < lp->waiters.ndirty; i++) {
    int fd = lp->waiters.dirty[i];
    int want = (lp->waiters.fdcount[fd * 2] ? CN_READ : 0) | (lp->waiters.fdcount[fd * 2 + 1] ? CN_WRITE : 0);
    int mask = cn_poller_get(&lp->waiters.poller, fd);
    want |= watched(lp, fd);
    lp->waiters.fdflag[fd] &= (unsigned char)~FD_DIRTY;
    /* Removing interest cannot fail in a way that matters: a closed fd has
     * already left the kernel's set. (Waited on again: nothing to remove.) */
    if ((want & mask) != mask) cn_poller_set(&lp->waiters.poller, fd, want & mask, 0);
  }
  lp->waiters.ndirty = 0;
}

/* Wakes what waits on fd for kind: the native waiter directly, then every
 * protocol object through obj:_wake(kind). */
static void wake_key(lua_State *L, cn_loop *lp, int fd, int kind) {
  int key = fd * 2 + kind, top, nobj = 0, j;
  int others = lp->waiters.fdcount[key];
  lp->hooks.waking = key + 1;                  /* (why they wake: for CN_AT_READY) */
  if (lp->waiters.natslot[key] != 0) {
    cn_task *t = cn_task_get(lp, lp->waiters.natslot[key] - 1);
    others--;
    if (t != NULL) lp->waiters.deliver(L, lp, t, lp->waiters.natwait[key]);
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
      luaL_error(L, CN_MSG_NON_WAKEABLE "\n(an object polled for %s has no _wake method)",
                 cn_kind_name(kind));
    lua_pushvalue(L, o);
    lua_pushstring(L, cn_kind_name(kind));
    lua_call(L, 2, 0);
  }
  lua_settop(L, top);
}

/* Watched fds handled per poll; the pollers are level-triggered, so any
 * beyond that are reported again by the next one. */
#define MAX_WATCHED_EVENTS 16

/* The n events of own (NULL: the poller's buffer). Those of the poller are
 * read one at a time, never through a pointer kept across a wake: a _wake
 * (or a finalizer) may make the poller watch more fds (a lookup's socket,
 * say), and it then regrows that buffer (keeping the events in it). */
static void dispatch(lua_State *L, cn_loop *lp, const cn_event *own, int n) {
  cn_event w[MAX_WATCHED_EVENTS];
  int i, kind, nw = 0;
  for (i = 0; i < n; i++) {
    cn_event ev = own ? own[i] : lp->waiters.poller.events[i];
    int fd = ev.fd;
    if (fd < 0 || fd >= lp->waiters.nfd) continue;
    if ((watched(lp, fd) & ev.events) && nw < MAX_WATCHED_EVENTS) w[nw++] = ev;
    for (kind = K_RECV; kind <= K_SEND; kind++) {
      int bit = kind == K_RECV ? CN_READ : CN_WRITE;
      if ((ev.events & bit) && lp->waiters.fdcount[fd * 2 + kind] > 0) wake_key(L, lp, fd, kind);
    }
  }
  /* After the walk: a watch may have ended since. */
  for (i = 0; i < nw; i++)
    if (w[i].fd < lp->waiters.nfd && (watched(lp, w[i].fd) & w[i].events))
      lp->waiters.watcher(L, lp, w[i].fd, w[i].events);
}

int cn_fd_poll(lua_State *L, cn_loop *lp, double timeout) {
  cn_event *ev;
  int n = cn_poller_wait(&lp->waiters.poller, timeout, &ev);
  if (n < 0) return -1;
  lp->waiters.nready = n;
  dispatch(L, lp, NULL, n);
  lp->hooks.waking = 0;
  return 0;
}

void cn_fd_release_native(cn_loop *lp, int fd, int kind, int slot) {
  int key = fd * 2 + kind;
  if (fd < lp->waiters.nfd && lp->waiters.natslot[key] == slot + 1) lp->waiters.natslot[key] = 0;
}

/* Takes wait i of task slot (object at obj, -1 for a native wait) off fd
 * for kind without waking it: the task stays parked on its other waits and
 * its timeout, and its unpark no longer touches fd. */
static void detach(lua_State *L, cn_loop *lp, int slot, int i, int fd, int kind, int obj, int native) {
  cn_task *t = cn_task_get(lp, slot);
  if (t == NULL || i >= t->nwait || t->waits[i].fd != fd || t->waits[i].kind != kind) return;
  cn_fd_unregister(L, lp, slot, fd, kind, obj, native);
  t->waits[i].fd = -1;
  t->waits[i].closed = 1;
}

/* True when some object that speaks the waker protocol waits on fd. */
static int has_protocol_waiter(lua_State *L, cn_loop *lp, int fd) {
  int kind, found = 0;
  for (kind = K_RECV; kind <= K_SEND && !found; kind++) {
    push_set(L, lp, fd * 2 + kind, 0);
    if (lua_istable(L, -1)) {
      lua_pushnil(L);
      if (lua_next(L, -2)) { found = 1; lua_pop(L, 2); }
    }
    lua_pop(L, 1);
  }
  return found;
}

/* cosock's close: fd is about to be closed and nobody is woken. LuaSocket's
 * select skips a closed socket, so on cosock a task waiting on it waits for
 * its timeout (for ever without one). Its waits leave the index, so a new
 * socket that reuses the number never wakes it. The native waiter of each
 * kind is found directly; objects of other libraries that share the socket
 * (rare) by a walk over the tasks. */
static void fd_detach(lua_State *L, cn_loop *lp, int fd) {
  int kind, s, i;
  for (kind = K_RECV; kind <= K_SEND; kind++) {
    int key = fd * 2 + kind;
    if (lp->waiters.natslot[key] != 0)
      detach(L, lp, lp->waiters.natslot[key] - 1, lp->waiters.natwait[key], fd, kind, -1, 1);
  }
  if (!has_protocol_waiter(L, lp, fd)) return;
  luaL_checkstack(L, 4, NULL);
  for (s = 0; s < cn_tasks_slots(lp); s++) {
    cn_task *t = cn_task_get(lp, s);
    for (i = 0; t != NULL && i < t->nwait; i++) {
      if (t->waits[i].fd != fd || t->waits[i].native) continue;
      cn_task_push_record(L, lp, s);
      if (lua_istable(L, -1)) {
        lua_rawgeti(L, -1, R_WAIT + i);
        detach(L, lp, s, i, fd, t->waits[i].kind, lua_gettop(L), 0);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
  }
}

/* fd is about to be closed: with set_close_wakes(true) wake everything that
 * waits on it (their next call reports the close), else leave them parked
 * (fd_detach); either way drop it from the poller while it is still open. */
static void fd_closing(lua_State *L, cn_loop *lp, int fd) {
  cn_event ev;
  if (fd < 0 || fd >= lp->waiters.nfd) return;
  if (cn_at_on(lp, CN_AT_CLOSE_WAKES)) {
    unsigned char was = cn_cause_set(lp, CN_CAUSE_CLOSE); /* (why they wake: hooks.h) */
    ev.fd = fd;
    ev.events = CN_READ | CN_WRITE;
    dispatch(L, lp, &ev, 1);
    cn_cause_set(lp, was);
    lp->hooks.waking = 0;
  } else {
    fd_detach(L, lp, fd);
  }
  cn_poller_set(&lp->waiters.poller, fd, 0, 0);
  lp->waiters.fdobj[fd] = NULL;
}

/* ---- fds of the loop's own C code --------------------------------------------
 * The resolver's sockets (resolver.c) belong to no task: their readiness
 * goes to the watcher function. Their interest joins the tasks' in the
 * poller (cn_fd_apply keeps it). A watch never raises: it runs inside
 * c-ares, which must not be unwound by a Lua error. */
void cn_fd_set_watcher(cn_loop *lp, cn_fd_watcher fn) {
  lp->waiters.watcher = fn;
}

void cn_fd_set_deliverer(cn_loop *lp, cn_fd_deliverer fn) {
  lp->waiters.deliver = fn;
}

void cn_fd_set_reader(cn_loop *lp, cn_fd_reader fn) {
  lp->waiters.reader = fn;
}

int cn_fd_read(lua_State *L, cn_loop *lp, int inner) {
  return lp->waiters.reader ? lp->waiters.reader(L, lp, inner) : CN_FD_UNKNOWN;
}

/* The fd of the socket object on top of the stack, replaced by it: read by
 * the reader, else by its getfd(). -1 when it has none. */
static lua_Integer top_fd(lua_State *L, cn_loop *lp) {
  int isnum, fd = cn_fd_read(L, lp, -1);
  lua_Integer n;
  if (fd != CN_FD_UNKNOWN) {
    lua_pop(L, 1);
    return fd;
  }
  if (lua_getfield(L, -1, "getfd") == LUA_TNIL) {
    lua_pop(L, 2);
    return -1;
  }
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  n = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  return isnum ? n : -1;
}

int cn_fd_watch(cn_loop *lp, int fd, int events) {
  int tasks, was;
  events &= CN_READ | CN_WRITE;
  if (fd < 0) return errno = EBADF, -1;
  if (fd >= lp->waiters.nfd) {
    if (events == 0) return 0;                 /* (forgotten by a reset) */
    if (grow_fds_to(lp, fd) != 0) return -1;
  }
  was = watched(lp, fd);
  if (was == events) return 0;
  tasks = (lp->waiters.fdcount[fd * 2] ? CN_READ : 0) | (lp->waiters.fdcount[fd * 2 + 1] ? CN_WRITE : 0);
  /* A new watch is a new file on that number: the poller is told again
   * (epoll dropped the closed file by itself), and a task's later wait on
   * the number is not taken for a wait on the same socket (fdobj). */
  if (cn_poller_set(&lp->waiters.poller, fd, tasks | events, was == 0) != 0) return -1;
  if (was == 0) lp->waiters.fdobj[fd] = NULL;
  lp->waiters.fdflag[fd] = (unsigned char)((lp->waiters.fdflag[fd] & FD_DIRTY) | (events << FD_WATCH_SHIFT));
  return 0;
}

/* ---- the fd cache of the project's wrappers -------------------------------
 * Kept in the wrapper table under an integer key no Lua code of the project
 * reads or writes (FD_KEY, negative: never part of a sequence, so # and
 * ipairs do not see it): written when the loop first registers the
 * wrapper's socket, read on every later wait, dropped by closing() and
 * forget_fd(). An integer key because Lua finds one in a few instructions
 * (a light userdata key took a generic lookup, 143 instructions a wait).
 * Still a value in a table a program can reach with next(), so only a
 * plausible fd is trusted. */
#define FD_KEY (-1668248427)                   /* "cosk" */

int cn_fd_cached(lua_State *L, int obj) {
  int isnum = 0;
  lua_Integer fd = 0;
  if (lua_rawgeti(L, obj, FD_KEY) == LUA_TNUMBER) fd = lua_tointegerx(L, -1, &isnum);
  lua_pop(L, 1);
  return isnum && fd >= 0 && fd < CN_MAX_FD ? (int)fd : -1;
}

void cn_fd_cache(lua_State *L, int obj, int fd) {
  obj = lua_absindex(L, obj);
  if (fd >= 0) lua_pushinteger(L, fd);
  else lua_pushnil(L);
  lua_rawseti(L, obj, FD_KEY);
}

/* ---- waits whose object has no fd yet ---------------------------------------
 * A short list (waiters.h, cn_fd_late_add), asked again after the resumes of
 * every pass: what could give the object its fd (a sendto, a connect) runs
 * in a task, in code between two steps, or in a waker, and each of those is
 * followed by a pass. An entry names the wait (slot, wait index, wait id);
 * one whose task has moved on is dropped at the next pass (no work when a
 * wait ends). The objects are kept in the table r_late at the same position,
 * for the bare waits, which keep their object nowhere the loop can reach. */
struct cn_late { lua_Integer waitid; int slot, i; };

void cn_fd_late_add(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj) {
  int n = lp->waiters.nlate;
  obj = lua_absindex(L, obj);
  if (n == lp->waiters.caplate) {
    int cap = n ? n * 2 : 8;
    struct cn_late *p = cn_mem_resize(&lp->mem, lp->waiters.late, (size_t)n * sizeof *p,
                                      (size_t)cap * sizeof *p);
    if (p == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
    lp->waiters.late = p;
    lp->waiters.caplate = cap;
  }
  luaL_checkstack(L, 2, NULL);
  cn_push_ref(L, lp->waiters.r_late);
  lua_pushvalue(L, obj);
  lua_rawseti(L, -2, n + 1);                   /* may raise: nothing listed yet */
  lua_pop(L, 1);
  lp->waiters.late[n].waitid = t->waitid;
  lp->waiters.late[n].slot = t->slot;
  lp->waiters.late[n].i = i;
  lp->waiters.nlate = n + 1;
}

/* Takes entry k out, the last one moving into its place (the table entry
 * too: a move between keys that exist allocates nothing). tab: r_late. */
static void late_remove(lua_State *L, cn_loop *lp, int tab, int k) {
  int last = --lp->waiters.nlate;
  lp->waiters.late[k] = lp->waiters.late[last];
  lua_rawgeti(L, tab, last + 1);
  lua_rawseti(L, tab, k + 1);
  lua_pushnil(L);
  lua_rawseti(L, tab, last + 1);
}

void cn_fd_late_take(lua_State *L, cn_loop *lp, int k, int *slot, lua_Integer *waitid, int *i) {
  struct cn_late e = lp->waiters.late[k];
  int tab;
  luaL_checkstack(L, 3, NULL);
  cn_push_ref(L, lp->waiters.r_late);
  tab = lua_gettop(L);
  lua_rawgeti(L, tab, k + 1);                  /* late, obj */
  late_remove(L, lp, tab, k);
  lua_remove(L, tab);                          /* obj */
  *slot = e.slot;
  *waitid = e.waitid;
  *i = e.i;
}

/* ---- life of the index ----------------------------------------------------- */

static void free_arrays(cn_loop *lp) {
  fd_array a[6];
  int i, count = fd_arrays(lp, a);
  for (i = 0; i < count; i++) {
    cn_mem_free(&lp->mem, *a[i].p, a[i].mult * (size_t)lp->waiters.nfd * a[i].size);
    *a[i].p = NULL;
  }
  lp->waiters.nfd = lp->waiters.ndirty = lp->waiters.nwaitfds = 0;
  cn_mem_free(&lp->mem, lp->waiters.late, (size_t)lp->waiters.caplate * sizeof *lp->waiters.late);
  lp->waiters.late = NULL;
  lp->waiters.nlate = lp->waiters.caplate = 0;
}

/* Pushes the three fresh tables (late, fdsets, inner), or raises. */
static void new_tables(lua_State *L) {
  lua_newtable(L);                             /* late */
  lua_newtable(L);                             /* fdsets */
  lua_newtable(L);                             /* inner: weak values (see new_file) */
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
}

int cn_waiters_init(lua_State *L, cn_loop *lp, const cn_backend *b) {
  lp->waiters.backend0 = b;
  lua_pushboolean(L, 0);                       /* registry slots (a nil would not take one) */
  lp->waiters.r_fdsets = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->waiters.r_inner = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushboolean(L, 0);
  lp->waiters.r_late = luaL_ref(L, LUA_REGISTRYINDEX);
  new_tables(L);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_inner);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_fdsets);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_late);
  return cn_poller_init(&lp->waiters.poller, b);
}

int cn_waiters_reset(lua_State *L, cn_loop *lp) {
  cn_poller fresh;
  new_tables(L);                               /* may raise: nothing changed yet */
  /* The new poller first: on failure the loop keeps a working one. */
  if (cn_poller_init(&fresh, lp->waiters.backend0) != 0) {
    int err = errno;
    cn_poller_free(&fresh);
    lua_pop(L, 3);
    errno = err;
    return -1;
  }
  cn_poller_free(&lp->waiters.poller);
  free_arrays(lp);
  lp->waiters.poller = fresh;
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_inner);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_fdsets);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->waiters.r_late);
  return 0;
}

void cn_waiters_free(lua_State *L, cn_loop *lp) {
  cn_poller_free(&lp->waiters.poller);
  free_arrays(lp);
  cn_unref(L, &lp->waiters.r_fdsets);
  cn_unref(L, &lp->waiters.r_inner);
  cn_unref(L, &lp->waiters.r_late);
}

/* ---- Lua functions -------------------------------------------------------- */

/* closing(wrapper) -> boolean: the wrapper's socket is about to be closed;
 * tasks waiting on it are woken or left parked (fd_closing) and its fd
 * cache goes. Returns whether close wakes (set_close_wakes): the wrapper
 * then calls the wakers it keeps too. */
static int l_closing(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_Integer fd;
  luaL_checktype(L, 1, LUA_TTABLE);
  cn_fd_cache(L, 1, -1);
  lua_pushboolean(L, cn_at_on(lp, CN_AT_CLOSE_WAKES));
  if (lua_getfield(L, 1, "inner_sock") == LUA_TNIL) return lua_settop(L, 2), 1;
  fd = top_fd(L, lp);
  if (fd >= 0 && fd < lp->waiters.nfd) fd_closing(L, lp, (int)fd);
  lua_settop(L, 2);
  return 1;
}

/* wake(obj, kind) -> boolean: obj:_wake(kind) for a native wrapper, which
 * has no waker of the loop's to call: wakes the task the loop parked on it,
 * once per wait. */
static int l_wake(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  static const char *const kinds[] = {"recvr", "sendr", NULL};
  int kind = luaL_checkoption(L, 2, NULL, kinds), key, i;
  lua_Integer fd;
  cn_task *t;
  lua_settop(L, 2);
  if (lua_getfield(L, 1, "inner_sock") == LUA_TNIL) return lua_pushboolean(L, 0), 1;
  fd = top_fd(L, lp);
  if (fd < 0 || fd >= lp->waiters.nfd) return lua_pushboolean(L, 0), 1;
  key = (int)fd * 2 + kind;
  t = lp->waiters.natslot[key] ? cn_task_get(lp, lp->waiters.natslot[key] - 1) : NULL;
  i = lp->waiters.natwait[key];
  if (t == NULL || t->waits[i].fired) return lua_pushboolean(L, 0), 1;
  if (t->waits[i].obj != lua_topointer(L, 1))
    return lua_pushboolean(L, 0), 1;           /* another wrapper on that fd */
  lp->waiters.deliver(L, lp, t, i);
  lua_pushboolean(L, 1);
  return 1;
}

/* forget_fd(wrapper): the wrapper's socket changed (setfd): its fd cache goes. */
static int l_forget_fd(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  cn_fd_cache(L, 1, -1);
  return 0;
}

/* set_backend(name): polls with "select" or "epoll" from now on. */
static int l_set_backend(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  const char *name = luaL_checkstring(L, 1);
  const cn_backend *b = cn_backend_named(name);
  if (b == NULL) return luaL_argerror(L, 1, lua_pushfstring(L, "unknown poller backend '%s'", name));
  if (cn_poller_switch(&lp->waiters.poller, b) != 0)
    return luaL_error(L, "cosock: cannot switch to the %s poller: %s", name, strerror(errno));
  lp->waiters.backend0 = b; /* reset keeps it */
  return 0;
}

#ifdef HAVE_SYS_EPOLL_H
int cn_fd_epoll(cn_loop *lp) {
  cn_poller *p = &lp->waiters.poller;
  if (cn_poller_switch(p, &cn_backend_epoll) != 0) return -1; /* (none to make when it is) */
  return cn_epoll_fd(p->state);
}
#endif

void cn_waiters_open(lua_State *L) {
  static const luaL_Reg funcs[] = {
    {"closing", l_closing}, {"forget_fd", l_forget_fd}, {"wake", l_wake}, {"set_backend", l_set_backend}, {NULL, NULL}
  };
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}

/* park: what happens when a task yields (recvt, sendt, timeout) and when it
 * is taken out of that wait again; the waker functions handed to objects.
 *
 * A waker is a C closure with upvalues (loop, obj, slot, tag) where tag is
 * waitid * 2 + kind. It is valid for one wait, once: it does nothing when the
 * task has moved on (waitid differs), timed out, or the waker already ran.
 * Owns loop->park: the wait being made, and the wrapper classes. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "park.h"
#include "task.h"
#include "waiters.h"
#include "messages.h"

#define ONE_YEAR (365.0 * 24 * 3600)

const char cn_internal_mark = 0;

/* Adds the object at index obj to the recvr or sendr list in the record at
 * index rec, making the list on first use. */
static void append(lua_State *L, int kind, int rec, int obj) {
  if (lua_rawgeti(L, rec, R_RECVR + kind) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, -1);
    lua_rawseti(L, rec, R_RECVR + kind);
  }
  lua_pushvalue(L, obj);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

/* Wait i of t is ready (a native wrapper's fd, or its socket is closed):
 * list its object once and make the task ready, as its waker would. */
void cn_deliver(lua_State *L, cn_loop *lp, cn_task *t, int i) {
  int rec, kind, slot;
  if (i >= t->nwait || t->waits[i].fired || t->timed_out || t->waitid == 0) return;
  t->waits[i].fired = 1;
  kind = t->waits[i].kind;
  slot = t->slot;
  if (t->waits[i].native && t->waits[i].fd >= 0)
    cn_fd_release_native(lp, t->waits[i].fd, kind, slot);
  /* Ready before the list entry, which allocates: a memory error then
   * costs the entry, never the wake. */
  if (t->state == T_PARKED) cn_make_ready(lp, t);
  if (t->internal) return;                     /* nobody reads the lists */
  /* From here t is not read again: an allocation may run a finalizer that
   * cancels the task or resets the loop (which frees t). */
  luaL_checkstack(L, 4, NULL);
  cn_push_record(L, lp, slot);
  rec = lua_gettop(L);
  lua_rawgeti(L, rec, R_WAIT + i);
  append(L, kind, rec, rec + 1);
  lua_settop(L, rec - 1);
}

/* Turns the object on top into a call of its setwaker(kind, nil): pushes
 * setwaker, obj, kind, nil in its place, ready for a call with 3 arguments. */
static void prepare_unset(lua_State *L, int kind) {
  lua_getfield(L, -1, "setwaker");
  lua_insert(L, -2);                           /* setwaker, obj */
  lua_pushstring(L, cn_kind_name(kind));
  lua_pushnil(L);
}

/* setwaker(kind, nil) on obj, for lua_pcall (args: obj, kind as an
 * integer): finding setwaker and making the kind's name may raise too. */
static int unset_call(lua_State *L) {
  int kind = (int)lua_tointeger(L, 2), lenient = lua_toboolean(L, 3);
  lua_settop(L, 1);
  prepare_unset(L, kind);
  if (lenient && lua_isnil(L, -4)) return 0;   /* (a waker's object that lost its setwaker) */
  lua_call(L, 3, 0);
  return 0;
}

/* Calls setwaker(kind, nil) on the object on top (which it pops) under
 * lua_pcall, pushing nothing that allocates before the call: a memory error
 * is caught like any other. Returns the status; an error stays on top.
 * (unset_call comes from the registry: on 5.1 and LuaJIT pushing a C
 * function makes an object.) */
static int pcall_unset(lua_State *L, cn_loop *lp, int kind) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->park.r_unset);
  lua_insert(L, -2);
  lua_pushinteger(L, kind);
  return lua_pcall(L, 2, 0, 0);
}

static int waker(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  lua_Integer tag = lua_tointeger(L, lua_upvalueindex(4));
  int slot = (int)lua_tointeger(L, lua_upvalueindex(3));
  int kind = (int)(tag & 1), failed;
  cn_task *t = cn_task_get(lp, slot);
  if (tag < 0) return 0;                       /* already called once */
  lua_pushinteger(L, -1);
  lua_replace(L, lua_upvalueindex(4));
  if (t == NULL || t->waitid != tag / 2 || t->timed_out) return 0; /* stale */
  /* As cosock's loop does: the waker takes itself back first. Should that
   * raise (memory, the watchdog's interrupt, the object's own error), the
   * task is woken all the same and the error raised after: a waker that
   * raised has still woken (the fan-outs of cosock.op count on it). */
  lua_pushvalue(L, lua_upvalueindex(2));       /* obj (kept for append below) */
  lua_pushvalue(L, -1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->park.r_unset);
  lua_insert(L, -2);
  lua_pushinteger(L, kind);
  lua_pushboolean(L, 1);
  failed = lua_pcall(L, 3, 0, 0) != LUA_OK;    /* obj[, error] */
  t = cn_task_get(lp, slot);                   /* the call may have changed it */
  if (t == NULL || t->waitid != tag / 2 || t->timed_out) return failed ? lua_error(L) : 0;
  if (t->state == T_PARKED) cn_make_ready(lp, t); /* first: see cn_deliver */
  if (failed) return lua_error(L);
  if (!t->internal) {                          /* else nobody reads the lists */
    cn_push_record(L, lp, slot);               /* obj, rec */
    append(L, kind, lua_gettop(L), lua_gettop(L) - 1);
  }
  return 0;
}

void cn_push_wait_timeout(lua_State *L, const cn_task *t) {
  if (t->tmo == CN_TMO_NONE) lua_pushnil(L);
  else if (t->tmo == CN_TMO_INT) lua_pushinteger(L, t->tmo_v.ival);
  else lua_pushnumber(L, t->tmo_v.secs);
}

int cn_waker_stale(lua_State *L, cn_loop *lp, int idx) {
  lua_Integer tag;
  int slot, stale;
  cn_task *t;
  if (lua_tocfunction(L, idx) != waker) return 0;
  idx = lua_absindex(L, idx);
  lua_getupvalue(L, idx, 1);
  stale = lua_touserdata(L, -1) != (void *)lp;  /* another loop's: not ours to judge */
  lua_pop(L, 1);
  if (stale) return 0;
  lua_getupvalue(L, idx, 3);
  lua_getupvalue(L, idx, 4);
  slot = (int)lua_tointeger(L, -2);
  tag = lua_tointeger(L, -1);
  lua_pop(L, 2);
  t = cn_task_get(lp, slot);
  return tag < 0 || t == NULL || t->waitid != tag / 2 || t->timed_out;
}

int cn_waker_live(lua_State *L, cn_loop *lp, int idx) {
  void *owner;
  if (lua_tocfunction(L, idx) != waker) return 0;
  lua_getupvalue(L, idx, 1);
  owner = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return owner == (void *)lp && !cn_waker_stale(L, lp, idx);
}

/* Pushes a new waker for the object at index obj. */
static void push_waker(lua_State *L, int slot, lua_Integer waitid, int kind, int obj) {
  lua_pushvalue(L, LOOP_UPVALUE);
  lua_pushvalue(L, obj);
  lua_pushinteger(L, slot);
  lua_pushinteger(L, waitid * 2 + kind);
  lua_pushcclosure(L, waker, 4);
}

static void ensure_waits(lua_State *L, cn_loop *lp, cn_task *t, int n) {
  cn_wait *w;
  int cap;
  if (n <= t->capwait) return;
  cap = t->capwait < 4 ? 4 : t->capwait * 2;
  while (cap < n) cap *= 2;
  if (t->waits == &t->wait1) {                 /* the embedded one: move out */
    w = cn_mem_resize(&lp->mem, NULL, 0, (size_t)cap * sizeof *w);
    if (w != NULL) w[0] = t->wait1;
  } else {
    w = cn_mem_resize(&lp->mem, t->waits, (size_t)t->capwait * sizeof *w, (size_t)cap * sizeof *w);
  }
  if (w == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
  t->waits = w;
  t->capwait = cap;
}

/* Appends a wait of t on the object at index obj (not yet polled). */
static void add_wait(lua_State *L, cn_loop *lp, cn_task *t, int obj, int kind, int native) {
  cn_wait *w;
  ensure_waits(L, lp, t, t->nwait + 1);
  w = &t->waits[t->nwait++];
  w->obj = lua_topointer(L, obj);
  w->fd = -1;
  w->kind = (unsigned char)kind;
  w->native = (unsigned char)native;
  w->fired = 0;
  w->closed = 0;
}

/* True when the value at obj has one of the registered wrapper metatables.
 * Those stay alive in r_natives, so comparing addresses is exact. */
int cn_is_native(lua_State *L, cn_loop *lp, int obj) {
  int i, found = 0;
  const void *mt;
  if (lp->park.nnatmt == 0 || !lua_getmetatable(L, obj)) return 0;
  mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  for (i = 0; i < lp->park.nnatmt && !found; i++) found = lp->park.natmt[i] == mt;
  return found;
}

static int bad_set(lua_State *L, cn_loop *lp, int slot, const char *what, int idx) {
  cn_push_label(L, lp, slot);
  return luaL_error(L, "cosock: task %s yielded an invalid %s (table or nil expected, got %s)",
                    lua_tostring(L, -1), what, luaL_typename(L, idx));
}

/* Appends the objects of the table at idx to the task's wait. */
static void collect(lua_State *L, cn_loop *lp, cn_task *t, int rec, int idx, int kind) {
  const char *what = kind == K_RECV ? "recvt" : "sendt";
  if (lua_isnil(L, idx)) return;
  if (!lua_istable(L, idx)) bad_set(L, lp, t->slot, what, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) {                   /* key, obj */
    int type = lua_type(L, -1), native = 0;
    if (type != LUA_TTABLE && type != LUA_TUSERDATA) {
      const char *tn = luaL_typename(L, -1);
      cn_push_label(L, lp, t->slot);
      luaL_error(L, CN_MSG_NON_WAKEABLE "\n(task %s yielded a %s in its %s)",
                 lua_tostring(L, -1), tn, what);
    }
    native = cn_is_native(L, lp, lua_gettop(L));
    if (!native) {
      if (lua_getfield(L, -1, "setwaker") == LUA_TNIL) {
        const char *tn = luaL_typename(L, -2);
        cn_push_label(L, lp, t->slot);
        luaL_error(L, CN_MSG_NON_WAKEABLE "\n(task %s yielded a %s without setwaker in its %s)",
                   lua_tostring(L, -1), tn, what);
      }
      lua_pop(L, 1);
    }
    add_wait(L, lp, t, lua_gettop(L), kind, native);
    if (kind == K_RECV) t->nrecvt++; else t->nsendt++;
    lua_rawseti(L, rec, R_WAIT + t->nwait - 1); /* key */
  }
}

/* Registers native wait i of t on the fd the wrapper at obj cached in _fd. */
static void register_cached(lua_State *L, cn_loop *lp, cn_task *t, int i, int fd, int obj) {
  cn_fd_register(L, lp, t->slot, i, fd, t->waits[i].kind, obj, obj, CN_FD_NATIVE | CN_FD_CACHED);
  t->waits[i].fd = fd;
}

/* True when the native wrapper at obj was closed (its close() sets _closed). */
static int wrapper_closed(lua_State *L, int obj) {
  int closed;
  lua_pushliteral(L, "_closed");
  lua_rawget(L, obj);
  closed = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return closed;
}

/* Reads the polled fd of wait i (object at obj) and registers it, or leaves
 * it at -1. A native wrapper whose socket is closed is never ready (LuaSocket's
 * select skips it, as on cosock), or, with set_close_wakes(true), ready at
 * once (as the wrapper's own setwaker then makes it). Returns 1 when the
 * object has no fd yet but may get one (getfd() < 0: a udp socket before its
 * first sendto, a tcp one before connect), for the caller to list the wait
 * (cn_fd_late_add): cosock's select reads getfd() again on every pass. */
static int find_fd(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj) {
  int top = lua_gettop(L), native = t->waits[i].native, known, late = 0;
  lua_Number fdn;
  int isnum = 1;
  /* A native wrapper keeps its fd cached once known (the cache goes when it
   * closes or replaces its socket): no getfd() call per wait. The wrapper
   * itself stands for its file in the reuse check (see cn_fd_register). */
  if (native) {
    int fd = cn_fd_cached(L, obj);
    if (fd >= 0) {
      register_cached(L, lp, t, i, fd, obj);
      return 0;
    }
  }
  if (lua_getfield(L, obj, "inner_sock") == LUA_TNIL) { lua_settop(L, top); return 0; }
  if (!native && lua_getfield(L, obj, "_wake") == LUA_TNIL) {
    cn_push_label(L, lp, t->slot);
    luaL_error(L, CN_MSG_NON_WAKEABLE "\n(task %s waits on an object with inner_sock and no _wake method)",
               lua_tostring(L, -1));
  }
  lua_settop(L, top + 1);
  if ((known = cn_fd_read(L, lp, top + 1)) != CN_FD_UNKNOWN) {
    fdn = known;                               /* what its getfd() would say */
  } else {
    if (lua_getfield(L, top + 1, "getfd") == LUA_TNIL) { lua_settop(L, top); return 0; }
    lua_pushvalue(L, top + 1);
    lua_call(L, 1, 1);                         /* inner, fd */
    fdn = lua_tonumberx(L, -1, &isnum);
  }
  if (known == CN_FD_UNKNOWN && (!isnum || fdn != fdn)) {
    cn_push_label(L, lp, t->slot);
    luaL_error(L, "cosock: getfd() of an object in the %s of task %s returned %s (number expected)",
               t->waits[i].kind == K_RECV ? "recvt" : "sendt", lua_tostring(L, -1),
               luaL_typename(L, -2));
  }
  if (fdn >= 0 && fdn < 2147483647.0) {           /* too large: cn_fd_register says so */
    cn_fd_register(L, lp, t->slot, i, (int)fdn, t->waits[i].kind, obj, native ? obj : top + 1,
                   native ? CN_FD_NATIVE : 0);
    t->waits[i].fd = (int)fdn;
    if (native) cn_fd_cache(L, obj, (int)fdn);
  } else if (fdn < 0 && !(native && wrapper_closed(L, obj))) {
    /* No socket yet (or, for an object of another library, closed: nothing
     * tells the two apart): asked again after each pass's resumes. */
    late = 1;
  } else if (native && cn_at_on(lp, CN_AT_CLOSE_WAKES)) {
    cn_deliver(L, lp, t, i);
  } else {
    t->waits[i].closed = 1;                    /* LuaSocket's select skips it (cn_waits_closed) */
  }
  lua_settop(L, top);
  return late;
}

int cn_park_find_fd(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj) {
  int late;
  /* As while the wait was being made: getfd() cannot cancel the task (t is
   * read after it), and an error rolls the wait back, which drops the task
   * (run's recovery, cn_rollback_park: every waker it was given is taken
   * back), as the same error at park time does. */
  lp->park.parking = t->slot;
  lp->park.nset = t->nwait;
  late = find_fd(L, lp, t, i, lua_absindex(L, obj));
  lp->park.parking = -1;
  return late;
}

void cn_park_late_recheck(lua_State *L, cn_loop *lp) {
  int k;
  /* From the end: an entry moved into place k was asked already. */
  for (k = cn_fd_late(lp) - 1; k >= 0; k--) {
    cn_task *t;
    lua_Integer waitid;
    int slot, i, obj, top = lua_gettop(L);
    if (k >= cn_fd_late(lp)) continue;         /* (a getfd ended waits listed after k) */
    cn_fd_late_take(L, lp, k, &slot, &waitid, &i); /* taken out first: a getfd that raises is not asked again */
    obj = lua_gettop(L);
    t = cn_task_get(lp, slot);
    if (t == NULL || t->waitid != waitid || t->state != T_PARKED || t->timed_out || i >= t->nwait ||
        t->waits[i].fired || t->waits[i].fd >= 0 || t->waits[i].obj != lua_topointer(L, obj)) {
      lua_settop(L, top);                      /* the wait is over */
      continue;
    }
    /* Still none: listed again (at the end, where room was just made). */
    if (cn_park_find_fd(L, lp, t, i, obj) && (t = cn_task_get(lp, slot)) != NULL && t->waitid == waitid)
      cn_fd_late_add(L, lp, t, i, obj);
    lua_settop(L, top);
  }
}

/* True when a parked task waits on a closed socket, or on one with no fd
 * yet (waiters.h, cn_fd_late_add). cosock hands such a
 * socket to LuaSocket's select, which skips it and, with no other socket
 * and no timeout, blocks for ever: that is what the loop does then instead
 * of raising the stall error (run.c's check_stall). Called only when the loop
 * would stall, so the walk over the tasks costs no pass anything. */
int cn_waits_closed(cn_loop *lp) {
  int s, i;
  if (cn_at_on(lp, CN_AT_CLOSE_WAKES)) return 0;
  /* A wait on an object with no fd yet, too: nothing left can give it one. */
  if (cn_fd_late(lp)) return 1;
  for (s = 0; s < cn_tasks_slots(lp); s++) {
    cn_task *t = cn_task_get(lp, s);
    if (t == NULL || t->state != T_PARKED) continue;
    for (i = 0; i < t->nwait; i++)
      if (t->waits[i].closed) return 1;
  }
  return 0;
}

/* True when the inner socket of the object at obj has buffered data. */
static int is_dirty(lua_State *L, int obj) {
  int dirty = lua_getfield(L, obj, "inner_sock") != LUA_TNIL && cn_dirty(L, lua_gettop(L));
  lua_pop(L, 1);
  return dirty;
}

/* A select wait (task slot's wait i, while waitid lasts) on a socket that had
 * buffered data when it was made. */
struct cn_buffered { lua_Integer waitid; int slot, i; };

/* Wait i of the task at t (its object at obj) is ready at once: the wrapper's
 * native delivery, else the object's _wake("recvr"). */
static void wake_buffered(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj) {
  if (t->waits[i].native) {
    cn_deliver(L, lp, t, i);
  } else {
    lua_getfield(L, obj, "_wake");
    lua_pushvalue(L, obj);
    lua_pushliteral(L, "recvr");
    lua_call(L, 2, 0);
  }
}

/* Lists wait i of t (its object at obj, which has buffered data) for
 * cn_park_buffered_recheck. Without memory for the entry it is woken now, as
 * before the list: the order of the ready list is all that changes. */
static void note_buffered(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj) {
  int n = lp->park.nbuffered;
  if (n == lp->park.capbuffered) {
    int cap = n < 4 ? 4 : n * 2;
    struct cn_buffered *p = cn_mem_resize(&lp->mem, lp->park.buffered, (size_t)n * sizeof *p,
                                          (size_t)cap * sizeof *p);
    if (p == NULL) {
      wake_buffered(L, lp, t, i, obj);
      return;
    }
    lp->park.buffered = p;
    lp->park.capbuffered = cap;
  }
  lp->park.buffered[n].waitid = t->waitid;
  lp->park.buffered[n].slot = t->slot;
  lp->park.buffered[n].i = i;
  lp->park.nbuffered = n + 1;
}

void cn_park_buffered_recheck(lua_State *L, cn_loop *lp) {
  int k;
  /* In the order the waits were made; each entry is spent before its calls
   * (which run Lua), so an error leaves the rest for the next pass. */
  for (k = 0; k < lp->park.nbuffered; k++) {
    struct cn_buffered e = lp->park.buffered[k];
    cn_task *t;
    int top = lua_gettop(L);
    if (e.slot < 0) continue;
    lp->park.buffered[k].slot = -1;
    t = cn_task_get(lp, e.slot);
    /* The wait may have ended (timed out, cancelled) or this object may
     * have fired already; a task another object woke this pass still takes
     * it, after that one, as cosock's select adds it. */
    if (t == NULL || t->waitid != e.waitid || t->timed_out || e.i >= t->nwait || t->waits[e.i].fired)
      continue;
    cn_push_record(L, lp, e.slot);
    lua_rawgeti(L, -1, R_WAIT + e.i);
    /* Still buffered: another task may have read it since. */
    if (lua_istable(L, -1) && is_dirty(L, lua_gettop(L))) wake_buffered(L, lp, t, e.i, lua_gettop(L));
    lua_settop(L, top);
  }
  lp->park.nbuffered = 0;
}

int cn_dirty(lua_State *L, int inner) {
  int dirty = 0;
  inner = lua_absindex(L, inner);
  if (lua_getfield(L, inner, "dirty") == LUA_TFUNCTION) {
    lua_pushvalue(L, inner);
    lua_call(L, 1, 1);
    dirty = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return dirty;
}

/* A parked task with a timeout gets its timer (a wait may already be over). */
static void arm_timer(cn_loop *lp, cn_task *t) {
  double timeout, now, when = -1;
  if ((t->tmo == CN_TMO_NONE && !t->hooked) || t->state != T_PARKED) return;
  now = cn_clock_now();
  if (t->tmo != CN_TMO_NONE) {
    timeout = cn_task_tmo_secs(t);             /* (only once set: is_int may be stale) */
    /* (the pollers take no longer wait; cosock.sim's virtual clock polls
     * nothing, and a year at a time took it a pass per virtual year) */
    if (timeout > ONE_YEAR && !cn_clock_is_virtual()) timeout = ONE_YEAR;
    when = now + (timeout > 0 ? timeout : 0);
  }
  if (t->hooked) when = cn_hooks_wait_cap(lp, t, now, when); /* (a scope's cancel or deadline) */
  if (when >= 0) cn_timer_arm(lp, t, when);
}

lua_Integer cn_prepark(lua_State *L, cn_loop *lp, int kind, const cn_tmo *tmo, int obj) {
  cn_task *t = cn_own_task(lp, L), *cur = cn_task_get(lp, cn_current_slot(lp));
  if (cur != NULL && cur->hooked) cn_hooks_checkpoint(L, lp, cur); /* (a cancelled scope's task raises) */
  if (t == NULL || !CN_KNOWS_YIELDABLE || !cn_isyieldable(L)) return 0;
  lp->park.pre.slot = t->slot;
  lp->park.pre.kind = (unsigned char)kind;
  lp->park.pre.tmo = *tmo;
  lp->park.pre.polled = obj != 0;
  lp->park.pre.fd = obj != 0 ? cn_fd_cached(L, obj) : -1;
  return lp->park.pre.waitid = ++lp->park.waitids;
}

int cn_prepark_taken(cn_loop *lp, int slot) {
  int taken = lp->park.pre.slot == slot;
  lp->park.pre.slot = -1;
  return taken;
}

void cn_park_begin(cn_loop *lp, int slot) {
  lp->park.parking = slot;
  lp->park.nset = 0;
}

void cn_park_clear(cn_loop *lp) {
  lp->park.parking = lp->park.pre.slot = -1;
}

/* Parks task slot on the wrapper at obj for the wait cn_prepark noted. The
 * wrapper stays alive on the task's stack while it waits, so the record
 * keeps nothing; errors are raised as cn_park raises them. */
void cn_park_bare(lua_State *L, cn_loop *lp, int slot, int obj) {
  cn_task *t = cn_task_get(lp, slot);
  int kind = lp->park.pre.kind;
  lp->park.parking = slot;
  lp->park.nset = 0;
  t->internal = t->bare = 1;
  t->timed_out = 0;
  cn_task_set_timeout(t, lp->park.pre.tmo);
  t->nrecvt = kind == K_RECV;
  t->nsendt = kind == K_SEND;
  t->nwait = 0;
  add_wait(L, lp, t, obj, kind, 1);
  t->waitid = lp->park.pre.waitid;
  t->state = T_PARKED;
  lp->park.nset = 1;
  if (lp->park.pre.fd >= 0) register_cached(L, lp, t, 0, lp->park.pre.fd, obj);
  else if (lp->park.pre.polled && find_fd(L, lp, t, 0, obj)) cn_fd_late_add(L, lp, t, 0, obj);
  arm_timer(lp, t);
  lp->park.parking = -1;
}

/* Parks task slot, whose yield left (recvt, sendt, timeout) at args.. args+2.
 * Raises a Lua error on bad input; loop->parking lets run's recovery undo a
 * half-made wait (cn_rollback_park). */
void cn_park(lua_State *L, cn_loop *lp, int slot, int args, int rec) {
  cn_task *t = cn_task_get(lp, slot);
  int i, isnum, top = lua_gettop(L);
  double timeout = 0;
  lua_Integer waitid;
  luaL_checkstack(L, 12, NULL);
  lp->park.parking = slot;
  lp->park.nset = 0;
  t->nwait = t->nrecvt = t->nsendt = 0;
  t->tmo = CN_TMO_NONE;
  t->timed_out = 0;
  t->internal = lua_touserdata(L, args + 3) == CN_INTERNAL;
  if (!lua_isnil(L, args + 2)) {
    timeout = lua_tonumberx(L, args + 2, &isnum);
    if (!isnum || timeout != timeout) {
      const char *why = isnum ? "NaN" : lua_pushfstring(L, "number or nil expected, got %s",
                                                        luaL_typename(L, args + 2));
      cn_push_label(L, lp, slot);
      luaL_error(L, "cosock: task %s yielded an invalid timeout (%s)", lua_tostring(L, -1), why);
    }
    cn_task_set_timeout(t, cn_tmo_of(L, args + 2));
    if (t->tmo != CN_TMO_INT) t->tmo_v.secs = timeout; /* (a numeric string: its number) */
  }
  collect(L, lp, t, rec, args, K_RECV);
  collect(L, lp, t, rec, args + 1, K_SEND);
  waitid = t->waitid = ++lp->park.waitids;
  t->state = T_PARKED;
  for (i = 0; i < t->nwait; i++) {
    int obj;
    if (t->waits[i].native) { lp->park.nset = i + 1; continue; } /* no Lua protocol */
    lua_rawgeti(L, rec, R_WAIT + i);
    obj = lua_gettop(L);
    lua_getfield(L, obj, "setwaker");          /* obj, setwaker */
    lua_pushvalue(L, obj);
    lua_pushstring(L, cn_kind_name(t->waits[i].kind));
    push_waker(L, slot, waitid, t->waits[i].kind, obj);
    lua_call(L, 3, 0);
    lp->park.nset = i + 1;
    lua_pop(L, 1);
    if (cn_task_get(lp, slot) != t || t->waitid != waitid) {
      lua_settop(L, top);
      luaL_error(L, "cosock: a setwaker call ended the wait of the task it was parking");
    }
  }
  for (i = 0; i < t->nwait; i++) {
    lua_rawgeti(L, rec, R_WAIT + i);
    if (find_fd(L, lp, t, i, lua_gettop(L))) cn_fd_late_add(L, lp, t, i, lua_gettop(L));
    lua_pop(L, 1);
  }
  arm_timer(lp, t);
  lp->park.parking = -1;
  /* Buffered data counts as readable, as in LuaSocket's select; cosock's
   * select comes after the pass's resumes, so these wake then (noted here). */
  for (i = 0; i < t->nwait && t->state == T_PARKED && !t->internal; i++) {
    if (t->waits[i].kind != K_RECV || t->waits[i].fd < 0) continue;
    lua_rawgeti(L, rec, R_WAIT + i);
    if (is_dirty(L, lua_gettop(L))) note_buffered(L, lp, t, i, lua_gettop(L));
    lua_pop(L, 1);
  }
  lua_settop(L, top);
}

/* Ends the task's wait: disarms its timer, drops its fd interest, makes its
 * wakers stale, then calls setwaker(kind, nil) on every object it waited on.
 * With protected_calls, errors of those calls are caught and the first one is
 * left on the stack (returns 1); otherwise they propagate (returns 0). */
int cn_unpark(lua_State *L, cn_loop *lp, cn_task *t, int protected_calls, int rec) {
  int i, n = t->nwait, failed = 0, top;
  cn_timer_disarm(lp, t);
  t->waitid = 0;
  t->nwait = 0;
  t->timed_out = 0;                            /* (the resumer read it first) */
  if (n == 0) return 0;
  if (t->bare) {                               /* one native wait, no record entries, no stack */
    t->bare = 0;
    if (t->waits[0].fd >= 0)
      cn_fd_unregister(L, lp, t->slot, t->waits[0].fd, t->waits[0].kind, 0, 1);
    return 0;
  }
  top = lua_gettop(L);
  luaL_checkstack(L, 8, NULL);
  if (rec == 0) {
    cn_task_push_record(L, lp, t->slot);        /* a protocol wait has one (no allocation) */
    rec = lua_gettop(L);
  }
  if (!lua_istable(L, rec)) {                  /* no objects to tell: only fds to drop */
    for (i = 0; i < n; i++)
      if (t->waits[i].fd >= 0 && t->waits[i].native)
        cn_fd_unregister(L, lp, t->slot, t->waits[i].fd, t->waits[i].kind, 0, 1);
    lua_settop(L, top);
    return 0;
  }
  for (i = 0; i < n; i++) {
    if (t->waits[i].fd < 0) continue;
    if (t->waits[i].native) {                  /* no object needed */
      cn_fd_unregister(L, lp, t->slot, t->waits[i].fd, t->waits[i].kind, 0, 1);
      continue;
    }
    lua_rawgeti(L, rec, R_WAIT + i);
    cn_fd_unregister(L, lp, t->slot, t->waits[i].fd, t->waits[i].kind, -1, 0);
    lua_pop(L, 1);
  }
  for (i = 0; i < n; i++) {
    int kind = t->waits[i].kind;
    if (t->waits[i].native) {                  /* no Lua protocol: just drop it */
      lua_pushnil(L);
      lua_rawseti(L, rec, R_WAIT + i);
      continue;
    }
    lua_rawgeti(L, rec, R_WAIT + i);           /* obj */
    lua_pushnil(L);
    lua_rawseti(L, rec, R_WAIT + i);
    if (!protected_calls) {
      prepare_unset(L, kind);
      lua_call(L, 3, 0);
    } else if (pcall_unset(L, lp, kind) != LUA_OK) {
      if (!failed) failed = lua_gettop(L); /* keep the first error */
      else lua_pop(L, 1);
    }
  }
  if (failed) {
    lua_pushvalue(L, failed);
    lua_replace(L, top + 1);                   /* the error, where the caller finds it */
    lua_settop(L, top + 1);
    return 1;
  }
  lua_settop(L, top);
  return 0;
}

/* After an error while parking: take back the wakers handed out so far and
 * the fd interest, and drop the task (it cannot wait on what it asked for). */
void cn_rollback_park(lua_State *L, cn_loop *lp) {
  cn_task *t = cn_task_get(lp, lp->park.parking);
  int i, rec;
  if (t == NULL) { lp->park.parking = -1; return; }
  /* lp->park.parking stays set: a cancel from the setwaker calls below is refused. */
  cn_task_push_record(L, lp, t->slot);         /* nil for a bare wait (nothing to allocate here) */
  rec = lua_gettop(L);
  for (i = 0; i < t->nwait; i++) {
    int kind = t->waits[i].kind;
    if (lua_istable(L, rec)) lua_rawgeti(L, rec, R_WAIT + i);
    else lua_pushnil(L);
    if (t->waits[i].fd >= 0)
      cn_fd_unregister(L, lp, t->slot, t->waits[i].fd, kind, -1, t->waits[i].native);
    if (i < lp->park.nset && !t->waits[i].native && !lua_isnil(L, -1)) {
      if (pcall_unset(L, lp, kind) != LUA_OK) lua_pop(L, 1);
    } else {
      lua_pop(L, 1);
    }
  }
  lua_settop(L, rec - 1);
  t->nwait = 0;
  cn_task_free(L, lp, t);
  lp->park.parking = -1;
}

/* ---- the end of every wait ---------------------------------------------- */

void cn_wait_timed_out(lua_State *L, cn_loop *lp) {
  cn_task *t = cn_task_get(lp, cn_current_slot(lp));
  if (t != NULL && t->hooked) cn_hooks_checkpoint(L, lp, t); /* (a scope's task may raise) */
}

int cn_resumed_timeout(lua_State *L, int idx) {
  const char *s = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
  return s != NULL && strcmp(s, CN_MSG_TIMEOUT) == 0;
}

void cn_wait_cut(cn_loop *lp, cn_task *t) {
  if (t->state != T_PARKED) return;
  t->timed_out = 1;
  cn_make_ready(lp, t);
}

void cn_wait_recap(cn_loop *lp, cn_task *t) {
  double when;
  if (t->state != T_PARKED || !t->hooked) return;
  when = cn_hooks_wait_cap(lp, t, cn_clock_now(), t->armed ? t->deadline : -1);
  if (when >= 0 && (!t->armed || when < t->deadline)) cn_timer_arm(lp, t, when);
}

/* core.yield(...) ends here when resumed: the values the loop resumed the
 * task with are the call's results, after the wait's end (cn_wait_end). */
static int yield_k(lua_State *L, int status, lua_KContext ctx) {
  (void)status;
  (void)ctx;
  cn_wait_end(L, cn_loop_get(L), lua_gettop(L) >= 3 && cn_resumed_timeout(L, 3));
  return lua_gettop(L);
}

/* core.yield(recvt, sendt, timeout [, mark]): coroutine.yield to the loop,
 * with the error of a wait outside any task, and the end every wait has:
 * timed out in a cancelled or expired scope, it raises the cancellation
 * (cn_wait_end). cosock.socket.select, sleep and every wait written in Lua
 * on it need no line of their own for that. */
static int l_yield(lua_State *L) {
  CN_RESUMABLE(L);
  return cn_yieldk(L, lua_gettop(L), 0, yield_k);
}

/* wait_end(err): the end of a wait made with coroutine.yield by Lua code
 * that must take what the wait delivered first (cosock.op's perform,
 * cosock.sync's acquire): err is the third value the loop resumed it with. */
static int l_wait_end(lua_State *L) {
  cn_wait_end(L, cn_loop_get(L), cn_resumed_timeout(L, 1));
  return 0;
}

/* register_native(mt): objects with this metatable are the project's own
 * socket wrappers. The loop waits on them without the waker protocol's Lua
 * calls (setwaker, _wake): it reads their inner_sock's fd and wakes the task
 * itself. Such a wrapper must call closing(self) before closing its socket. */
static int l_register_native(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  int i;
  luaL_checktype(L, 1, LUA_TTABLE);
  for (i = 0; i < lp->park.nnatmt; i++)
    if (lp->park.natmt[i] == lua_topointer(L, 1)) return 0;
  if (lp->park.nnatmt == CN_MAX_NATIVE)
    return luaL_error(L, "cosock: too many native wrapper classes (at most %d)", CN_MAX_NATIVE);
  cn_push_ref(L, lp->park.r_natives);          /* keeps the metatable, and its address, alive */
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lp->park.natmt[lp->park.nnatmt++] = lua_topointer(L, 1);
  return 0;
}

void cn_park_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"register_native", l_register_native}, {"yield", l_yield}, {"wait_end", l_wait_end},
    {NULL, NULL}
  };
  static const char *const waits[] = {"yield", NULL};
  cn_park_clear(lp);
  cn_fd_set_deliverer(lp, cn_deliver);         /* a ready fd's native waiter: cn_deliver */
  lua_newtable(L);                             /* metatable -> true, kept across resets */
  lp->park.r_natives = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, unset_call);
  lp->park.r_unset = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
  cn_lift_fields(L, -1, waits);
}

void cn_park_free(lua_State *L, cn_loop *lp) {
  cn_mem_free(&lp->mem, lp->park.buffered, (size_t)lp->park.capbuffered * sizeof *lp->park.buffered);
  lp->park.buffered = NULL;
  lp->park.nbuffered = lp->park.capbuffered = 0;
  cn_unref(L, &lp->park.r_natives);
  cn_unref(L, &lp->park.r_unset);
}

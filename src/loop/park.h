/* park: what happens when a task yields and when its wait ends (park.c owns
 * loop->park and the wait fields of each task). */
#ifndef COSOCK_PARK_H
#define COSOCK_PARK_H

#include "compat.h"

#include "task.h"

/* Parks task slot, whose yield left (recvt, sendt, timeout, mark) at
 * args .. args+3; rec is the index of its record. Raises a Lua error on bad
 * input (run's recovery then calls cn_rollback_park). */
void cn_park(lua_State *L, cn_loop *lp, int slot, int args, int rec);
/* Ends t's wait: disarms its timer, drops its fd interest, makes its wakers
 * stale, calls setwaker(kind, nil) on what it waited on. rec: its record's
 * index, or 0 to look it up. With protected_calls the first error of those
 * calls is left on the stack (returns 1); otherwise errors propagate. */
int cn_unpark(lua_State *L, cn_loop *lp, cn_task *t, int protected_calls, int rec);
/* After an error while parking: undoes the half-made wait and drops the
 * task (nothing when no wait is being made). */
void cn_rollback_park(lua_State *L, cn_loop *lp);
/* Wait i of t is ready: list its object once and make the task ready. */
void cn_deliver(lua_State *L, cn_loop *lp, cn_task *t, int i);

/* The timeout value at idx (a number), as a cn_tmo. */
static inline cn_tmo cn_tmo_of(lua_State *L, int idx) {
  cn_tmo t;
  t.set = 1;
  t.is_int = (unsigned char)lua_isinteger(L, idx);
  t.ival = t.is_int ? lua_tointeger(L, idx) : 0;
  t.secs = lua_tonumber(L, idx);
  return t;
}

/* Pushes the timeout of t's last wait as it was given (nil when none). */
void cn_push_wait_timeout(lua_State *L, const cn_task *t);

/* For the project's wrappers and channels. When L is the coroutine of the
 * task the loop is resuming and may yield, notes a wait for kind with an
 * optional timeout (tmo->set) and returns its wait id (> 0): the caller then yields one
 * value, and the loop parks the task with cn_park_bare (no yield tuple to
 * read, no record entries). obj: the index of the wrapper to poll, or 0 for
 * a wait that only a direct wake (cn_deliver) or the timeout ends. Returns 0
 * otherwise (the caller yields the usual tuple). */
lua_Integer cn_prepark(lua_State *L, cn_loop *lp, int kind, const cn_tmo *tmo, int obj);
/* Called by run after resuming slot: true when that resume ended in a wait
 * noted by cn_prepark; forgets the note either way. */
int cn_prepark_taken(cn_loop *lp, int slot);
/* Parks slot on the object at obj, as its cn_prepark noted. */
void cn_park_bare(lua_State *L, cn_loop *lp, int slot, int obj);

/* Reads the fd of wait i of t (object at obj) again and registers it; 1
 * when it still has none (waiters.c asks the listed waits each pass). The
 * task counts as being parked meanwhile: a cancel is refused, an error
 * drops it (cn_rollback_park, from run's recovery). */
int cn_park_find_fd(lua_State *L, cn_loop *lp, cn_task *t, int i, int obj);
/* Asks every wait listed for having no fd yet (waiters.h, cn_fd_late_add)
 * for its fd again: registers those that have one now, drops the waits that
 * ended. May raise (getfd's error, the poller's refusal): that wait's task is
 * then dropped, as when the error comes while it parks. run.c calls it after
 * each pass's resumes while any is listed. */
void cn_park_late_recheck(lua_State *L, cn_loop *lp);
/* Wakes the select waits made this pass on sockets whose LuaSocket buffer
 * held data, after the pass's resumes: cosock found those in the select it
 * makes after its resumes, so what other tasks woke in the pass comes first
 * in the ready list. (run.c calls it when cn_park_buffered says there are.) */
void cn_park_buffered_recheck(lua_State *L, cn_loop *lp);
static inline int cn_park_buffered(const cn_loop *lp) { return lp->park.nbuffered; }
/* The end of every wait. A wait's continuation (a C function's after
 * cn_yieldk, core.yield's, and Lua's wait_end) calls cn_wait_end once it
 * has taken what the wait delivered, if anything, with whether the wait
 * ended without it (timed_out: the loop resumed it with nil, nil, "timeout",
 * which cn_resumed_timeout tells from the value at idx, or the wait's own
 * deadline passed). A timed-out wait of a task a feature hooked asks the
 * hook's checkpoint first, which may raise instead: a cancelled or expired
 * scope's task raises the cancellation here (cancel.c). Returns timed_out.
 * A new kind of wait is cancellable by ending this way: nothing in it names
 * a feature. */
void cn_wait_timed_out(lua_State *L, cn_loop *lp);
static inline int cn_wait_end(lua_State *L, cn_loop *lp, int timed_out) {
  if (timed_out) cn_wait_timed_out(L, lp);
  return timed_out;
}
int cn_resumed_timeout(lua_State *L, int idx);
/* Ends t's pending wait now, as its timer would (nothing when it is not
 * parked); its continuation sees a timeout. */
void cn_wait_cut(cn_loop *lp, cn_task *t);
/* Asks the hooks' wait_cap again for t's pending wait (a scope's deadline
 * that changed); nothing when t is not parked. */
void cn_wait_recap(cn_loop *lp, cn_task *t);

/* True when, with set_close_wakes off, a parked task waits on a closed
 * socket or on one with no fd yet: where the loop would stall, cosock
 * blocks for ever instead. */
int cn_waits_closed(cn_loop *lp);
/* slot just yielded: from now on an error rolls its wait back (the parks
 * below say the same; run says it first, before it needs any memory). */
void cn_park_begin(cn_loop *lp, int slot);
/* Forgets any half-made wait (run calls it as it starts). */
void cn_park_clear(cn_loop *lp);
/* True while slot's wait is being made (a cancel must wait). */
static inline int cn_parking(const cn_loop *lp, int slot) { return lp->park.parking == slot; }
/* The slot being parked, -1 when none. */
static inline int cn_parking_slot(const cn_loop *lp) { return lp->park.parking; }
/* The waits of the task being parked whose wakers were set so far (the
 * next one's setwaker is the one that failed, when parking raised). */
static inline int cn_parking_nset(const cn_loop *lp) { return lp->park.nset; }

/* True when the value at idx is a waker of this loop's whose wait is over
 * (false for any other value): an object that keeps several wakers drops
 * these. */
int cn_waker_stale(lua_State *L, cn_loop *lp, int idx);
/* Is the value at idx one of lp's wakers whose wait goes on? */
int cn_waker_live(lua_State *L, cn_loop *lp, int idx);
/* Whether the socket object at inner has buffered data: its dirty() if it
 * has one, else false. */
int cn_dirty(lua_State *L, int inner);
/* True when the value at obj is one of the project's wrappers (its
 * metatable was registered with register_native). */
int cn_is_native(lua_State *L, cn_loop *lp, int obj);

/* Adds register_native, yield and wait_end to the module table on top (the
 * loop just below it) and makes the registry slot of the wrapper classes. */
void cn_park_open(lua_State *L, cn_loop *lp);
void cn_park_free(lua_State *L, cn_loop *lp);

#endif

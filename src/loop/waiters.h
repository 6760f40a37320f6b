/* waiters: the waiter index, which task or object waits on which fd, kept
 * from pass to pass, and the poller behind it (waiters.c owns
 * loop->waiters). */
#ifndef COSOCK_WAITERS_H
#define COSOCK_WAITERS_H

#include "compat.h"

#include "loop.h"

/* Fds at or above this are refused (the per-fd arrays would not fit). */
#define CN_MAX_FD (1 << 28)

/* how: CN_FD_NATIVE for the project's wrappers, | CN_FD_CACHED when fd came
 * from the wrapper's fd cache (filled only after a registration). */
enum { CN_FD_NATIVE = 1, CN_FD_CACHED = 2 };

/* Adds wait i of task slot on fd for kind: the object is at index obj, its
 * socket at index inner. Raises a Lua error, before changing anything, when
 * the poller refuses the fd or a native wrapper already has a waiter. */
void cn_fd_register(lua_State *L, cn_loop *lp, int slot, int i, int fd, int kind, int obj,
                    int inner, int how);
/* Removes such a wait (obj: the object's index; unused for native waits). */
void cn_fd_unregister(lua_State *L, cn_loop *lp, int slot, int fd, int kind, int obj, int native);
/* A native wait on fd for kind was delivered: another task may wait there
 * now, before slot runs (like a waker that takes itself back). */
void cn_fd_release_native(cn_loop *lp, int fd, int kind, int slot);
/* Ends the poller's interest in what nobody waits on any more (end of a pass). */
void cn_fd_apply(cn_loop *lp);
/* Polls for at most timeout seconds (-1: no limit) and wakes what waits on
 * the ready fds. Returns -1 (errno set) when polling failed. */
int cn_fd_poll(lua_State *L, cn_loop *lp, double timeout);

/* Fds that C code of the loop owns (the resolver's sockets, resolver.c)
 * rather than a task: their readiness goes to one function, the watcher,
 * called from cn_fd_poll with the events found (CN_READ, CN_WRITE,
 * CN_INVALID). */
void cn_fd_set_watcher(cn_loop *lp, cn_fd_watcher fn);
/* A feature that knows some socket objects' layout reads their fd for the
 * loop (fn), which then calls no getfd() on them: a call and two lookups
 * saved on each close and each first wait of a wrapper. */
void cn_fd_set_reader(cn_loop *lp, cn_fd_reader fn);
/* Sets who is told that a native waiter's fd is ready (park.c, as it opens). */
void cn_fd_set_deliverer(cn_loop *lp, cn_fd_deliverer fn);
/* What the reader says of the object at inner (CN_FD_UNKNOWN without one). */
int cn_fd_read(lua_State *L, cn_loop *lp, int inner);
/* Watches fd for events (CN_READ | CN_WRITE), or ends the watch (0; before
 * the fd is closed). Never raises: 0, or -1 with errno when the fd cannot be
 * polled. */
int cn_fd_watch(cn_loop *lp, int fd, int events);

/* Waits on an object that has no fd yet (getfd() < 0: LuaSocket makes a
 * udp socket's at its first sendto/setsockname/setpeername, a tcp one's at
 * connect/bind). cosock hands the sockets to LuaSocket's select on every
 * pass, which reads getfd() each time; the loop lists such waits instead and
 * asks them again after each pass's resumes (cn_park_late_recheck), so the
 * waits whose fd is known cost no pass anything. Lists wait i of t (object
 * at obj); raises on no memory (the wait is then rolled back). */
void cn_fd_late_add(lua_State *L, cn_loop *lp, struct cn_task *t, int i, int obj);
/* Takes listed wait k (0 <= k < cn_fd_late) out of the list: its task's
 * slot, wait id and index in that task's waits, and pushes its object.
 * park.c asks each listed wait again after each pass's resumes
 * (cn_park_late_recheck). */
void cn_fd_late_take(lua_State *L, cn_loop *lp, int k, int *slot, lua_Integer *waitid, int *i);
/* How many waits are listed (the loop blocks rather than stall on them). */
static inline int cn_fd_late(const cn_loop *lp) { return lp->waiters.nlate; }

/* The fd the loop cached in the native wrapper at obj, or -1. */
int cn_fd_cached(lua_State *L, int obj);
/* Fills that cache (the wrapper at obj was registered on fd). */
void cn_fd_cache(lua_State *L, int obj, int fd);

static inline int cn_fd_waited(const cn_loop *lp) { return lp->waiters.nwaitfds; }
static inline int cn_fd_polled(const cn_loop *lp) { return lp->waiters.poller.nfds; }
/* Descriptors the last poll gave back. */
static inline int cn_fd_nready(const cn_loop *lp) { return lp->waiters.nready; }
static inline const char *cn_fd_backend(const cn_loop *lp) {
  return lp->waiters.poller.backend->name;
}

#ifdef HAVE_SYS_EPOLL_H
/* The epoll descriptor of the loop's poller (cosock.pollfd watches it),
 * moving the poller to epoll first when it polls with select; reset goes
 * back to the backend set_backend chose. -1 with errno when the move fails
 * (the poller is then unchanged). */
int cn_fd_epoll(cn_loop *lp);
#endif

/* Makes the poller (with backend b) and the tables; -1 with errno set when
 * the poller cannot be made. */
int cn_waiters_init(lua_State *L, cn_loop *lp, const cn_backend *b);
/* Forgets every fd, with a new poller of the backend reset goes back to;
 * returns -1 (errno set, nothing forgotten) when it cannot be made. May
 * raise (before forgetting anything) when memory runs out. */
int cn_waiters_reset(lua_State *L, cn_loop *lp);
void cn_waiters_free(lua_State *L, cn_loop *lp);
/* Adds closing, forget_fd, wake and set_backend to the module table on top (the loop
 * just below it). */
void cn_waiters_open(lua_State *L);

#endif

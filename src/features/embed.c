/* embed: the descriptor a host loop watches (cosock.pollfd). It is an epoll
 * descriptor of its own holding two things: the loop's poller (an epoll
 * descriptor too; a loop polling with select moves to epoll on the first
 * pollfd call) and a timerfd armed for the loop's next deadline (at once
 * when tasks are ready). So it becomes readable when an fd a task waits on
 * is ready, when a timer is due, and when tasks are ready; the host then
 * calls cosock.step. It is made on the first call only (nothing at load),
 * re-armed after each step and next_timeout, and closed when collected. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "embed.h"
#include "run.h"
#include "sim.h"
#include "waiters.h"

#if defined(HAVE_SYS_EPOLL_H) && defined(HAVE_SYS_TIMERFD_H)
#include <sys/epoll.h>
#include <sys/timerfd.h>
#define CN_EMBED 1
#endif

#ifdef CN_EMBED
typedef struct cn_embed { int epfd, tfd; } cn_embed;

static const char EMBED_KEY = 0;               /* registry[&EMBED_KEY]: the cn_embed */

static cn_embed *embed_get(lua_State *L) {
  cn_embed *e;
  lua_pushlightuserdata(L, (void *)&EMBED_KEY);
  lua_rawget(L, LUA_REGISTRYINDEX);
  e = (cn_embed *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return e;
}

static void embed_close(cn_embed *e) {
  if (e->epfd >= 0) close(e->epfd);
  if (e->tfd >= 0) close(e->tfd);
  e->epfd = e->tfd = -1;
}

static int embed_gc(lua_State *L) {
  embed_close((cn_embed *)lua_touserdata(L, 1));
  return 0;
}

/* Watches the loop's poller (moving it to epoll if it polls with select:
 * after set_backend or a reset it may again) and arms the timer. */
static int embed_apply(cn_loop *lp, cn_embed *e) {
  int pfd = cn_fd_epoll(lp);
  struct epoll_event ev;
  struct itimerspec its;
  uint64_t expired;
  double t;
  if (pfd < 0) return -1;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  /* Added each time: a reset made a new poller, and the old one's entry
   * went with its file even if the new one has the same number. */
  if (epoll_ctl(e->epfd, EPOLL_CTL_ADD, pfd, &ev) != 0 && errno != EEXIST)
    return -1;
  while (read(e->tfd, &expired, sizeof expired) > 0) {} /* (non-blocking) */
  t = cn_next_timeout(lp);
  memset(&its, 0, sizeof its);
  if (t == 0) its.it_value.tv_nsec = 1;       /* (a zero value disarms) */
  else if (t > 0) {
    its.it_value.tv_sec = (time_t)t;
    its.it_value.tv_nsec = (long)((t - (double)its.it_value.tv_sec) * 1e9);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  }
  return timerfd_settime(e->tfd, 0, &its, NULL);
}

void cn_embed_sync(lua_State *L, cn_loop *lp) {
  cn_embed *e = embed_get(L);
  if (e != NULL && embed_apply(lp, e) != 0)
    luaL_error(L, "cosock: cannot keep cosock.pollfd's descriptor up to date: %s", strerror(errno));
}

int cn_embed_pollfd(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  cn_embed *e = embed_get(L);
  /* The simulation's deadlines are virtual: a host waiting on the timer
   * would wait them in real time, and its step(0) never moves the virtual
   * clock (only a step's wait does), so the program would never get on. */
  if (cn_sim_on(lp))
    return luaL_error(L, "cosock.pollfd: not available while cosock.sim is on (its clock is "
                         "virtual: drive the loop with cosock.step(cosock.next_timeout() or 0))");
  if (e == NULL) {
    struct epoll_event ev;
    e = (cn_embed *)lua_newuserdata(L, sizeof *e);
    e->epfd = e->tfd = -1;
    lua_newtable(L);
    lua_pushcfunction(L, embed_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    e->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (e->epfd >= 0) e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    if (e->epfd < 0 || e->tfd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, e->tfd, &ev) != 0) {
      int err = errno;
      embed_close(e);
      return luaL_error(L, "cosock.pollfd: cannot make the descriptor: %s", strerror(err));
    }
    lua_pushlightuserdata(L, (void *)&EMBED_KEY);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
  }
  if (embed_apply(lp, e) != 0)
    return luaL_error(L, "cosock.pollfd: %s", strerror(errno));
  lua_pushinteger(L, e->epfd);
  return 1;
}
#else
void cn_embed_sync(lua_State *L, cn_loop *lp) { (void)L; (void)lp; }

int cn_embed_pollfd(lua_State *L) {
  return luaL_error(L, "cosock.pollfd: not available on this system (it needs epoll and timerfd)");
}
#endif

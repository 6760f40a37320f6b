/* hooks: the list of features attached to the core's fixed points, and the
 * calls the core makes through it (see hooks.h). Small and flat on purpose:
 * at most CN_MAX_HOOKS entries, walked in registration order. */
#include "config.h"

#include <lauxlib.h>

#include "hooks.h"

/* (lo and hi have room for 32 points) */
typedef char cn_points_fit[CN_AT_COUNT <= 32 ? 1 : -1];

void cn_hook_add(lua_State *L, cn_loop *lp, const cn_hook *h) {
  if (lp->hooks.n >= CN_MAX_HOOKS)
    luaL_error(L, "cosock: cannot attach feature '%s' (more than %d hooks)", h->name, CN_MAX_HOOKS);
  lp->hooks.h[lp->hooks.n] = h;
  lp->hooks.on[lp->hooks.n++] = 0;
}

void cn_hook_set(cn_loop *lp, const cn_hook *h, unsigned points, int on) {
  unsigned mask = 0;
  int i, p;
  for (i = 0; i < lp->hooks.n; i++) {
    if (lp->hooks.h[i] == h) lp->hooks.on[i] = on ? lp->hooks.on[i] | points : lp->hooks.on[i] & ~points;
    mask |= lp->hooks.on[i];
  }
  lp->hooks.mask = mask;
  for (p = 0; p < CN_AT_COUNT; p++) {          /* the points that changed: the walks stay short */
    if (!(points & CN_AT(p))) continue;
    lp->hooks.lo[p] = CN_MAX_HOOKS;
    lp->hooks.hi[p] = 0;
    for (i = 0; i < lp->hooks.n; i++) {
      if (!(lp->hooks.on[i] & CN_AT(p))) continue;
      if (lp->hooks.lo[p] == CN_MAX_HOOKS) lp->hooks.lo[p] = (unsigned char)i;
      lp->hooks.hi[p] = (unsigned char)i;
    }
  }
}

/* (A hook may turn points on or off while it is called: the walk reads each
 * entry's bits, and the last entry that has the point, as it goes.) */
void cn_at_call(lua_State *L, cn_loop *lp, int point, struct cn_task *t) {
  int i;
  for (i = lp->hooks.lo[point]; i <= lp->hooks.hi[point] && i < lp->hooks.n; i++)
    if (lp->hooks.on[i] & CN_AT(point)) lp->hooks.h[i]->at(L, lp, point, t);
}

double cn_hooks_timeout(cn_loop *lp, double timeout) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.on[i] & CN_AT(CN_AT_TIMEOUT)) timeout = lp->hooks.h[i]->timeout(lp, timeout);
  return timeout;
}

/* (Only one hook answers the two questions that replace a step of the pass:
 * the first that has the point on.) */
int cn_hooks_next_ready(lua_State *L, cn_loop *lp) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.on[i] & CN_AT(CN_AT_ORDER)) return lp->hooks.h[i]->next_ready(L, lp);
  return -1;
}

void cn_hooks_sleep(lua_State *L, cn_loop *lp, double timeout) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.on[i] & CN_AT(CN_AT_SLEEP)) {
      lp->hooks.h[i]->sleep(L, lp, timeout);
      return;
    }
}

double cn_hooks_wait_cap(cn_loop *lp, const struct cn_task *t, double now, double when) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->wait_cap) when = lp->hooks.h[i]->wait_cap(lp, t, now, when);
  return when;
}

void cn_hooks_checkpoint(lua_State *L, cn_loop *lp, struct cn_task *t) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->checkpoint) lp->hooks.h[i]->checkpoint(L, lp, t);
}

int cn_hooks_cancel(cn_loop *lp, struct cn_task *t) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->cancel && lp->hooks.h[i]->cancel(lp, t)) return 1;
  return 0;
}

int cn_hooks_task_raised(lua_State *L, cn_loop *lp, int err) {
  int i, how;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->raised && (how = lp->hooks.h[i]->raised(L, lp, err)) != 0) return how;
  return 0;
}

int cn_hooks_hold(const cn_loop *lp) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->holds && lp->hooks.h[i]->holds(lp)) return 1;
  return 0;
}

void cn_hooks_task_end(lua_State *L, cn_loop *lp, int handle, int how, int first, int n) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->task_end) lp->hooks.h[i]->task_end(L, lp, handle, how, first, n);
}

void cn_hooks_new_handle(lua_State *L, cn_loop *lp, int name, int co) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->new_handle) {
      lp->hooks.h[i]->new_handle(L, lp, name, co);
      return;
    }
  lua_pushnil(L);
}

void cn_hooks_handle_map(lua_State *L, cn_loop *lp, int handle, int v) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->handle_map) {
      lp->hooks.h[i]->handle_map(L, lp, handle, v);
      return;
    }
}

void cn_hooks_task_line(lua_State *L, cn_loop *lp, int name, int site, int line) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->task_line) {
      lp->hooks.h[i]->task_line(L, lp, name, site, line);
      return;
    }
  lua_pushliteral(L, "");
}

void cn_hooks_reset(lua_State *L, cn_loop *lp) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->reset) lp->hooks.h[i]->reset(L, lp);
}

void cn_hooks_free(lua_State *L, cn_loop *lp) {
  int i;
  for (i = 0; i < lp->hooks.n; i++)
    if (lp->hooks.h[i]->free) lp->hooks.h[i]->free(L, lp);
}

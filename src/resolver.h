/* resolver: name lookups that do not block the loop, with c-ares
 * (resolver.c owns loop->dns). Without c-ares at build time the module says
 * so (core.dns == "luasocket") and cosock.dns keeps LuaSocket's resolver. */
#ifndef COSOCK_RESOLVER_H
#define COSOCK_RESOLVER_H

#include "compat.h"

#include "loop.h"

/* At load: adds the fields dns ("c-ares" or "luasocket") and dns_version,
 * and dns_stats, to the module table on top (the loop just below it). */
void cn_dns_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "dns"): the other dns_* functions and the lookup
 * objects' metatable. */
void cn_dns_open(lua_State *L, cn_loop *lp);
/* reset(): every lookup in flight ends and its answer is dropped; the
 * servers and options set stay. Cannot fail. Call after cn_waiters_reset
 * and cn_tasks_reset. */
void cn_dns_reset(lua_State *L, cn_loop *lp);
void cn_dns_free(lua_State *L, cn_loop *lp);

/* True when lookups ended (in a timer of the resolver's) whose tasks are
 * still to be told. */
static inline int cn_dns_due(const cn_loop *lp) { return lp->dns.done != NULL; }
/* Tells them: a task parked on its lookup is made ready, a waker set on a
 * lookup object is called (its error propagates; the others stay listed). */
void cn_dns_deliver(lua_State *L, cn_loop *lp);

#endif

/* resolver: name lookups that do not block the loop, with c-ares
 * (resolver.c owns loop->dns). Without c-ares at build time the module says
 * so (core.dns == "luasocket") and cosock.dns keeps LuaSocket's resolver. */
#ifndef COSOCK_RESOLVER_H
#define COSOCK_RESOLVER_H

#include "compat.h"

#include "loop.h"

/* At load: adds the fields dns ("c-ares" or "luasocket") and dns_version,
 * and dns_stats, to the module table on top (the loop just below it), and
 * attaches the hook. */
void cn_dns_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "dns"): the other dns_* functions and the lookup
 * objects' metatable. */
void cn_dns_open(lua_State *L, cn_loop *lp);

#endif

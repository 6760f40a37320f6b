/* resolver: name lookups that do not block the loop, with c-ares
 * (resolver.c owns loop->dns). Without c-ares at build time the module says
 * so (core.dns == "luasocket") and cosock.dns keeps LuaSocket's resolver. */
#ifndef COSOCK_RESOLVER_H
#define COSOCK_RESOLVER_H

#include "compat.h"

#include "loop.h"

/* Adds the dns_* functions and the field dns ("c-ares" or "luasocket") to
 * the module table on top (the loop just below it). With c-ares, attaches
 * the hook (hooks.h) that tells the tasks of the lookups that ended
 * (CN_AT_DELIVER, on while some did), ends them all at reset and frees the
 * resolver with the loop. */
void cn_dns_open(lua_State *L, cn_loop *lp);

#endif

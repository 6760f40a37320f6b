/* names: where each task was spawned, and the line naming it that a task's
 * error gains.
 *
 * Where each task was spawned (file:line of the cosock.spawn call), so that
 * a task's error can say it (the task_line hook: run.c calls it).
 * Noted at every spawn, so it must cost little: the caller's debug info
 * (lua_getinfo "Sl": a copy of the short file name and the line), and a
 * number for the file instead of a string per task. The file names are kept
 * once per loop, in a table made at the first spawn (file -> number and
 * number -> file); the last one is also kept as a C pointer, so a program
 * that spawns from one file does no table work at all. Files beyond
 * MAX_SITES (chunks made by load() in a loop) are not noted. */
#include "config.h"

#include <string.h>

#include <lauxlib.h>

#include "compat.h"
#include "names.h"

#define MAX_SITES 1024

int cn_site_here(lua_State *L, cn_loop *lp, int *line) {
  lua_Debug ar;
  int site;
  *line = 0;
  if (!lua_getstack(L, 2, &ar) || !lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) return 0;
  *line = ar.currentline;
  /* (last points into a string the table keeps) */
  if (lp->sites.last != NULL && strcmp(lp->sites.last, ar.short_src) == 0) return lp->sites.last_site;
  if (lp->sites.n >= MAX_SITES) return 0;
  luaL_checkstack(L, 4, NULL);
  if (lp->sites.r_files == 0) {
    lua_newtable(L);
    lp->sites.r_files = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->sites.r_files); /* files */
  lua_pushstring(L, ar.short_src);                       /* files, name */
  lua_pushvalue(L, -1);
  lua_rawget(L, -3);                                     /* files, name, number or nil */
  site = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (site == 0) {
    site = lp->sites.n + 1;
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, site);                            /* may raise: nothing counted yet */
    lua_pushvalue(L, -1);
    lua_pushinteger(L, site);
    lua_rawset(L, -4);
    lp->sites.n = site;
  } else {
    /* The name the table keeps, not the one just pushed: a long string
     * (over 40 bytes on 5.3 and 5.4) is a new object each time, collected
     * once popped, and last would point into freed memory. */
    lua_pop(L, 1);
    lua_rawgeti(L, -1, site);                            /* files, kept name */
  }
  lp->sites.last = lua_tostring(L, -1);
  lp->sites.last_site = site;
  lua_pop(L, 2);
  return site;
}

void cn_site_push(lua_State *L, cn_loop *lp, int site, int line) {
  if (site <= 0 || lp->sites.r_files == 0) {
    lua_pushnil(L);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->sites.r_files);
  lua_rawgeti(L, -1, site);
  lua_pushfstring(L, "%s:%d", lua_tostring(L, -1), line);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

static void sites_free(lua_State *L, cn_loop *lp) {
  cn_unref(L, &lp->sites.r_files);
  lp->sites.last = NULL;
  lp->sites.n = 0;
}

/* Pushes the line a task's error gains after its traceback (cosock's text
 * above it is unchanged): "\n\t(in task 'name', spawned at file:line)". */
static void task_line(lua_State *L, cn_loop *lp, int name, int site, int line) {
  int top = lua_gettop(L);
  if (lua_isnil(L, name)) lua_pushliteral(L, "an unnamed task");
  else lua_pushfstring(L, "task '%s'", luaL_tolstring(L, name, NULL));
  cn_site_push(L, lp, site, line);
  if (lua_isnil(L, -1)) lua_pushfstring(L, "\n\t(in %s)", lua_tostring(L, -2));
  else lua_pushfstring(L, "\n\t(in %s, spawned at %s)", lua_tostring(L, -2), lua_tostring(L, -1));
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

static const cn_hook names_hook = { .name = "names", .task_line = task_line, .free = sites_free };

void cn_sites_open(lua_State *L, cn_loop *lp) { cn_hook_add(L, lp, &names_hook); }

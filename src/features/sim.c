/* sim: the C side of cosock.sim (see sim.h; the guide is doc/simulation.md).
 * While on, the loop never polls: when no task is ready, the virtual clock
 * (src/lib/clock.c) jumps to the next deadline of the timer heap, where the
 * in-memory network (lua/cosock/sim/) keeps its deliveries as a timer
 * object. The state is a userdata anchored in the registry while on. */
#include "config.h"

#include <stdint.h>

#include <lauxlib.h>

#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "run.h"
#include "sim.h"
#include "task.h"
#include "waiters.h"

static const cn_hook sim_hook;

typedef struct cn_sim {
  uint64_t rng;     /* xorshift64* state (never 0) */
  int seeded;       /* ready batches run in an order drawn from rng */
  int r_self;       /* registry: this userdata */
  int r_note;       /* registry: the record's function, or LUA_NOREF */
  /* The seeded order of the pass's batch, shuffled once when it starts. */
  int *order;       /* slots, in the order drawn (loop memory, cap entries) */
  int norder, next, cap;
  unsigned pass;    /* the pass order belongs to */
} cn_sim;

/* A draw from the seed's sequence (xorshift64*: the same on every platform
 * and Lua version, unlike math.random). */
static uint64_t draw(cn_sim *s) {
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return s->rng * UINT64_C(2685821657736338717);
}

/* Tells the record's function that slot's task is about to be resumed:
 * note(name, slot, "start" | "wake" | "timeout"). */
static void note(lua_State *L, cn_loop *lp, int slot) {
  cn_task *t = cn_task_get(lp, slot);
  if (lp->sim->r_note == LUA_NOREF || t == NULL) return;
  luaL_checkstack(L, 5, NULL);
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->sim->r_note);
  cn_task_push_name(L, lp, slot);
  lua_pushinteger(L, slot);
  /* (a task not yet started has its function on its stack, status OK) */
  lua_pushstring(L, lua_status(t->co) == LUA_OK ? "start" : t->timed_out ? "timeout" : "wake");
  /* The record's own function: an error there (no memory) loses one note,
   * not the task. */
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) lua_pop(L, 1);
}

/* Draws the order of the tasks in the pass's wake list: the list's slots,
 * shuffled (Fisher-Yates, one draw per task but the first) into s->order.
 * O(n) per batch, where a draw per resume of the k-th task left took a walk
 * of k links (quadratic: 20,000 tasks due at one instant took seconds).
 * Raises on no memory (run's recovery keeps the batch for the next pass). */
static void shuffle(lua_State *L, cn_loop *lp, cn_sim *s) {
  int n = cn_wake_count(lp), i, slot;
  if (n > s->cap) {
    int cap = s->cap ? s->cap : 64;
    int *p;
    while (cap < n) cap *= 2;
    p = cn_mem_resize(&lp->mem, s->order, (size_t)s->cap * sizeof *p, (size_t)cap * sizeof *p);
    if (p == NULL) luaL_error(L, "cosock.sim: out of memory");
    s->order = p;
    s->cap = cap;
  }
  for (i = 0, slot = cn_wake_nth(lp, 0); i < n && slot >= 0; i++, slot = cn_task_get(lp, slot)->next)
    s->order[i] = slot;
  s->norder = i;
  for (i = s->norder - 1; i > 0; i--) {
    int j = (int)(draw(s) % (uint64_t)(i + 1)), k = s->order[i];
    s->order[i] = s->order[j];
    s->order[j] = k;
  }
  s->next = 0;
  s->pass = cn_pass_number(lp);
}

int cn_sim_pop(lua_State *L, cn_loop *lp) {
  cn_sim *s = lp->sim;
  for (;;) {
    int slot;
    if (cn_wake_count(lp) == 0) return -1;
    if (!s->seeded) {
      slot = cn_wake_nth(lp, 0);
    } else {
      /* A new pass, or a batch used up while tasks are left (none join a
       * batch under way; this keeps any that would): draw the order. */
      if (s->pass != cn_pass_number(lp) || s->next >= s->norder) shuffle(L, lp, s);
      slot = s->order[s->next++];
      if (!cn_wake_has(lp, slot)) continue;    /* left the batch (cancelled) */
    }
    note(L, lp, slot);
    /* The note ran Lua: a finalizer may have cancelled the task. Then draw again. */
    if (cn_wake_take(lp, slot) >= 0) return slot;
  }
}

void cn_sim_instead_of_poll(lua_State *L, cn_loop *lp, double timeout) {
  if (cn_fd_polled(lp) > 0)
    luaL_error(L, "cosock.sim: a task waits on a real socket (an object with a descriptor) "
                  "while the simulation is on; the simulation cannot poll real descriptors "
                  "(make sockets with cosock.socket after sim.on)");
  if (timeout < 0)
    luaL_error(L, "cosock.sim: no task is ready and no deadline is set: the simulated "
                  "program would wait for ever");
  cn_clock_advance(cn_clock_now() + timeout);
}

static void sim_end(lua_State *L, cn_loop *lp) {
  cn_sim *s = lp->sim;
  if (s == NULL) return;
  lp->sim = NULL;
  cn_hook_set(lp, &sim_hook, CN_AT(CN_AT_ORDER) | CN_AT(CN_AT_SLEEP), 0);
  cn_clock_virtual(0, 0);
  cn_mem_free(&lp->mem, s->order, (size_t)s->cap * sizeof *s->order);
  s->order = NULL;
  luaL_unref(L, LUA_REGISTRYINDEX, s->r_note);
  luaL_unref(L, LUA_REGISTRYINDEX, s->r_self); /* (s goes with it) */
}


/* Raises unless the loop is idle: not running, no live task. */
static void check_idle(lua_State *L, cn_loop *lp, const char *fname) {
  if (cn_running(lp))
    luaL_error(L, "%s: cannot be called while the loop runs", fname);
  if (cn_tasks_live(lp) > 0)
    luaL_error(L, "%s: %d task(s) already spawned; turn the simulation on or off before "
                  "spawning anything (cosock.reset() drops them)", fname, cn_tasks_live(lp));
}

/* sim_on(start, seed|nil, note|nil): the virtual clock starts at `start`;
 * a seed (an integer) draws the order of ready batches; note(name, slot,
 * how) is told of each resume. Raises when already on or not idle. */
static int l_sim_on(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  double start = luaL_checknumber(L, 1);
  lua_Number seed = luaL_optnumber(L, 2, 0);
  cn_sim *s;
  /* (a finite start; a seed that converts to an integer without UB) */
  if (!(start - start == 0)) return luaL_argerror(L, 1, "finite number expected");
  if (!(seed > -9007199254740992.0 && seed < 9007199254740992.0))
    return luaL_argerror(L, 2, "integer seed expected (|seed| < 2^53)");
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TFUNCTION);
  if (lp->sim != NULL) return luaL_error(L, "cosock.sim.on: the simulation is on already");
  check_idle(L, lp, "cosock.sim.on");
  lua_settop(L, 3);
  s = lua_newuserdata(L, sizeof *s);           /* start, seed, note, s */
  s->seeded = !lua_isnil(L, 2);
  /* Any seed, 0 and negatives too, gives a non-zero state. */
  s->rng = (uint64_t)(int64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + UINT64_C(0x2545F4914F6CDD1D);
  if (s->rng == 0) s->rng = 1;
  s->r_note = LUA_NOREF;
  s->order = NULL;
  s->norder = s->next = s->cap = 0;
  s->pass = cn_pass_number(lp) - 1;            /* (not this pass: drawn at the first pop) */
  s->r_self = luaL_ref(L, LUA_REGISTRYINDEX);  /* start, seed, note */
  if (!lua_isnil(L, 3)) s->r_note = luaL_ref(L, LUA_REGISTRYINDEX);
  lp->sim = s;
  cn_hook_set(lp, &sim_hook, CN_AT(CN_AT_ORDER) | CN_AT(CN_AT_SLEEP), 1);
  cn_clock_virtual(1, start);
  return 0;
}

/* sim_off(): back to the real clock and the first-come order. Raises while
 * tasks are live (their deadlines are on the virtual clock). */
static int l_sim_off(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (lp->sim == NULL) return 0;
  check_idle(L, lp, "cosock.sim.off");
  sim_end(L, lp);
  return 0;
}

/* sim_active() -> whether the simulation is on. */
static int l_sim_active(lua_State *L) {
  lua_pushboolean(L, cn_loop_get(L)->sim != NULL);
  return 1;
}

/* sim_draw() -> a number in [0, 1) from the seed's sequence (the network's
 * losses and jitter), or nil while the simulation is off. */
static int l_sim_draw(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  if (lp->sim == NULL) return 0;
  lua_pushnumber(L, (lua_Number)(draw(lp->sim) >> 11) * (1.0 / 9007199254740992.0));
  return 1;
}

/* (reset and the loop's collection both turn it off: the virtual clock is
 * per thread, not per loop.) */
static const cn_hook sim_hook = {
  .name = "sim", .next_ready = cn_sim_pop, .sleep = cn_sim_instead_of_poll,
  .reset = sim_end, .free = sim_end
};

void cn_sim_init(lua_State *L, cn_loop *lp) { cn_hook_add(L, lp, &sim_hook); }

void cn_sim_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"sim_on", l_sim_on}, {"sim_off", l_sim_off},
    {"sim_active", l_sim_active}, {"sim_draw", l_sim_draw}, {NULL, NULL}
  };
  (void)lp;
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
}

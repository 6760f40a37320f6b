/* trace: the recording behind cosock.trace (see trace.h). Each event is one
 * fixed-size record written at a point of the pass; nothing here raises at a
 * point: a string that cannot be interned (no memory) is left out, a task
 * that cannot be given an id (no memory) is task 0, and a full buffer counts
 * what it could not keep.
 *
 * Any allocation may run a finalizer, and a finalizer may stop, restart or
 * (outside run) reset the trace; an error's __tostring may too. So the state
 * lives as long as the loop (reset empties it), every function reads the
 * buffer afresh after Lua could run, and gen (bumped by start and reset)
 * tells a function that the trace it was writing or reading is gone. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "cancel.h"
#include "hooks.h"
#include "lib/clock.h"
#include "mem.h"
#include "messages.h"
#include "names.h"
#include "park.h"
#include "run.h"
#include "task.h"
#include "timer_object.h"
#include "trace.h"
#include "waiters.h"

enum { EV_SPAWN = 1, EV_RUN, EV_WAIT, EV_WAKE, EV_END, EV_POLL, EV_TIMERS, EV_NOTE, EV_COUNT };
enum { HOW_RETURNED = 1, HOW_RAISED, HOW_CANCELLED, HOW_DROPPED, HOW_COUNT };

static const char *const kind_names[EV_COUNT] = {
  "?", "spawn", "run", "wait", "wake", "end", "poll", "timers", "note"
};
/* (the contract's words for CN_WHAT_* and CN_CAUSE_*, hooks.h) */
static const char *const what_names[CN_WHAT_COUNT] = {
  "other", "recv", "send", "select", "channel-recv", "channel-send", "sleep", "timer",
  "lock", "scope", "lookup", "predicate", "signal", "ossignal", "join", "yield", "other"
};
static const char *const cause_names[CN_CAUSE_COUNT] = {
  "other", "ready", "timer", "send", "close", "signal", "cancel", "lookup", "predicate",
  "join", "spawn", "other"
};
static const char *const how_names[HOW_COUNT] = {"?", "returned", "raised", "cancelled", "dropped"};

/* One event. Strings are indices into the trace's string table (0: none);
 * b holds an fd as fd * 2 + kind + 1 (0: none). */
typedef struct ev {
  double t;                 /* seconds since start */
  double x;                 /* wait: its timeout (NAN: none); poll: seconds slept */
  int32_t task;             /* the task's trace id, 0: none */
  int32_t a;                /* spawn: parent; wake: by; poll: nready; timers: count */
  int32_t b;                /* wait, wake: an fd (see above) */
  int32_t s1, s2;           /* spawn: name, site; end: error; note, wait: s2 the detail */
  unsigned char kind, sub;  /* EV_*; wait: CN_WHAT_*, wake: CN_CAUSE_*, end: HOW_* */
} ev;

/* A task's trace id, by slot, while co is its coroutine. */
typedef struct idmap {
  const void *co;
  int id;
  const void *gone;         /* the coroutine of the task that last ended in this
                             * slot, and its id: a warning about a task is
                             * reported just after it ended (trace_task_id) */
  int gone_id;
} idmap;

struct cn_trace {
  ev *buf;                  /* size records, made by trace_start */
  size_t size, n;
  double dropped;           /* events the full buffer could not keep */
  ev scratch;               /* where those are written */
  int on;
  unsigned gen;             /* bumped by start and reset: the trace changed */
  int virtual_clock;        /* the clock was virtual when it started (cosock.sim) */
  double t0;                /* the clock at start */
  idmap *ids;
  int capids;
  int next_id;
  int r_strs;               /* registry: the strings, s -> i and i -> s */
  int nstrs;
  int r_job;                /* registry: job_run (pushing a C function may allocate) */
  size_t poll_ix;           /* the poll event being timed, or (size_t)-1 */
  double poll_at;
  int fired;                /* timers fired in this pass */
  int ending;               /* the id of the task whose end is being told (join's by) */
  int label_slot;           /* a Lua wait's label (trace_label) for this task's wait */
  unsigned char label_what;
  int label_detail;
  int pend_slot;            /* a wake while the task was being parked: told after */
  unsigned char pend_cause; /* its wait (-1: none) */
  int pend_by, pend_b;
};

#define POINTS (CN_AT(CN_AT_SPAWN) | CN_AT(CN_AT_RESUME) | CN_AT(CN_AT_PARKED) | \
                CN_AT(CN_AT_READY) | CN_AT(CN_AT_ENDED) | CN_AT(CN_AT_FREED) | \
                CN_AT(CN_AT_TIMED) | CN_AT(CN_AT_POLL) | CN_AT(CN_AT_POLLED))

static const cn_hook trace_hook;

/* ---- records -------------------------------------------------------------- */

/* The event's record (a scratch one when the buffer is full, or when the trace
 * recording at gen stopped or changed since: Lua ran in between). */
static ev *put(struct cn_trace *tr, unsigned gen, int kind, int task) {
  ev *e;
  if (!tr->on || tr->gen != gen) {
    e = &tr->scratch;
  } else if (tr->n < tr->size) {
    e = &tr->buf[tr->n++];
  } else {
    tr->dropped++;
    e = &tr->scratch;
  }
  memset(e, 0, sizeof *e);
  e->t = cn_clock_now() - tr->t0;
  e->kind = (unsigned char)kind;
  e->task = task;
  return e;
}

/* Interns the string on top (popped): its index (raises on no memory). */
static int intern_top(lua_State *L, struct cn_trace *tr) {
  int i;
  luaL_checkstack(L, 4, NULL);
  cn_push_ref(L, tr->r_strs);                  /* s, strs */
  if (!lua_istable(L, -1)) {                   /* (reset by a finalizer: no table) */
    lua_pop(L, 2);
    return 0;
  }
  lua_pushvalue(L, -2);
  lua_rawget(L, -2);
  i = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (i == 0) {
    i = ++tr->nstrs;                           /* (before the sets, which may run Lua) */
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, i);
    lua_pushvalue(L, -2);
    lua_pushinteger(L, i);
    lua_rawset(L, -3);
  }
  lua_pop(L, 2);
  return i;
}

/* What a job makes into a string and interns, under lua_pcall. */
enum { JOB_NAME, JOB_SITE, JOB_VALUE, JOB_SELECT };
typedef struct job {
  cn_loop *lp;
  struct cn_trace *tr;
  cn_task *t;
  int op, out;
} job;

/* The detail of a wait on several objects: "fd 7 recv, object send". */
static void push_select(lua_State *L, const cn_task *t) {
  luaL_Buffer b;
  int i;
  luaL_buffinit(L, &b);
  for (i = 0; i < t->nwait; i++) {
    const cn_wait *w = &t->waits[i];
    if (i > 0) luaL_addstring(&b, ", ");
    if (w->fd >= 0) {
      lua_pushfstring(L, "fd %d %s", w->fd, w->kind == K_RECV ? "recv" : "send");
      luaL_addvalue(&b);
    } else {
      luaL_addstring(&b, w->kind == K_RECV ? "object recv" : "object send");
    }
  }
  luaL_pushresult(&b);
}

/* job_run(job[, value]): pushes the job's string and interns it. */
static int job_run(lua_State *L) {
  job *j = (job *)lua_touserdata(L, 1);
  switch (j->op) {
  case JOB_NAME:                                /* (no metamethod: no Lua runs at a spawn) */
    cn_task_push_name(L, j->lp, j->t->slot);
    if (lua_isnil(L, -1)) return 0;
    if (lua_type(L, -1) == LUA_TNUMBER) lua_tolstring(L, -1, NULL);
    else if (lua_type(L, -1) != LUA_TSTRING)
      lua_pushfstring(L, "%s: %p", luaL_typename(L, -1), lua_topointer(L, -1));
    break;
  case JOB_SITE:
    cn_site_push(L, j->lp, j->t->site, j->t->site_line);
    if (lua_isnil(L, -1)) return 0;
    break;
  case JOB_VALUE:                               /* (an error: its __tostring may run; */
    if (lua_isnil(L, 2)) return 0;               /*  the caller writes its record after) */
    {
      const char *v, *tb;
      if (luaL_getmetafield(L, 2, "__tostring")) { /* (one that raises: the event still */
        lua_pushvalue(L, 2);                       /*  says what was raised) */
        if (lua_pcall(L, 1, 1, 0) != LUA_OK || lua_type(L, -1) != LUA_TSTRING) {
          lua_pop(L, 1);
          lua_pushfstring(L, "(a %s whose __tostring failed)", luaL_typename(L, 2));
        }
        v = lua_tostring(L, -1);
      } else {
        v = luaL_tolstring(L, 2, NULL);
      }
      tb = strstr(v, "\nstack traceback:\n");  /* a scope's task's error carries its */
                                                 /* traceback: the event is without it */
      if (tb != NULL) lua_pushlstring(L, v, (size_t)(tb - v));
    }
    break;
  default:
    push_select(L, j->t);
  }
  j->out = intern_top(L, j->tr);
  return 0;
}

/* Runs a job protected: its string's index, or 0 (none, or no memory).
 * value: the index of the value of a JOB_VALUE, else 0. Leaves the stack. */
static int run_job(lua_State *L, cn_loop *lp, struct cn_trace *tr, int op, cn_task *t, int value) {
  job j;
  cn_busy was = {NULL, -1};
  int busy, top = lua_gettop(L);
  if (L == NULL || tr->r_job == 0 || !lua_checkstack(L, LUA_MINSTACK)) return 0;
  j.lp = lp;
  j.tr = tr;
  j.t = t;
  j.op = op;
  j.out = 0;
  if (value != 0) value = lua_absindex(L, value);
  cn_push_ref(L, tr->r_job);
  lua_pushlightuserdata(L, &j);
  if (value != 0) lua_pushvalue(L, value);
  else lua_pushnil(L);
  /* Busy (doc/reliability.md, the re-entrancy contract): outside run a
   * finalizer inside the job may not reset the loop under the task it
   * names (a spawn's task would be gone, its site read from a freed block). */
  busy = !cn_running(lp);                     /* (inside run, run's flag refuses them) */
  if (busy) was = cn_busy_begin(lp, "cosock.trace's record of a task", t->slot);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) j.out = 0;
  if (busy) cn_busy_end(lp, was);
  lua_settop(L, top);
  return j.out;
}

/* Makes room for ids of slots below n: 0 on no memory. */
static int grow_ids(cn_loop *lp, struct cn_trace *tr, int n) {
  int cap = tr->capids < 64 ? 64 : tr->capids;
  idmap *p;
  while (cap < n) cap *= 2;
  p = cn_mem_resize(&lp->mem, tr->ids, (size_t)tr->capids * sizeof *p, (size_t)cap * sizeof *p);
  if (p == NULL) return 0;
  memset(p + tr->capids, 0, (size_t)(cap - tr->capids) * sizeof *p);
  tr->ids = p;
  tr->capids = cap;
  return 1;
}

/* t is seen for the first time: its id, and its spawn event (its name and
 * site when L is there to intern them). */
static int first_seen(lua_State *L, cn_loop *lp, struct cn_trace *tr, cn_task *t, int parent) {
  ev *e;
  int id, name = 0, site = 0;
  unsigned gen = tr->gen;
  if (t->slot >= tr->capids && !grow_ids(lp, tr, t->slot + 1)) {
    tr->dropped++;
    return 0;
  }
  id = ++tr->next_id;
  tr->ids[t->slot].co = t->co;
  tr->ids[t->slot].id = id;
  if (L != NULL) {
    name = run_job(L, lp, tr, JOB_NAME, t, 0);
    if (tr->gen != gen) return 0;              /* (restarted meanwhile: the new one saw t) */
    site = run_job(L, lp, tr, JOB_SITE, t, 0);
  }
  if (tr->gen != gen) return 0;
  e = put(tr, gen, EV_SPAWN, id);
  e->a = parent;
  e->s1 = name;
  e->s2 = site;
  return id;
}

/* The task in slot ended: its id is kept as the slot's last gone one. */
static void forget_id(struct cn_trace *tr, int slot) {
  tr->ids[slot].gone = tr->ids[slot].co;
  tr->ids[slot].gone_id = tr->ids[slot].id;
  tr->ids[slot].co = NULL;
}

/* t's id (0 for no task). */
static int id_of(lua_State *L, cn_loop *lp, struct cn_trace *tr, cn_task *t) {
  if (t == NULL) return 0;
  if (t->slot < tr->capids && tr->ids[t->slot].co == t->co) return tr->ids[t->slot].id;
  return first_seen(L, lp, tr, t, 0);
}

static int current_id(lua_State *L, cn_loop *lp, struct cn_trace *tr) {
  return id_of(L, lp, tr, cn_task_get(lp, cn_current_slot(lp)));
}

/* ---- the points ------------------------------------------------------------ */

/* Why t, parked, is made ready now. */
static void cause_of(cn_loop *lp, struct cn_trace *tr, cn_task *t, unsigned char *cause, int *by,
                     int *b) {
  cn_task *cur = cn_task_get(lp, cn_current_slot(lp));
  int i;
  *b = 0;
  *by = cur != NULL ? id_of(NULL, lp, tr, cur) : 0;
  *cause = lp->hooks.cause;
  if (*cause == CN_CAUSE_JOIN) *by = tr->ending;
  if (*cause != CN_CAUSE_NONE) return;
  if (tr->poll_ix != (size_t)-2 && lp->hooks.waking != 0) { /* in the poll */
    *cause = CN_CAUSE_READY;
    *b = lp->hooks.waking;
    *by = 0;
    return;
  }
  for (i = 0; i < t->nwait; i++) {             /* a wrapper's buffered data, a closed socket */
    if (t->waits[i].fired && t->waits[i].fd >= 0) {
      *cause = CN_CAUSE_READY;
      *b = t->waits[i].fd * 2 + t->waits[i].kind + 1;
      return;
    }
  }
  if (cn_parking_slot(lp) == t->slot) *cause = CN_CAUSE_OTHER; /* ready as it parked */
  else if (cur == NULL)                        /* outside any turn: the heap's timers, */
    *cause = cn_cancel_due(lp, t) ? CN_CAUSE_CANCEL : CN_CAUSE_TIMER; /* or a scope's deadline */
  else *cause = CN_CAUSE_OTHER;                /* a task's waker call */
}

static void wake_event(struct cn_trace *tr, unsigned gen, int id, unsigned char cause, int by,
                       int b) {
  ev *e = put(tr, gen, EV_WAKE, id);
  e->sub = cause;
  e->a = by;
  e->b = b;
  if (cause == CN_CAUSE_TIMER) tr->fired++;
}

/* The turn of t ended in a wait: what on. */
static void wait_event(lua_State *L, cn_loop *lp, struct cn_trace *tr, unsigned gen, cn_task *t) {
  int id = id_of(L, lp, tr, t), detail = 0, b = 0;
  unsigned char what = lp->hooks.what;
  ev *e;
  if (tr->label_slot == t->slot) {             /* a Lua wait said what it is */
    what = tr->label_what;
    detail = tr->label_detail;
  } else if (what == CN_WHAT_NONE) {
    if (t->nwait == 0) {
      what = t->tmo != CN_TMO_NONE ? CN_WHAT_SLEEP : CN_WHAT_YIELD;
    } else if (t->nwait > 1) {
      what = CN_WHAT_SELECT;
      detail = run_job(L, lp, tr, JOB_SELECT, t, 0);
    } else if (t->waits[0].fd >= 0) {
      what = t->waits[0].kind == K_RECV ? CN_WHAT_RECV : CN_WHAT_SEND;
      b = t->waits[0].fd * 2 + t->waits[0].kind + 1;
    } else if (!t->bare && cn_tobj_mt_ref(lp) != 0 && lua_checkstack(L, 4)) {
      /* one object with no fd: a timer object of cosock.timer? (nothing here
       * allocates or calls Lua) */
      int top = lua_gettop(L);
      what = CN_WHAT_OTHER;
      cn_task_push_record(L, lp, t->slot);
      if (lua_istable(L, -1) && lua_rawgeti(L, -1, R_WAIT) != LUA_TNIL &&
          lua_getmetatable(L, -1)) {
        cn_push_ref(L, cn_tobj_mt_ref(lp));
        if (lua_rawequal(L, -1, -2)) what = CN_WHAT_TIMER;
      }
      lua_settop(L, top);
    } else {
      what = CN_WHAT_OTHER;
    }
  }
  e = put(tr, gen, EV_WAIT, id);
  e->sub = what;
  e->s2 = detail;
  e->b = b;
  e->x = t->tmo != CN_TMO_NONE ? cn_task_tmo_secs(t) : NAN;
  lp->hooks.what = CN_WHAT_NONE;
  tr->label_slot = -1;
  if (tr->pend_slot == t->slot) {              /* woken as it parked: after its wait */
    tr->pend_slot = -1;
    wake_event(tr, gen, id, tr->pend_cause, tr->pend_by, tr->pend_b);
  }
}

/* t returned or raised (its coroutine says which; a scope's cancellation
 * value is a cancel). */
static void end_event(lua_State *L, cn_loop *lp, struct cn_trace *tr, unsigned gen, cn_task *t) {
  int id = id_of(L, lp, tr, t), err = 0;
  unsigned char how = HOW_RETURNED;
  lua_State *co = t->co;
  ev *e;
  if (lua_status(co) != LUA_OK) {
    how = HOW_RAISED;
    if (lua_checkstack(co, 2) && lua_checkstack(L, 2)) {
      if (t->hooked && cn_is_cancellation(co, -1)) {
        how = HOW_CANCELLED;
      } else {
        lua_pushvalue(co, -1);
        lua_xmove(co, L, 1);
        err = run_job(L, lp, tr, JOB_VALUE, t, -1);
        lua_pop(L, 1);
      }
    }
  }
  e = put(tr, gen, EV_END, id);
  e->sub = how;
  e->s1 = err;
  if (t->slot < tr->capids) forget_id(tr, t->slot);    /* told: not dropped when freed */
  tr->ending = id;
}

static void trace_at(lua_State *L, cn_loop *lp, int point, cn_task *t) {
  struct cn_trace *tr = lp->trace;
  unsigned gen = tr->gen;                      /* (put writes nothing if it changes) */
  ev *e;
  switch (point) {
  case CN_AT_SPAWN: {
    int parent = current_id(L, lp, tr), id = first_seen(L, lp, tr, t, parent);
    wake_event(tr, gen, id, CN_CAUSE_SPAWN, parent, 0);
    break;
  }
  case CN_AT_RESUME: {                         /* a turn begins: what it said before is over */
    int id = id_of(L, lp, tr, t);
    put(tr, gen, EV_RUN, id);
    lp->hooks.what = CN_WHAT_NONE;
    lp->hooks.cause = CN_CAUSE_NONE;           /* (one an error left set) */
    tr->label_slot = tr->pend_slot = -1;
    tr->ending = 0;
    break;
  }
  case CN_AT_PARKED:
    wait_event(L, lp, tr, gen, t);
    break;
  case CN_AT_READY: {
    unsigned char cause;
    int by, b;
    cause_of(lp, tr, t, &cause, &by, &b);
    if (cn_parking_slot(lp) == t->slot) {      /* its wait is told first */
      tr->pend_slot = t->slot;
      tr->pend_cause = cause;
      tr->pend_by = by;
      tr->pend_b = b;
    } else {
      int id = id_of(L, lp, tr, t);
      wake_event(tr, gen, id, cause, by, b);
    }
    break;
  }
  case CN_AT_ENDED:
    end_event(L, lp, tr, gen, t);
    break;
  case CN_AT_FREED:                            /* gone without an end: dropped */
    if (t->slot < tr->capids && tr->ids[t->slot].co == t->co) {
      e = put(tr, gen, EV_END, tr->ids[t->slot].id);
      e->sub = HOW_DROPPED;
      forget_id(tr, t->slot);
    }
    break;
  case CN_AT_TIMED:
    if (tr->fired > 0) {
      e = put(tr, gen, EV_TIMERS, 0);
      e->a = tr->fired;
      tr->fired = 0;
    }
    break;
  case CN_AT_POLL:                             /* its event now, before what it wakes */
    tr->poll_at = cn_clock_now();
    e = put(tr, gen, EV_POLL, 0);
    tr->poll_ix = e == &tr->scratch ? (size_t)-1 : (size_t)(e - tr->buf);
    break;
  case CN_AT_POLLED:
    if (tr->poll_ix != (size_t)-1 && tr->poll_ix < tr->n) {
      e = &tr->buf[tr->poll_ix];
      e->x = cn_clock_now() - tr->poll_at;
      e->a = cn_fd_nready(lp);
    }
    tr->poll_ix = (size_t)-2;
    break;
  }
}

/* ---- start, stop, reset ---------------------------------------------------- */

static void free_buffers(cn_loop *lp, struct cn_trace *tr) {
  cn_mem_free(&lp->mem, tr->buf, tr->size * sizeof *tr->buf);
  tr->buf = NULL;
  tr->size = tr->n = 0;
  cn_mem_free(&lp->mem, tr->ids, (size_t)tr->capids * sizeof *tr->ids);
  tr->ids = NULL;
  tr->capids = 0;
}

static char module_key;                        /* registry: cosock.core, once opened */

/* The recording goes: the buffer, the strings, the ids; the state stays
 * (zeroed, as before the first start), since a function of this file that a
 * finalizer interrupted may still hold it. Cannot fail. */
static void trace_clear(lua_State *L, cn_loop *lp, struct cn_trace *tr) {
  unsigned gen = tr->gen + 1;
  cn_hook_set(lp, &trace_hook, POINTS, 0);
  free_buffers(lp, tr);
  cn_unref(L, &tr->r_strs);
  cn_unref(L, &tr->r_job);
  memset(tr, 0, sizeof *tr);
  tr->gen = gen;
  tr->label_slot = tr->pend_slot = -1;
  tr->poll_ix = (size_t)-2;
}

/* The loop is collected: everything goes. */
static void trace_drop(lua_State *L, cn_loop *lp) {
  struct cn_trace *tr = lp->trace;
  if (tr == NULL) return;
  trace_clear(L, lp, tr);
  cn_mem_free(&lp->mem, tr, sizeof *tr);
  lp->trace = NULL;
}

/* reset(): the trace goes, and the label functions cosock.trace put in
 * cosock.core while it was on (trace_wait, trace_wake). Cannot fail. */
static void trace_reset(lua_State *L, cn_loop *lp) {
  if (lp->trace == NULL) return;
  trace_clear(L, lp, lp->trace);
  if (lua_checkstack(L, 3)) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &module_key) == LUA_TTABLE) {
      lua_pushliteral(L, "trace_wait");        /* (keys the table has or had: no allocation) */
      lua_pushnil(L);
      lua_rawset(L, -3);
      lua_pushliteral(L, "trace_wake");
      lua_pushnil(L);
      lua_rawset(L, -3);
    }
    lua_pop(L, 1);
  }
}

static const cn_hook trace_hook = {
  .name = "trace", .at = trace_at, .reset = trace_reset, .free = trace_drop
};

/* Whether a buffer of n bytes could be in the machine's memory at all: one
 * larger than its physical memory is refused without trying (the try is
 * pointless, and an allocator that aborts instead of failing, ASan's, would
 * end the process). (A 32-bit machine: more than it can address, too.) */
static int fits_in_memory(uint64_t n) {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psize > 0 && (double)n > (double)pages * (double)psize) return 0;
#endif
  return 1;
}

/* trace_start(size): a new trace of size events (the old one goes). */
static int l_start(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_trace *tr = lp->trace;
  lua_Integer size = luaL_checkinteger(L, 1);
  ev *buf;
  int i, r_strs;
  unsigned gen;
  if (tr != NULL && tr->on) return luaL_error(L, "cosock.trace.start: a trace is on already");
  if (size < 16 || size > INT32_MAX)
    return cn_argerror(L, 1, "cosock.trace.start", "size must be an integer from 16 to %d, got %f",
                       (int)INT32_MAX, (lua_Number)size);
  if ((uint64_t)size > SIZE_MAX / sizeof *buf || !fits_in_memory((uint64_t)size * sizeof *buf))
    return luaL_error(L, "cosock.trace.start: out of memory (a buffer of %d events)", (int)size);
  if (tr == NULL) {
    tr = cn_mem_resize(&lp->mem, NULL, 0, sizeof *tr);
    if (tr == NULL) return luaL_error(L, "cosock.trace.start: out of memory");
    memset(tr, 0, sizeof *tr);
    lp->trace = tr;
  }
  /* What may raise comes first: until the buffer is had, nothing changed
   * but what the next start uses again (the state, the job function). The
   * table's allocation may run a finalizer (which may reset or start a
   * trace): the job function is taken after it (a luaL_ref runs no Lua). */
  lua_newtable(L);                             /* the strings */
  r_strs = luaL_ref(L, LUA_REGISTRYINDEX);
  if (tr->r_job == 0) {
    lua_pushcfunction(L, job_run);
    tr->r_job = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  buf = cn_mem_resize(&lp->mem, NULL, 0, (size_t)size * sizeof *buf);
  if (buf == NULL) {
    cn_unref(L, &r_strs);
    return luaL_error(L, "cosock.trace.start: out of memory (a buffer of %d events)", (int)size);
  }
  /* Nothing below fails. */
  free_buffers(lp, tr);
  cn_unref(L, &tr->r_strs);
  tr->r_strs = r_strs;
  tr->nstrs = 0;
  tr->buf = buf;
  tr->size = (size_t)size;
  tr->n = 0;
  tr->dropped = 0;
  tr->next_id = 0;
  tr->fired = 0;
  tr->ending = 0;
  tr->label_slot = tr->pend_slot = -1;
  tr->poll_ix = (size_t)-2;
  tr->virtual_clock = cn_clock_is_virtual();
  tr->t0 = cn_clock_now();
  tr->on = 1;
  gen = ++tr->gen;
  lp->hooks.what = CN_WHAT_NONE;
  lp->hooks.cause = CN_CAUSE_NONE;             /* (one an error left set) */
  /* The tasks alive now, in slot order, as if spawned now by the program.
   * (Interning a name may run a finalizer that stops, restarts or resets
   * the trace: then this start is over.) */
  for (i = 0; i < cn_tasks_slots(lp) && tr->on && tr->gen == gen; i++) {
    cn_task *t = cn_task_get(lp, i);
    if (t != NULL) first_seen(L, lp, tr, t, 0);
  }
  if (tr->on && tr->gen == gen) cn_hook_set(lp, &trace_hook, POINTS, 1);
  return 0;
}

/* trace_stop(): stops recording; what was recorded stays. */
static int l_stop(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_trace *tr = lp->trace;
  if (tr != NULL) {
    tr->on = 0;
    /* With the points off, a task's end goes unseen: a later task could get
     * its slot and its coroutine's address, and so its id. Ids are asked
     * only while a trace records. */
    if (tr->ids != NULL) memset(tr->ids, 0, (size_t)tr->capids * sizeof *tr->ids);
  }
  cn_hook_set(lp, &trace_hook, POINTS, 0);
  return 0;
}

/* trace_stats() -> {size, recorded, dropped, on, clock, gen} (gen: changed
 * by each start and reset, so save can tell its trace went meanwhile) */
static int l_stats(lua_State *L) {
  const struct cn_trace *tr = cn_loop_get(L)->trace;
  /* (read before the table: its allocation may run a finalizer that resets) */
  lua_Integer size = tr ? (lua_Integer)tr->size : 0, n = tr ? (lua_Integer)tr->n : 0;
  lua_Integer dropped = tr ? (lua_Integer)tr->dropped : 0;
  int on = tr && tr->on, virt = tr && tr->virtual_clock;
  lua_Integer gen = tr ? (lua_Integer)tr->gen : 0;
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, n);
  lua_setfield(L, -2, "recorded");
  lua_pushinteger(L, dropped);
  lua_setfield(L, -2, "dropped");
  lua_pushboolean(L, on);
  lua_setfield(L, -2, "on");
  lua_pushstring(L, virt ? "virtual" : "real");
  lua_setfield(L, -2, "clock");
  lua_pushinteger(L, gen);
  lua_setfield(L, -2, "gen");
  return 1;
}

/* Sets field k of the table on top to string i of the trace (nothing for 0). */
static void set_str(lua_State *L, int strs, const char *k, int i) {
  if (i == 0) return;
  lua_rawgeti(L, strs, i);
  lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/* Pushes "fd 7" (with_kind: "fd 7 recv") for an fd as a record holds it. */
static void push_fd(lua_State *L, int b, int with_kind) {
  int fd = (b - 1) / 2, kind = (b - 1) % 2;
  if (with_kind) lua_pushfstring(L, "fd %d %s", fd, kind == K_RECV ? "recv" : "send");
  else lua_pushfstring(L, "fd %d", fd);
}

/* trace_events([first [, count]]) -> an array of the event tables (the
 * reference's fields), from the first-th (default 1), at most count of them
 * (default all): save writes a long trace a part at a time. */
static int l_events(lua_State *L) {
  struct cn_trace *tr = cn_loop_get(L)->trace;
  size_t i, n = tr ? tr->n : 0;
  lua_Integer first = luaL_optinteger(L, 1, 1), count = luaL_optinteger(L, 2, (lua_Integer)n);
  size_t from = first > 1 ? (size_t)(first - 1) : 0;
  unsigned gen = tr ? tr->gen : 0;
  int strs;
  if (count < 0) count = 0;
  if (from > n) from = n;
  if ((size_t)count < n - from) n = from + (size_t)count;
  lua_settop(L, 0);
  lua_createtable(L, n - from < 1u << 24 ? (int)(n - from) : 0, 0);
  if (n == from) return 1;
  strs = lua_gettop(L) + 1;
  for (i = from; i < n; i++) {
    ev rec;                                    /* (a copy: what follows allocates) */
    const ev *e = &rec;
    if (tr->gen != gen) {                      /* a finalizer reset or restarted it */
      lua_pushliteral(L, "cosock.trace.events: the trace was reset or started again "
                         "while it was read");
      return lua_error(L);
    }
    if (i == from) cn_push_ref(L, tr->r_strs);
    rec = tr->buf[i];
    lua_createtable(L, 0, 6);
    lua_pushnumber(L, e->t);
    lua_setfield(L, -2, "t");
    lua_pushstring(L, kind_names[e->kind < EV_COUNT ? e->kind : 0]);
    lua_setfield(L, -2, "kind");
    set_int(L, "task", e->task);
    switch (e->kind) {
    case EV_SPAWN:
      set_int(L, "parent", e->a);
      set_str(L, strs, "name", e->s1);
      if (e->s2 != 0) set_str(L, strs, "site", e->s2);
      else {
        lua_pushliteral(L, "?");
        lua_setfield(L, -2, "site");
      }
      break;
    case EV_WAIT:
      lua_pushstring(L, what_names[e->sub < CN_WHAT_COUNT ? e->sub : 0]);
      lua_setfield(L, -2, "what");
      if (e->b != 0) {
        push_fd(L, e->b, 0);
        lua_setfield(L, -2, "detail");
      } else {
        set_str(L, strs, "detail", e->s2);
      }
      if (!isnan(e->x)) {
        lua_pushnumber(L, e->x);
        lua_setfield(L, -2, "timeout");
      }
      break;
    case EV_WAKE:
      lua_pushstring(L, cause_names[e->sub < CN_CAUSE_COUNT ? e->sub : 0]);
      lua_setfield(L, -2, "cause");
      set_int(L, "by", e->a);
      if (e->b != 0) {
        push_fd(L, e->b, 1);
        lua_setfield(L, -2, "detail");
      }
      break;
    case EV_END:
      lua_pushstring(L, how_names[e->sub < HOW_COUNT ? e->sub : 0]);
      lua_setfield(L, -2, "how");
      set_str(L, strs, "error", e->s1);
      break;
    case EV_POLL:
      lua_pushnumber(L, e->x);
      lua_setfield(L, -2, "slept");
      set_int(L, "nready", e->a);
      break;
    case EV_TIMERS:
      set_int(L, "count", e->a);
      break;
    case EV_NOTE:
      set_str(L, strs, "what", e->s1);
      set_str(L, strs, "detail", e->s2);
      break;
    }
    lua_rawseti(L, 1, (lua_Integer)(i - from) + 1);
  }
  lua_settop(L, 1);
  return 1;
}

/* The task whose coroutine is at idx (none: the task running now), or NULL. */
static cn_task *task_at(lua_State *L, cn_loop *lp, int idx) {
  lua_State *co;
  int i;
  if (lua_isnoneornil(L, idx)) return cn_task_get(lp, cn_current_slot(lp));
  co = lua_tothread(L, idx);
  for (i = 0; i < cn_tasks_slots(lp); i++) {
    cn_task *t = cn_task_get(lp, i);
    if (t != NULL && t->co == co) return t;
  }
  return NULL;
}

/* trace_mark(what, detail, task) -> true, or false while no trace is on.
 * task: an id (nil: the task running now). */
static int l_mark(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_trace *tr = lp->trace;
  int task, what, detail;
  unsigned gen;
  ev *e;
  if (tr == NULL || !tr->on) {
    lua_pushboolean(L, 0);
    return 1;
  }
  gen = tr->gen;
  lua_settop(L, 3);
  task = lua_isnil(L, 3) ? current_id(L, lp, tr) : (int)lua_tointeger(L, 3);
  luaL_tolstring(L, 1, NULL);
  what = intern_top(L, tr);
  luaL_tolstring(L, 2, NULL);
  detail = intern_top(L, tr);
  if (!tr->on || tr->gen != gen) {             /* a finalizer stopped it meanwhile */
    lua_pushboolean(L, 0);
    return 1;
  }
  e = put(tr, gen, EV_NOTE, task);
  e->s1 = what;
  e->s2 = detail;
  lua_pushboolean(L, 1);
  return 1;
}

/* trace_task_id([co]) -> the trace's id of the task (its coroutine; none:
 * the running one), or nil. */
static int l_task_id(lua_State *L) {
  cn_loop *lp = cn_loop_get(L);
  struct cn_trace *tr = lp->trace;
  cn_task *t = task_at(L, lp, 1);
  if (tr != NULL && t == NULL && lua_isthread(L, 1)) { /* a task that ended lately */
    const void *co = lua_tothread(L, 1);
    int i;
    for (i = 0; i < tr->capids; i++) {
      if (tr->ids[i].gone == co) {
        lua_pushinteger(L, tr->ids[i].gone_id);
        return 1;
      }
    }
  }
  if (tr == NULL || t == NULL || !tr->on) return 0;
  {
    unsigned gen = tr->gen;
    int id = id_of(L, lp, tr, t);              /* (its name's interning may run Lua) */
    if (id == 0 || !tr->on || tr->gen != gen) return 0;
    lua_pushinteger(L, id);
  }
  return 1;
}

/* trace_label(what, detail): the next wait of the running task is a `what`
 * (a wait written in Lua says what it waits on: cosock.sync's lock, ...).
 * Nothing while no trace is on or outside a task. */
static int l_label(lua_State *L) {
  static const char *const whats[] = {
    "recv", "send", "select", "channel-recv", "channel-send", "sleep", "timer", "lock",
    "scope", "lookup", "predicate", "signal", "ossignal", "join", "yield", "other", NULL
  };
  cn_loop *lp = cn_loop_get(L);
  struct cn_trace *tr = lp->trace;
  int what = luaL_checkoption(L, 1, NULL, whats) + 1;
  int slot = cn_current_slot(lp), detail = 0;
  unsigned gen;
  if (tr == NULL || !tr->on || slot < 0) return 0;
  gen = tr->gen;
  if (!lua_isnoneornil(L, 2)) {
    luaL_tolstring(L, 2, NULL);                /* (may run Lua: a __tostring, a finalizer) */
    detail = intern_top(L, tr);
    if (!tr->on || tr->gen != gen) return 0;
  }
  tr->label_detail = detail;
  tr->label_slot = slot;
  tr->label_what = (unsigned char)what;
  return 0;
}

/* trace_cause(cause | nil): the tasks a Lua function is about to wake are
 * woken for cause (a wake written in Lua says why: cosock.signal's); nil
 * after. Nothing while no trace is on. */
static int l_cause(lua_State *L) {
  static const char *const causes[] = {
    "ready", "timer", "send", "close", "signal", "cancel", "lookup", "predicate", "join",
    "spawn", "other", NULL
  };
  cn_loop *lp = cn_loop_get(L);
  int cause = lua_isnoneornil(L, 1) ? CN_CAUSE_NONE : luaL_checkoption(L, 1, NULL, causes) + 1;
  if (lp->trace != NULL && lp->trace->on) cn_cause_set(lp, (unsigned char)cause);
  return 0;
}

void cn_trace_init(lua_State *L, cn_loop *lp) { cn_hook_add(L, lp, &trace_hook); }

void cn_trace_open(lua_State *L, cn_loop *lp) {
  static const luaL_Reg funcs[] = {
    {"trace_start", l_start}, {"trace_stop", l_stop}, {"trace_stats", l_stats},
    {"trace_events", l_events}, {"trace_mark", l_mark}, {"trace_task_id", l_task_id},
    {"trace_label", l_label}, {"trace_cause", l_cause}, {NULL, NULL}
  };
  (void)lp;
  lua_pushvalue(L, -2);                        /* loop, module, loop */
  luaL_setfuncs(L, funcs, 1);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &module_key);
}

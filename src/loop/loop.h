/* loop: the state of one run loop, and which file owns each part of it.
 *
 * A cn_loop is a full userdata (core.c makes it, one per Lua state); every
 * Lua function of the module has it as upvalue 1. Its parts below are each
 * read and written by one file only; the others ask that file through the
 * functions of its header (task.h, park.h, waiters.h, run.h, ...). The
 * cheap questions are static inline there, so asking costs nothing.
 *
 * cosock 0.2.0's globals (its cosock.lua) map to this state as follows:
 *   threads            tasks.slots (C) + the cos array (slot -> coroutine, Lua)
 *   threadnames        the cos array (slot -> the name given to spawn)
 *   threadswaitingfor  task->waits (C) + record[R_WAIT + i] (the objects; a
 *                      task's record: the records table, slot -> record)
 *   readythreads       the ready list (C) + record[R_RECVR], record[R_SENDR]
 *   socketwrappermap   the waiter index (waiters.c): per-fd counts (C) and
 *                      the fdsets table; the project's own wrappers by fd (C)
 *   timers             tasks.timers, a heap on the monotonic clock
 * Every Lua value the C side points to lives in a table anchored in the
 * registry, so the collector never frees what the loop uses.
 * doc/architecture.md draws the whole picture. */
#ifndef COSOCK_LOOP_H
#define COSOCK_LOOP_H

#include <stdint.h>

#include <lauxlib.h>
#include "compat.h"

#include "lib/poller.h"
#include "lib/ready_list.h"
#include "lib/timer_heap.h"
#include "mem.h"

struct cn_task;
struct cn_task_block;
struct cn_tobj;
struct cn_alloc_count;
struct cn_resolver;
struct cn_dnslook;
struct cn_pwait;
struct cn_sim;
struct cn_taskrec;
struct cn_hook;
struct cn_late;
struct cn_buffered;
struct cn_trace;

enum { K_RECV = 0, K_SEND = 1 }; /* the two kinds of wait: readable, writable */

static inline const char *cn_kind_name(int kind) {
  return kind == K_RECV ? "recvr" : "sendr";
}

typedef struct cn_list { int head, tail, n; } cn_list;

/* A wait's timeout: seconds, and whether (and which) integer it was given as,
 * so that get_thread_metadata gives back the number as it was yielded. */
typedef struct cn_tmo {
  double secs;
  lua_Integer ival;
  unsigned char set, is_int;
} cn_tmo;

struct cn_loop;
/* Called by the waiter index for a ready fd that the loop's own C code
 * watches (waiters.h, cn_fd_watch). */
typedef void (*cn_fd_watcher)(lua_State *L, struct cn_loop *lp, int fd, int events);
/* Reads the fd of the socket object at index inner without calling its
 * getfd, for objects a feature knows the layout of (waiters.h,
 * cn_fd_set_reader): the fd, -1 for a closed socket, or CN_FD_UNKNOWN. */
typedef int (*cn_fd_reader)(lua_State *L, struct cn_loop *lp, int inner);
/* Delivers to a native waiter: wait i of task t is ready (park.c's
 * cn_deliver, set by park when it opens: the fd index calls no file above it). */
typedef void (*cn_fd_deliverer)(lua_State *L, struct cn_loop *lp, struct cn_task *t, int i);
#define CN_FD_UNKNOWN (-2)

#define CN_MAX_NATIVE 8 /* wrapper metatables the project registers (tcp, udp, tls) */
#define CN_MAX_HOOKS 16 /* features attached to the core's fixed points (hooks.h) */

typedef struct cn_loop {
  cn_mem mem;                 /* the Lua state's allocator, for the C arrays (mem.c) */
  unsigned opened;            /* core.c: the features core.open has registered (bits) */

  /* task.c: the task slots, the run lists and the task timers. */
  struct {
    struct cn_task **slots;
    int nslots, capslots;
    int freehead;             /* unused slots, linked through their tasks' next; -1 ends */
    int nfree;
    struct cn_task_block *blocks; /* where the task structs live, newest first */
    int blockused;            /* structs handed out of the newest block */
    int live;                 /* tasks spawned and not finished or cancelled */
    cn_list lists[3];         /* [L_A], [L_B]: the ready list and the wake list */
    unsigned char ready;      /* which of L_A/L_B is the ready list */
    th_heap timers;
    int narmed;               /* tasks whose timer is armed */
    int nxarmed;              /* other timers queued in the heap (cn_xtimer) */
    size_t nxreserved;        /* heap room kept for those */
    int r_cos, r_handles, r_records; /* registry: the tasks' Lua values (task.c) */
    int nrecords;             /* records in r_records: none, none to look for */
    unsigned epoch;           /* bumped by reset: what a caller read before is gone */
    int current;              /* slot run is resuming, -1 (written by run: cn_set_current) */
    lua_State *current_co;    /* its coroutine while lua_resume runs, else NULL (the same) */
  } tasks;

  /* run.c: whether run() is on the C stack (which task it resumes is task.c's:
   * tasks.current, set by run through cn_set_current). */
  struct {
    int running;
    double step_cap;          /* the limit of the step being run (PASS_STEP), seconds */
    unsigned pass;            /* passes so far (wraps; only compared for equality) */
    int r_hook;               /* registry: the stall hook */
    int r_errh;               /* registry: the error handler, or nil */
    int r_recover;            /* registry: recover_protected, made once (see cn_run) */
    int r_poke;               /* registry: a Lua function that does nothing (see let_hooks_run) */
    const char *busy;         /* C code outside run calling Lua on loop state it holds, or NULL */
    int busy_slot;            /* ... for the task in this slot */
    int ran;                  /* this pass resumed tasks (cn_pass_ran) */
    int blocked_closed;       /* the last pass would have stalled but for a wait on a
                                 closed socket: it blocks for ever, as cosock does
                                 (what run reports when Ctrl-C ends it) */
    uint64_t passes, polls;   /* since load or reset (stats) */
  } run;

  /* hooks.c: the features attached to the core's fixed points (hooks.h). */
  struct {
    unsigned mask;            /* points some hook has on: the core tests one bit */
    int n;
    const struct cn_hook *h[CN_MAX_HOOKS]; /* in registration order */
    unsigned on[CN_MAX_HOOKS];             /* the points each has on */
    /* Per point: the first and last hook that has it on (cn_at_call walks
     * only those; lo > hi when none). At most 32 points. */
    unsigned char lo[32], hi[32];
    /* Hints: several writers by design. Each is written where the fact is
     * known: by the features (hooks.h: cn_cause_set around a wake,
     * cn_what_set before a bare wait) and by waiters.c (the fd it is
     * dispatching, and a close's cause when closing wakes); read by the
     * hooks at CN_AT_READY and CN_AT_PARKED (the trace, trace.c, which also
     * clears cause and what once read, and when a turn or a trace begins).
     * Plain stores: no call, no listener needed. */
    unsigned char cause;      /* CN_CAUSE_*: why the tasks woken now are woken */
    unsigned char what;       /* CN_WHAT_*: what the running task is about to wait on */
    int waking;               /* fd * 2 + kind + 1 of the fd being dispatched, 0 none */
  } hooks;

  /* trace.c: cosock.trace's recording (NULL until a trace is first started). */
  struct cn_trace *trace;

  /* names.c: the files tasks were spawned from (made at the first spawn). */
  struct {
    int r_files;              /* registry: file -> number, number -> file; 0: none yet */
    int n;                    /* files numbered */
    const char *last;         /* the last file seen (a string r_files keeps) */
    int last_site;            /* ... and its number */
  } sites;

  /* accounting.c: whom the time and the bytes since the last mark belong
   * to, marked at the core's fixed points (hooks.h). */
  struct {
    struct cn_alloc_count *alloc; /* the state's counting allocator (alloc_count.c), once on */
    int on;                   /* set_accounting(true): each mark reads the clock */
    struct cn_task *owner;    /* the task resumed since the mark; NULL: the loop */
    int64_t mark_ns;          /* the clock at the mark (while on) */
    uint64_t mark_bytes;      /* alloc->bytes at the mark */
    int64_t loop_ns;          /* run's own time, outside tasks and polls (while on) */
    struct cn_acct_task *per; /* each task's busy time and bytes, by slot (accounting.h), */
    int cap;                  /* made when accounting is first turned on; entries in per */
  } acct;

  /* watchdog.c: cosock.set_watchdog, and the task it watches now. */
  struct {
    int64_t limit_ns;         /* 0: no watchdog */
    int error;                /* the action is "error" (else "report") */
    int r_reporter;           /* registry: the reporter, false for standard error */
    lua_State *co;            /* the coroutine watched now, NULL between resumes */
    int slot;                 /* the task a report names; -1: the one running */
    int r_lib;                /* registry: the source prefix of cosock's own Lua code */
    unsigned char deferring;  /* due inside cosock's Lua code: looks at each instruction */
    int64_t due_ns;           /* when it is reported next */
    int64_t start_ns;         /* when its resume began */
    lua_Hook saved;           /* the hook the program had set on co */
    int saved_mask, saved_count;
    struct cn_loop *outer;    /* the loop watched before (another state's, nested) */
    unsigned char jit_held;   /* LuaJIT: the watchdog turned the compiler off */
    unsigned char jit_was_on; /* ... and it was on before */
  } wd;

  /* park.c: waits being made, and the classes of the project's wrappers. */
  struct {
    struct {                  /* a wait announced by cn_prepark for the next yield */
      int slot;               /* -1: none */
      unsigned char kind, polled;
      cn_tmo tmo;
      lua_Integer waitid;     /* the wait's id, known before it is parked */
      int fd;                 /* the wrapper's cached fd, or -1 (then looked up) */
    } pre;
    int parking;              /* slot being parked, -1 */
    int nset;                 /* wakers handed out so far while parking */
    lua_Integer waitids;      /* last wait id handed out */
    const void *natmt[CN_MAX_NATIVE]; /* registered wrapper metatables */
    int nnatmt;
    int r_natives;            /* registry: those metatables, kept alive */
    int r_unset;              /* registry: unset_call, made once (see pcall_unset) */
    struct cn_buffered *buffered; /* select waits on sockets with buffered data, */
    int nbuffered, capbuffered;   /* woken after the pass's resumes (park.c) */
  } park;

  /* waiters.c: which task or object waits on which fd, and the poller. */
  struct {
    cn_poller poller;
    const cn_backend *backend0; /* the backend reset goes back to */
    int *fdcount;             /* waits per fd*2+kind */
    int *natslot;             /* per fd*2+kind: slot + 1 of the native waiter, 0 none */
    int *natwait;             /* per fd*2+kind: which wait of that task */
    unsigned char *fdflag;    /* per fd: queued in dirty[], watched by C code (waiters.c) */
    const void **fdobj;       /* per fd: address of the object last registered */
    int nfd;                  /* size of fdflag (fdcount has 2*nfd) */
    int *dirty;               /* fds whose waits dropped this pass (nfd long) */
    int ndirty;
    int nwaitfds;             /* fds at least one task waits on */
    int r_fdsets, r_inner;    /* registry: protocol objects per fd, socket per fd */
    cn_fd_watcher watcher;    /* gets the ready fds that C code watches */
    cn_fd_reader reader;      /* reads a known socket's fd (NULL: getfd() always) */
    struct cn_late *late;     /* waits whose object had no fd yet (-1): asked again each pass */
    int nlate, caplate;
    int r_late;               /* registry: their objects, late[k + 1] for late[k] */
    cn_fd_deliverer deliver;  /* a ready fd's native waiter (cn_fd_set_deliverer) */
    int nready;               /* descriptors the last poll gave back */
  } waiters;

  /* fidelity.c: the switches that turn on departures from cosock 0.2.0 a
   * program can observe (README, "Differences"): off when loaded and after
   * reset. */
  struct {                            /* (set_close_wakes(true): the core's switch
                                         CN_AT_CLOSE_WAKES, hooks.h) */
    unsigned char luasocket_timeouts; /* set_luasocket_timeouts(true) */
  } fid;

  /* handle.c */
  int r_handle_mt;            /* this loop's handle metatable */
  int r_handle_cos;           /* registry: handle -> slot, then coroutine; weak */
  int r_handle_results;       /* registry: handle -> outcome, weak keys */
  int r_handle_waiters;       /* registry: handle -> its waiters' wakers, weak keys */
  int handle_lists;           /* waiter lists made and not yet taken by a task's end
                               * (more once a handle with one is collected) */

  /* timer_object.c: the timer objects of cosock.timer. */
  struct {
    cn_rlist due;             /* timers that came due with a waker set: to deliver */
    uint64_t gen;             /* bumped by reset: timers of older ones are dead */
    int nwaited;              /* pending timers with a waker set */
    int r_anchor;             /* registry: timer (light) -> timer, while a waker is set */
    int r_mt;                 /* registry: this loop's timer metatable */
  } timers;

  /* resolver.c: the asynchronous resolver (c-ares), made on first use. */
  struct {
    struct cn_resolver *r;    /* NULL until the first lookup (always without c-ares) */
    cn_rlist done;            /* lookups that ended, for their tasks */
    int nboxes;               /* lookups (their Lua objects) not yet collected */
    int r_mt;                 /* registry: the lookup objects' metatable */
  } dns;

  /* predicate.c: the predicate waits of cosock.when. */
  struct {
    struct cn_pwait *w;       /* the waits, oldest first (ended ones marked gone) */
    int n, cap;
    int live;                 /* waits not marked gone */
    int busy;                 /* evaluations on the C stack using the evaluator */
    int evaluated;            /* the last pass evaluated them, and ran no task */
    double interval;          /* seconds between evaluations while no task runs */
    double last;              /* clock of the last evaluation */
    int r_ws;                 /* registry: w[i]'s predicate at 2i+1, its result table at 2i+2 */
    int r_ev;                 /* registry: the evaluator coroutine, or false */
    int r_mt;                 /* registry: metatable of a wait table yielded as an object */
  } preds;

  /* cancel.c: each scope task's deadline by slot (0: none), made at the
   * first scope_mark (a program without scopes pays nothing per task). */
  struct {
    double *deadline;
    int cap;
  } cancel;

  /* sim.c: cosock.sim's state while the simulation is on, else NULL. */
  struct cn_sim *sim;

  /* tasks_warn.c: cosock.tasks's stamps and warnings, NULL until that
   * module first loads. */
  struct cn_taskrec *taskrec;

  /* luasocket_tcp.c */
  struct {
    const void *client_mt;    /* LuaSocket's tcp{client} metatable, once seen */
    const void *other_mt[2];  /* its tcp{master} and tcp{server}, once seen */
    int off;                  /* the fast path is switched off (COSOCK_NO_FAST_PATH) */
    int send_nres;            /* values its send returns on success (3; a debug
                               * build: 4), once a send through it told; else 0 */
  } ls;
} cn_loop;

#define LOOP_UPVALUE lua_upvalueindex(1)

/* The loop of the running C function (its upvalue 1). */
static inline cn_loop *cn_loop_get(lua_State *L) {
  return (cn_loop *)lua_touserdata(L, LOOP_UPVALUE);
}

/* Pushes registry[ref]. */
static inline void cn_push_ref(lua_State *L, int ref) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
}

/* Drops a registry reference this loop took (refs not yet taken are 0). */
static inline void cn_unref(lua_State *L, int *ref) {
  if (*ref > 0) luaL_unref(L, LUA_REGISTRYINDEX, *ref);
  *ref = 0;
}

/* The project's wrappers yield (recvt, sendt, timeout, CN_INTERNAL) when they
 * wait after a call failed, and its channels when a receive waits: they
 * ignore the ready lists (none are built) and a socket's buffer is empty (no
 * dirty() call). A light userdata that only cosock.core.INTERNAL hands out. */
extern const char cn_internal_mark;
#define CN_INTERNAL ((void *)&cn_internal_mark)

#endif

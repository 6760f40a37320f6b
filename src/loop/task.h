/* task: task slots, the two run lists and the task timers (task.c owns
 * loop->tasks). A task's fields are written by the file named beside them;
 * task.c also sets every field when a task starts. Its state moves: READY
 * (task.c, when spawned or woken), RUNNING (run.c while resumed, handle.c
 * while cancelled), PARKED (park.c), FREE (task.c). A wait ends timed out
 * when its timer fires (task.c) or a feature cuts it (park.c's cn_wait_cut,
 * for a scope's cancel): only those two set timed_out; ending a wait clears
 * it (park.c).
 *
 * The words where the wait flags meet:
 *   native    a wait on one of the project's socket wrappers: the loop reads
 *             its fd itself and calls no setwaker or _wake (cn_wait.native)
 *   bare      a wait noted before the yield (cn_prepark) and parked without
 *             reading a yield tuple: one native wait, no record entries
 *   internal  a wait a C function of the project makes for itself (the
 *             yield's fourth value is CN_INTERNAL): nobody reads its ready
 *             lists, so the loop keeps none
 *   hooked    a feature asks the hooks' task questions about this task
 *             (cancel.c: a scope's task) */
#ifndef COSOCK_TASK_H
#define COSOCK_TASK_H

#include <stdint.h>

#include "compat.h"

#include "loop.h"

/* Fields of a task's record, made on its first wait that speaks the waker
 * protocol (a task that only waits on the project's sockets and channels
 * never has one): the ready lists and the objects it waits on. */
enum { R_RECVR = 1, R_SENDR, R_WAIT };

enum task_state {
  T_FREE = 0,   /* slot unused */
  T_READY,      /* in a run list, will be resumed */
  T_PARKED,     /* yielded, waiting for a waker, an fd or its timer */
  T_RUNNING     /* being resumed (or parked) by the loop right now */
};

enum { L_NONE = 0, L_A = 1, L_B = 2 }; /* which run list a task is linked in */

typedef struct cn_wait {
  const void *obj;      /* the object (native waits: its identity for core.wake) */
  int fd;               /* polled fd, -1 when the object is not polled */
  unsigned char kind;   /* K_RECV or K_SEND */
  unsigned char native; /* one of the project's wrappers: no Lua protocol calls */
  unsigned char fired;  /* delivered (native waits) */
  unsigned char closed; /* on a socket that is closed: cosock's select would block on it */
} cn_wait;

/* What a task's last yielded timeout was (cn_task's tmo). */
enum { CN_TMO_NONE, CN_TMO_SECS, CN_TMO_INT };

typedef struct cn_task {
  /* Ordered by size, so that no padding makes the struct bigger (one per
   * task: doc/footprint.md), and what every resume and wake reads first:
   * those fields share 64 bytes. */
  lua_State *co;            /* its coroutine (kept alive by the cos array) */
  /* park.c: the current wait. */
  lua_Integer waitid;       /* unique per wait; 0 while not waiting */
  cn_wait *waits;           /* &wait1 until a wait needs more than one */
  /* task.c */
  int slot;
  int prev, next;           /* run list links (slot numbers, -1 ends); next
                             * links the free slots while the task is free */
  /* park.c */
  int nwait, capwait;
  int nrecvt, nsendt;       /* objects in the last yield, for metadata */
  /* run.c */
  unsigned last_pass;       /* the pass that last resumed it (see cn_woken_last_pass) */
  /* task.c */
  unsigned char armed;
  unsigned char state;      /* task_state: several writers by design, one per move
                             * (see the top: task.c, run.c, handle.c, park.c) */
  unsigned char list;       /* L_NONE, L_A, L_B */
  /* park.c, and task.c when the timer fires (see the top) */
  unsigned char timed_out;
  unsigned char internal;   /* a wrapper's own retry wait (see CN_INTERNAL) */
  unsigned char bare;       /* parked by cn_prepark: one native wait, no record entries */
  /* park.c: the last yielded timeout (a cn_tmo, spread out so that it pads
   * nothing: cn_task_set_timeout): CN_TMO_NONE, _SECS or _INT (tmo_v). */
  unsigned char tmo;
  /* the core: whether the hooks' task questions are asked about it
   * (hooks.h: non-zero; its bits are the feature's that set it: cancel.c's
   * CN_SCOPED, CN_CANCELLED, CN_BY_HANDLE; task.c zeroes it at spawn). */
  unsigned char hooked;
  cn_wait wait1;
  /* task.c: the timer. It stays queued after a wait ends (unarmed) and a
   * later wait arms it again in place when that deadline is not earlier, so
   * a socket timeout costs no heap work per wait; the node moves to its real
   * deadline, or goes, when it reaches the top (cn_timers_run). */
  th_node timer;
  double deadline;          /* when armed: the real deadline, >= timer.when */
  uint64_t dseq;            /* ... and its tie-breaker */
  union {                   /* park.c: ... its integer (CN_TMO_INT) or else its
                             * seconds (one of them: cn_task_tmo_secs) */
    double secs;
    lua_Integer ival;
  } tmo_v;
  /* run.c */
  long long last_wake;      /* os.time() of the last resume, -1 for never */
  /* run.c, through accounting.h (task.c zeroes them when the task starts) */
  lua_Integer resumes;      /* times the loop resumed it */
  /* core.c (names.c): where it was spawned, for its errors */
  int site, site_line;
  /* wrapper.c */
  const void *sent_by;      /* the wrapper that last sent in this task's coroutine (a hint) */
} cn_task;

/* Keeps v as t's last yielded timeout. */
static inline void cn_task_set_timeout(cn_task *t, cn_tmo v) {
  if (!v.set) {                                /* (the rest of v may be unset then) */
    t->tmo = CN_TMO_NONE;
    return;
  }
  t->tmo = v.is_int ? CN_TMO_INT : CN_TMO_SECS;
  if (v.is_int) t->tmo_v.ival = v.ival;
  else t->tmo_v.secs = v.secs;
}

/* The seconds of t's last yielded timeout (an integer's exactly as
 * lua_tonumber gives them). */
static inline double cn_task_tmo_secs(const cn_task *t) {
  return t->tmo == CN_TMO_INT ? (double)t->tmo_v.ival : t->tmo_v.secs;
}

/* The task in slot, or NULL unless the slot is in use. */
static inline cn_task *cn_task_get(cn_loop *lp, int slot) {
  cn_task *t;
  if (slot < 0 || slot >= lp->tasks.nslots) return NULL;
  t = lp->tasks.slots[slot];
  return t && t->state != T_FREE ? t : NULL;
}

/* After a call that may have run a finalizer (one that allocates: it may
 * end tasks, spawn, or outside run reset the loop): the task in slot if it
 * is still the one whose coroutine is co, in the loop's epoch as it was
 * before the call, else NULL. */
static inline cn_task *cn_task_same(cn_loop *lp, int slot, const lua_State *co, unsigned epoch) {
  cn_task *t;
  if (lp->tasks.epoch != epoch) return NULL;
  t = cn_task_get(lp, slot);
  return t != NULL && t->co == co ? t : NULL;
}

/* Which task the loop is resuming. Written by run alone (cn_set_current,
 * cn_set_current_co); asked by park and the features. */
static inline void cn_set_current(cn_loop *lp, int slot) { lp->tasks.current = slot; }
static inline void cn_set_current_co(cn_loop *lp, lua_State *co) { lp->tasks.current_co = co; }
/* The slot the loop is resuming, -1 when none. */
static inline int cn_current_slot(const cn_loop *lp) { return lp->tasks.current; }
/* The task whose own coroutine L is, while the loop resumes it; NULL in a
 * coroutine the task resumes itself, or outside the loop. */
static inline cn_task *cn_own_task(cn_loop *lp, lua_State *L) {
  return lp->tasks.current_co == L ? cn_task_get(lp, lp->tasks.current) : NULL;
}

static inline int cn_tasks_live(const cn_loop *lp) { return lp->tasks.live; }
static inline int cn_tasks_ready(const cn_loop *lp) {
  return lp->tasks.lists[lp->tasks.ready].n;
}
/* Tasks to resume without waiting: the ready list and what the current pass
 * has still to resume (the wake list). */
static inline int cn_tasks_runnable(const cn_loop *lp) {
  return lp->tasks.lists[L_A].n + lp->tasks.lists[L_B].n;
}
/* One past the highest slot ever used (for a walk over every task). */
static inline int cn_tasks_slots(const cn_loop *lp) { return lp->tasks.nslots; }
/* Bumped by each reset: a slot or wait read before a different epoch names
 * a task of before the reset. */
static inline unsigned cn_tasks_epoch(const cn_loop *lp) { return lp->tasks.epoch; }

void cn_tasks_init(lua_State *L, cn_loop *lp);
/* Pushes the three new tables a reset needs (may raise). */
void cn_tasks_new_tables(lua_State *L);
/* Forgets every task: the tables pushed by cn_tasks_new_tables, from index
 * tables on, take the old ones' place. Cannot fail. */
void cn_tasks_reset(lua_State *L, cn_loop *lp, int tables);
void cn_tasks_free(lua_State *L, cn_loop *lp);   /* everything, for the loop's __gc */

/* Takes a free slot for the coroutine, name and handle at those indices (may
 * raise before taking it; a finalizer that spawns or resets meanwhile is
 * allowed); the new task is ready for the next pass. The handle is mapped
 * to the slot (cn_hook.handle_map) unless it was made mapping to it already
 * (mapped: the slot it maps to, or -1). */
cn_task *cn_task_new(lua_State *L, cn_loop *lp, int co, int name, int handle, int mapped);
/* The slot the next cn_task_new will most likely take (the first free one),
 * for a handle made before it. */
static inline int cn_task_next_slot(const cn_loop *lp) {
  return lp->tasks.nfree > 0 ? lp->tasks.freehead : lp->tasks.nslots;
}
void cn_task_free(lua_State *L, cn_loop *lp, cn_task *t);
/* Pushes t's coroutine. */
void cn_task_push_co(lua_State *L, cn_task *t);
/* Pushes the name slot's task was given. */
void cn_task_push_name(lua_State *L, cn_loop *lp, int slot);
/* Pushes slot's handle, or nil once the program dropped it. */
void cn_task_push_handle(lua_State *L, cn_loop *lp, int slot);
/* Makes the handle at index handle, made by cn_handle_push for t's
 * coroutine, t's handle (for one the program dropped). Cannot fail. */
void cn_task_set_handle(lua_State *L, cn_loop *lp, cn_task *t, int handle);
/* Pushes slot's record, or nil when it has none. */
void cn_task_push_record(lua_State *L, cn_loop *lp, int slot);
/* Pushes slot's record, making it first when the task has none (may raise
 * then, before changing anything). */
void cn_push_record(lua_State *L, cn_loop *lp, int slot);
void cn_push_label(lua_State *L, cn_loop *lp, int slot); /* task name for messages */
/* Pushes a short description of the object at idx for an error: its
 * tostring (no metamethods run), after its class when it is a socket wrapper
 * ("tcp{client} table: 0x..."). */
void cn_push_object_name(lua_State *L, int idx);

/* Run lists: the ready list fills while the wake list drains. */
void cn_make_ready(cn_loop *lp, cn_task *t);    /* a parked task, for the next pass */
void cn_list_unlink(cn_loop *lp, cn_task *t);
void cn_lists_swap(cn_loop *lp);                /* the ready list becomes the wake list */
int cn_wake_pop(cn_loop *lp);                   /* next slot to resume this pass, or -1 */
int cn_wake_count(const cn_loop *lp);           /* slots left to resume this pass */
int cn_wake_nth(const cn_loop *lp, int k);      /* the k-th (from 0) of them, left there, or -1 */
int cn_wake_take(cn_loop *lp, int slot);        /* takes slot from them: slot, or -1 if not there */
int cn_wake_has(const cn_loop *lp, int slot);   /* whether slot is one of them */
void cn_wake_requeue(cn_loop *lp);              /* unresumed wake list back in front */

/* Timers */
static inline int cn_timers_armed(const cn_loop *lp) {
  return lp->tasks.narmed + lp->tasks.nxarmed;
}
static inline int cn_task_timers_armed(const cn_loop *lp) { return lp->tasks.narmed; }
void cn_timer_arm(cn_loop *lp, cn_task *t, double deadline);
void cn_timer_disarm(cn_loop *lp, cn_task *t);
/* Makes every task whose deadline passed ready (timed out), in deadline
 * order, until a due cn_xtimer, which it fires and then stops (its owner
 * acts on it before the timers after it: call again). Returns the earliest
 * remaining deadline, or -1 when no timer is armed. */
double cn_timers_run(cn_loop *lp, double now);
/* The earliest deadline in the heap, or -1 when no timer is armed. */
static inline double cn_timers_next(const cn_loop *lp) {
  th_node *top = th_top(&lp->tasks.timers);
  return top ? top->when : -1;
}

/* Timers of other parts of the loop (timer_object.c) share the tasks' heap.
 * Their node is tagged CN_TAG_XTIMER (a task's is 0) and is the first member
 * of a cn_xtimer: when it is due, cn_timers_run takes it out of the heap and
 * calls fire, which may queue it again. */
enum { CN_TAG_TASK = 0, CN_TAG_XTIMER = 1 };
typedef struct cn_xtimer {
  th_node node;
  void (*fire)(cn_loop *lp, struct cn_xtimer *x);
} cn_xtimer;
/* Keeps heap room for one more cn_xtimer: 0, or -1 when memory is exhausted.
 * Each reservation is given back by cn_xtimer_unreserve. */
int cn_xtimer_reserve(cn_loop *lp);
void cn_xtimer_unreserve(cn_loop *lp);
/* Queues x at when, or moves it there if queued. Cannot fail (reserved). */
void cn_xtimer_arm(cn_loop *lp, cn_xtimer *x, double when);
/* Takes x out of the heap if it is queued. */
void cn_xtimer_disarm(cn_loop *lp, cn_xtimer *x);

#endif

/* hooks: how a feature attaches to the loop core (hooks.c owns loop->hooks).
 *
 * The core (run.c, task.c, park.c, waiters.c) knows no feature. It calls the
 * features at fixed points of a pass through this interface instead:
 *
 *  - points (CN_AT_*): each feature lists, in a cn_hook, one function `at`
 *    for every point; cn_hook_set turns the points it wants called on and off
 *    as its state changes (accounting while it is switched on, the watchdog
 *    while a limit is set, predicates while a wait is listed, ...). The core
 *    tests one bit of one word per point, so a point nobody listens to costs
 *    what an `if` on a feature's flag cost before;
 *  - questions the core asks at its rare moments (would the loop stall, how
 *    long may the poll sleep, a task ended, its error's text): the functions
 *    of the same cn_hook, NULL where a feature has no answer;
 *  - switches: a point with no function (CN_AT_CLOSE_WAKES) that a feature
 *    turns on to change what the core does.
 *
 * A feature registers its cn_hook once, when the module opens (core.c,
 * cn_hook_add); the hooks are called in registration order. doc/architecture.md
 * lists the points, who listens where, and how to add a feature. */
#ifndef COSOCK_HOOKS_H
#define COSOCK_HOOKS_H

#include "compat.h"

#include "loop.h"

struct cn_task;

/* The fixed points, in the order a pass meets them. t is the task where one
 * is named, else NULL. A point's function must not raise unless it says so. */
enum {
  CN_AT_RUN_BEGIN,    /* run or step begins, before its first pass */
  CN_AT_TURN,         /* a task's turn begins (t), before it leaves its wait */
  CN_AT_DROPPED,      /* that task went (cancelled, or resumed behind the loop's back)
                         without being resumed: its turn is over */
  CN_AT_RESUME,       /* just before lua_resume(t->co) */
  CN_AT_RESUMED,      /* just after lua_resume returned */
  CN_AT_ENDED,        /* ... and the task returned or raised */
  CN_AT_RESUMES_DONE, /* the pass's ready list drained (cn_pass_ran: whether it
                         resumed tasks). May raise (run recovers the loop) */
  CN_AT_TIMERS,       /* the heap's due timers ran and one of a feature's came
                         due: deliver it. The core runs the heap again and calls
                         again while a hook keeps this point on. May raise */
  CN_AT_DELIVER,      /* before the poll timeout is reckoned: what ended outside
                         any task (a lookup) is told to its tasks. May raise */
  CN_AT_TIMEOUT,      /* the poll timeout is reckoned: cn_hook.timeout is asked */
  CN_AT_POLL,         /* just before the poll (or CN_AT_SLEEP's sleep) */
  CN_AT_POLLED,       /* just after it */
  CN_AT_RUN_END,      /* run or step returns or raises, before recovery */
  CN_AT_CLOSE_WAKES,  /* (a switch, never called) closing a socket wakes its
                         waiters, and a closed socket does not make the loop block */
  CN_AT_ORDER,        /* (a question) the ready batch runs in the order the
                         hook's next_ready gives instead of first-come */
  CN_AT_SLEEP,        /* (a question) instead of the poll, the hook's sleep
                         moves time on (no descriptor is polled) */
  /* The points of what a task goes through (a trace listens to them): */
  CN_AT_SPAWN,        /* t was spawned (core.c, once its site is noted) */
  CN_AT_READY,        /* t, parked, was made ready (task.c cn_make_ready; L may be
                         NULL there: the hints below say why) */
  CN_AT_PARKED,       /* t's turn ended in a wait, now made (run.c) */
  CN_AT_TIMED,        /* the due timers ran (run.c run_timers) */
  CN_AT_FREED,        /* t is freed (task.c cn_task_free): ended, dropped, cut */
  CN_AT_COUNT
};

#define CN_AT(point) (1u << (point))

/* Why a task is made ready, where only a feature knows it: the feature
 * sets lp->hooks.cause around the call that wakes (cn_cause_set, then back
 * to what it was); the core's own reasons (a ready fd, a timer, the task
 * that runs) need no hint. Read at CN_AT_READY. */
enum {
  CN_CAUSE_NONE, CN_CAUSE_READY, CN_CAUSE_TIMER, CN_CAUSE_SEND, CN_CAUSE_CLOSE,
  CN_CAUSE_SIGNAL, CN_CAUSE_CANCEL, CN_CAUSE_LOOKUP, CN_CAUSE_PREDICATE, CN_CAUSE_JOIN,
  CN_CAUSE_SPAWN, CN_CAUSE_OTHER, CN_CAUSE_COUNT
};
/* What a task is about to wait on, where the yield does not say it (a wait
 * a feature parks bare, with no fd: a channel's, a lookup's): the feature
 * sets lp->hooks.what just before it yields (cn_what_set). The trace's hook
 * (the one reader, while it records) reads and clears it at CN_AT_PARKED,
 * and clears it when a turn begins (CN_AT_RESUME). */
enum {
  CN_WHAT_NONE, CN_WHAT_RECV, CN_WHAT_SEND, CN_WHAT_SELECT, CN_WHAT_CHANNEL_RECV,
  CN_WHAT_CHANNEL_SEND, CN_WHAT_SLEEP, CN_WHAT_TIMER, CN_WHAT_LOCK, CN_WHAT_SCOPE,
  CN_WHAT_LOOKUP, CN_WHAT_PREDICATE, CN_WHAT_SIGNAL, CN_WHAT_OSSIGNAL, CN_WHAT_JOIN,
  CN_WHAT_YIELD, CN_WHAT_OTHER, CN_WHAT_COUNT
};
/* Sets the wake cause hint; returns the one before, to set back after. A
 * plain store: nothing is called, whether or not anyone listens. */
static inline unsigned char cn_cause_set(cn_loop *lp, unsigned char cause) {
  unsigned char was = lp->hooks.cause;
  lp->hooks.cause = cause;
  return was;
}
static inline void cn_what_set(cn_loop *lp, unsigned char what) { lp->hooks.what = what; }

/* How a task ended, for cn_hook.task_end. */
enum { CN_ENDED_RETURNED = 1, CN_ENDED_RAISED, CN_ENDED_CANCELLED };

typedef struct cn_hook {
  const char *name;   /* the feature, for messages */
  /* The points this hook has turned on. */
  void (*at)(lua_State *L, cn_loop *lp, int point, struct cn_task *t);
  /* CN_AT_TIMEOUT: the poll timeout (-1: none), capped as the feature needs. */
  double (*timeout)(cn_loop *lp, double timeout);
  /* CN_AT_ORDER: takes the next slot of the pass's wake list to resume (the
   * wake list's cn_wake_count/nth/take), or -1 when it is empty. May run Lua. */
  int (*next_ready)(lua_State *L, cn_loop *lp);
  /* CN_AT_SLEEP: the poll would wait up to timeout seconds (< 0: no limit);
   * do what stands for it. May raise. */
  void (*sleep)(lua_State *L, cn_loop *lp, double timeout);
  /* The task questions, asked only about a task whose `hooked` a feature set
   * (cancel.c: a scope's task), of every hook that has the function:
   * wait_cap: the deadline of a wait of t that would end at when (-1: never),
   * capped as the feature needs (no Lua); */
  double (*wait_cap)(const cn_loop *lp, const struct cn_task *t, double now, double when);
  /* checkpoint: t is about to wait (cn_prepark), or its wait ended without
   * its result (timed out: cn_wait_end): may raise instead; */
  void (*checkpoint)(lua_State *L, cn_loop *lp, struct cn_task *t);
  /* cancel: handle:cancel() of t: true when the feature cancels it its own
   * way (then the task is not dropped); */
  int (*cancel)(cn_loop *lp, struct cn_task *t);
  /* raised: a hooked task raised the value at index err (the task is freed
   * already): 0, or how it ended (CN_ENDED_RAISED or _CANCELLED) when the
   * feature has the error (then no error handler is called). */
  int (*raised)(lua_State *L, cn_loop *lp, int err);
  /* The loop would stall (no task ready, no fd polled, no task timer): true
   * when the feature may still wake a task by itself (asked of every hook). */
  int (*holds)(const cn_loop *lp);
  /* A task ended: the task whose handle is at index handle (nil: dropped)
   * ended how, with n values from index first (results, or its error). May
   * raise (a waker's error). */
  void (*task_end)(lua_State *L, cn_loop *lp, int handle, int how, int first, int n);
  /* Pushes a new handle for a task whose own the program dropped (its name
   * and coroutine at those indices); the first hook that has it makes it. */
  void (*new_handle)(lua_State *L, cn_loop *lp, int name, int co);
  /* Maps the handle at index handle to the value at index v (the task's
   * slot while it lives, its coroutine once it ended): the first hook that
   * has it does it. Cannot fail, allocates nothing (the key exists). */
  void (*handle_map)(lua_State *L, cn_loop *lp, int handle, int v);
  /* Pushes what the error of a task named by the value at index name gains
   * after its traceback (site, line: where core.c noted it was spawned);
   * the first hook that has it says it. */
  void (*task_line)(lua_State *L, cn_loop *lp, int name, int site, int line);
  /* reset(): the feature forgets what it holds, after the core forgot its
   * tasks and fds. Cannot fail. */
  void (*reset)(lua_State *L, cn_loop *lp);
  /* The loop is collected: the feature lets go of what it holds, before the
   * core frees its own parts. */
  void (*free)(lua_State *L, cn_loop *lp);
} cn_hook;

/* Registers h (a static object) when the module opens (raises when
 * CN_MAX_HOOKS are registered already). Its points start off. */
void cn_hook_add(lua_State *L, cn_loop *lp, const cn_hook *h);
/* Turns the points in `points` (CN_AT(...) bits) on (on != 0) or off for h. */
void cn_hook_set(cn_loop *lp, const cn_hook *h, unsigned points, int on);
/* A feature's ready list (src/lib/ready_list.h) that keeps h's point on
 * while it holds items: push and remove through these. */
static inline void cn_hook_list_push(cn_loop *lp, cn_rlist *r, cn_rlink *l, const cn_hook *h,
                                     int point) {
  if (cn_rlist_push(r, l)) cn_hook_set(lp, h, CN_AT(point), 1);
}
static inline void cn_hook_list_remove(cn_loop *lp, cn_rlist *r, cn_rlink *l, const cn_hook *h,
                                       int point) {
  if (cn_rlist_remove(r, l)) cn_hook_set(lp, h, CN_AT(point), 0);
}

/* Whether some hook has point on (one bit of one word: the fast path). */
static inline int cn_at_on(const cn_loop *lp, int point) {
  return (lp->hooks.mask >> point) & 1u;
}
/* Calls `at` of each hook that has point on. */
void cn_at_call(lua_State *L, cn_loop *lp, int point, struct cn_task *t);
/* Both: what the core writes at each point. */
static inline void cn_at(lua_State *L, cn_loop *lp, int point, struct cn_task *t) {
  if (cn_at_on(lp, point)) cn_at_call(L, lp, point, t);
}

/* The questions (hooks.c): each asks every hook that answers it. */
double cn_hooks_timeout(cn_loop *lp, double timeout);
int cn_hooks_next_ready(lua_State *L, cn_loop *lp);
double cn_hooks_wait_cap(cn_loop *lp, const struct cn_task *t, double now, double when);
void cn_hooks_checkpoint(lua_State *L, cn_loop *lp, struct cn_task *t);
int cn_hooks_cancel(cn_loop *lp, struct cn_task *t);
int cn_hooks_task_raised(lua_State *L, cn_loop *lp, int err);
void cn_hooks_sleep(lua_State *L, cn_loop *lp, double timeout);
int cn_hooks_hold(const cn_loop *lp);
void cn_hooks_task_end(lua_State *L, cn_loop *lp, int handle, int how, int first, int n);
void cn_hooks_new_handle(lua_State *L, cn_loop *lp, int name, int co);
void cn_hooks_handle_map(lua_State *L, cn_loop *lp, int handle, int v);
void cn_hooks_task_line(lua_State *L, cn_loop *lp, int name, int site, int line);
void cn_hooks_reset(lua_State *L, cn_loop *lp);
void cn_hooks_free(lua_State *L, cn_loop *lp);

#endif

/* predicate: the predicate waits of cosock.when (predicate.c owns
 * loop->preds). run.c asks three questions of it each pass. */
#ifndef COSOCK_PREDICATE_H
#define COSOCK_PREDICATE_H

#include "compat.h"

#include "loop.h"

/* At load: the registry slots of the predicate waits. */
void cn_preds_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "when"): adds pred_wait and pred_interval to the
 * module table on top (the loop just below it). */
void cn_preds_open(lua_State *L, cn_loop *lp);
/* reset(): forgets every predicate wait and restores the default interval.
 * Cannot fail. */
void cn_preds_reset(lua_State *L, cn_loop *lp);
void cn_preds_free(lua_State *L, cn_loop *lp);

/* True while waits are listed (some may have ended: the pass drops them). */
static inline int cn_preds_pending(const cn_loop *lp) { return lp->preds.n > 0; }
/* Once per pass, after the ready list drained (ran: the pass resumed tasks):
 * evaluates every waiting predicate when tasks ran or the interval passed,
 * and makes the tasks whose predicate became true (or raised) ready. An
 * error of a waker goes out (run's recovery keeps the loop usable). */
void cn_preds_pass(lua_State *L, cn_loop *lp, int ran);
/* The poll timeout (-1: none) capped by the next evaluation's time. */
double cn_preds_timeout(cn_loop *lp, double timeout);
/* True when predicates wait that were not evaluated in this pass, or were
 * in a pass that ran tasks: the stall check must give them an evaluation in
 * the idle state first. */
static inline int cn_preds_hold(const cn_loop *lp) {
  return lp->preds.live > 0 && !lp->preds.evaluated;
}

#endif

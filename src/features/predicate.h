/* predicate: the predicate waits of cosock.when (predicate.c owns
 * loop->preds). Its hook (hooks.h), on while waits are listed, evaluates
 * them once per pass (CN_AT_RESUMES_DONE) and caps the poll's timeout by the
 * next evaluation (CN_AT_TIMEOUT); the stall check asks it whether waits
 * still need an evaluation in the idle state (holds). */
#ifndef COSOCK_PREDICATE_H
#define COSOCK_PREDICATE_H

#include "compat.h"

#include "loop.h"

/* At load: the registry slots of the predicate waits, and the hook. */
void cn_preds_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "when"): adds pred_wait and pred_interval to the
 * module table on top (the loop just below it). */
void cn_preds_open(lua_State *L, cn_loop *lp);

#endif

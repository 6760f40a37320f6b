/* task: task slots, the two run lists, and task names for messages. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "loop.h"

const char *cn_kind_name(int kind) {
  return kind == K_RECV ? "recvr" : "sendr";
}

cn_task *cn_task_get(cn_loop *lp, int slot) {
  cn_task *t;
  if (slot < 0 || slot >= lp->nslots) return NULL;
  t = lp->slots[slot];
  return t && t->state != T_FREE ? t : NULL;
}

/* Grows the slot table and everything sized by it, so that nothing later in
 * the life of a task needs memory the C side could fail to get. */
static void reserve_slot(lua_State *L, cn_loop *lp) {
  int cap;
  cn_task **slots;
  int *freeslots;
  if (lp->nfree > 0 || lp->nslots < lp->capslots) return;
  cap = lp->capslots ? lp->capslots * 2 : 64;
  if (cap < 0 || (size_t)cap > ((size_t)-1) / sizeof *slots) luaL_error(L, "cosock: too many tasks");
  /* Each task has at most one armed timer: push can then never fail. First:
   * a heap bigger than needed is harmless, arrays sized unlike capslots not. */
  if (th_reserve(&lp->timers, (size_t)cap) != 0) luaL_error(L, "cosock: out of memory");
  slots = cn_mem_resize(&lp->mem, lp->slots, (size_t)lp->capslots * sizeof *slots,
                        (size_t)cap * sizeof *slots);
  if (slots == NULL) luaL_error(L, "cosock: out of memory");
  lp->slots = slots;
  freeslots = cn_mem_resize(&lp->mem, lp->freeslots, (size_t)lp->capslots * sizeof *freeslots,
                            (size_t)cap * sizeof *freeslots);
  if (freeslots == NULL) {
    /* Back to the size capslots says (shrinking cannot fail). */
    lp->slots = cn_mem_resize(&lp->mem, slots, (size_t)cap * sizeof *slots,
                              (size_t)lp->capslots * sizeof *slots);
    luaL_error(L, "cosock: out of memory");
  }
  lp->freeslots = freeslots;
  lp->capslots = cap;
}

int cn_task_reserve(lua_State *L, cn_loop *lp) {
  reserve_slot(L, lp);
  if (lp->nfree == 0) {
    /* Task structs are kept for reuse: no allocation per spawn once warm. */
    cn_task *t = cn_mem_resize(&lp->mem, NULL, 0, sizeof *t);
    if (t == NULL) luaL_error(L, "cosock: out of memory");
    memset(t, 0, sizeof *t);
    t->slot = lp->nslots;
    lp->slots[lp->nslots] = t;
    lp->freeslots[lp->nfree++] = lp->nslots++;
  }
  return lp->freeslots[lp->nfree - 1];
}

cn_task *cn_task_new(cn_loop *lp) {
  int slot = lp->freeslots[--lp->nfree];
  cn_task *t = lp->slots[slot];
  th_node_init(&t->timer);
  t->slot = slot;
  t->serial = ++lp->serials;
  t->waitid = 0;
  t->state = T_READY;
  t->list = L_NONE;
  t->timed_out = t->has_timeout = t->internal = t->bare = t->armed = 0;
  t->prev = t->next = -1;
  t->nwait = t->nrecvt = t->nsendt = 0;
  t->timeout = 0;
  t->last_wake = -1;
  t->sent_by = NULL;
  lp->live++;
  cn_list_push(lp, lp->ready, t);
  return t;
}

void cn_task_free(lua_State *L, cn_loop *lp, cn_task *t) {
  if (t->state == T_FREE) return;              /* freed already (must not count twice) */
  cn_timer_disarm(lp, t);
  th_remove(&lp->timers, &t->timer);
  cn_list_unlink(lp, t);
  t->state = T_FREE;
  t->waitid = 0;
  t->nwait = 0;
  lp->live--;
  lp->freeslots[lp->nfree++] = t->slot;
  /* Drop the record: the coroutine, its name and its wait objects. */
  cn_push_ref(L, lp->r_tasks);
  lua_pushnil(L);
  lua_rawseti(L, -2, t->slot);
  lua_pop(L, 1);
}

void cn_free_all(cn_loop *lp) {
  int i;
  th_free(&lp->timers); /* before the tasks its nodes live in */
  for (i = 0; i < lp->nslots; i++) {
    cn_task *t = lp->slots[i];
    if (t) cn_mem_free(&lp->mem, t->waits, (size_t)t->capwait * sizeof *t->waits);
    cn_mem_free(&lp->mem, t, sizeof *t);
  }
  cn_mem_free(&lp->mem, lp->slots, (size_t)lp->capslots * sizeof *lp->slots);
  cn_mem_free(&lp->mem, lp->freeslots, (size_t)lp->capslots * sizeof *lp->freeslots);
  lp->slots = NULL;
  lp->freeslots = NULL;
  lp->nslots = lp->capslots = lp->nfree = 0;
  lp->live = lp->narmed = 0;
}

void cn_list_push(cn_loop *lp, unsigned char which, cn_task *t) {
  cn_list *l = &lp->lists[which];
  t->list = which;
  t->next = -1;
  t->prev = l->tail;
  if (l->tail >= 0) lp->slots[l->tail]->next = t->slot;
  else l->head = t->slot;
  l->tail = t->slot;
  l->n++;
}

void cn_list_unlink(cn_loop *lp, cn_task *t) {
  cn_list *l;
  if (t->list == L_NONE) return;
  l = &lp->lists[t->list];
  if (t->prev >= 0) lp->slots[t->prev]->next = t->next;
  else l->head = t->next;
  if (t->next >= 0) lp->slots[t->next]->prev = t->prev;
  else l->tail = t->prev;
  l->n--;
  t->list = L_NONE;
  t->prev = t->next = -1;
}

int cn_list_pop(cn_loop *lp, unsigned char which) {
  int slot = lp->lists[which].head;
  if (slot >= 0) cn_list_unlink(lp, lp->slots[slot]);
  return slot;
}

/* A parked task becomes ready for the next pass; its timer is disarmed. */
void cn_make_ready(cn_loop *lp, cn_task *t) {
  cn_timer_disarm(lp, t);
  t->state = T_READY;
  cn_list_push(lp, lp->ready, t);
}

/* Arms t's timer for deadline. A node still queued from an earlier wait
 * stays where it is when it is due no later than deadline (it will be moved
 * when it reaches the top), else it moves up now. th_reserve made room. */
void cn_timer_arm(cn_loop *lp, cn_task *t, double deadline) {
  if (!t->armed) lp->narmed++;
  t->armed = 1;
  t->deadline = deadline;
  t->dseq = th_next_seq(&lp->timers);
  if (!th_queued(&t->timer)) {
    th_push(&lp->timers, &t->timer, deadline);
    t->dseq = t->timer.seq;
  } else if (deadline < t->timer.when) {
    th_move(&lp->timers, &t->timer, deadline, t->dseq);
  }
}

void cn_timer_disarm(cn_loop *lp, cn_task *t) {
  if (!t->armed) return;
  t->armed = 0;
  lp->narmed--;
}

void cn_push_record(lua_State *L, cn_loop *lp, int slot) {
  cn_push_ref(L, lp->r_tasks);
  lua_rawgeti(L, -1, slot);
  lua_remove(L, -2);
}

/* Pushes 'name' (a string name as is, another name through tostring, no name:
 * the coroutine), quoted, for error messages. */
void cn_push_label(lua_State *L, cn_loop *lp, int slot) {
  cn_push_record(L, lp, slot);        /* rec */
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_pushliteral(L, "'?'");
    return;
  }
  lua_rawgeti(L, -1, R_NAME);         /* rec, name */
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_rawgeti(L, -1, R_CO);         /* rec, co */
  }
  luaL_tolstring(L, -1, NULL);        /* rec, name, str */
  lua_pushfstring(L, "'%s'", lua_tostring(L, -1));
  lua_replace(L, -4);
  lua_pop(L, 2);
}

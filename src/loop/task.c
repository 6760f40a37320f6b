/* task: task slots, the two run lists, the task timers, and task names for
 * messages. Owns loop->tasks (see task.h). */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "hooks.h"
#include "mem.h"
#include "messages.h"
#include "task.h"

static void list_push(cn_loop *lp, unsigned char which, cn_task *t);

/* The Lua side of the tasks, in three registry tables:
 *   cos      array: cos[2 * slot + 1], the coroutine, anchored while the
 *            task lives; cos[2 * slot + 2], the name given to spawn (NONAME
 *            for nil). A free slot holds false in both: the array has no
 *            holes, so Lua grows it in place (no old array left for the
 *            collector), and it costs 32 bytes a task where a hash by
 *            coroutine cost 40 and a names array 16 more (doc/footprint.md).
 *            handle.c finds a handle's task by slot.
 *   handles  array, weak values: handles[slot + 1], the task's handle while
 *            the program keeps it (for handle.c when the task ends)
 *   records  hash: records[slot], the record of a task that waited through
 *            the waker protocol (made on its first such wait)
 * The arrays are regrown with the slots (reserve_slot), so storing a new
 * task's coroutine, name and handle never allocates. */

/* The name of a task spawned without one, in the cos array. */
static const char noname_mark;
#define NONAME ((void *)&noname_mark)

/* Pushes a table with an array part of n entries and weak values. */
static void new_weak_array(lua_State *L, int n) {
  lua_createtable(L, n, 0);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
}

void cn_tasks_new_tables(lua_State *L) {
  luaL_checkstack(L, 6, NULL);
  lua_newtable(L);
  new_weak_array(L, 0);
  lua_newtable(L);
}

/* The table on top, with the first n entries of registry[ref] copied into
 * its array, takes that table's place (pops it). The old table is emptied
 * and given one key outside its array: Lua then rehashes it to an empty
 * array, so its memory goes back now, not when the collector gets to it
 * (may raise then: the new table is in place already). */
static void replace_array(lua_State *L, int ref, int n) {
  int i;
  cn_push_ref(L, ref);                         /* new, old */
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -3, i);                     /* within the new array: no allocation */
  }
  lua_insert(L, -2);                           /* old, new */
  lua_rawseti(L, LUA_REGISTRYINDEX, ref);      /* an existing slot: no allocation */
  for (i = 1; i <= n; i++) {
    lua_pushnil(L);
    lua_rawseti(L, -2, i);
  }
  lua_pushboolean(L, 1);
  lua_rawseti(L, -2, -1);                      /* not in the array: the rehash */
  lua_pop(L, 1);
}

/* Makes the cos and handles arrays hold cap tasks. The cos array gets
 * false up to its new end: the first store past the old end makes Lua grow
 * it (in place, all of it used), the others land in it. Each step may
 * allocate and so run finalizers, which may spawn (growing the arrays
 * themselves) or reset the loop: then the handles array is not replaced and
 * it returns 0, for the caller to look again. (A slot a finalizer's spawn
 * filled keeps its entries: only nil is replaced by false.) */
static int grow_arrays(lua_State *L, cn_loop *lp, int cap) {
  unsigned epoch = lp->tasks.epoch;
  int old = lp->tasks.capslots;
  lua_Integer i;
  luaL_checkstack(L, 6, NULL);
  cn_push_ref(L, lp->tasks.r_cos);
  for (i = 2 * (lua_Integer)old + 1; i <= 2 * (lua_Integer)cap; i++) {
    lua_rawgeti(L, -1, i);
    if (lua_isnil(L, -1)) {
      lua_pushboolean(L, 0);
      lua_rawseti(L, -3, i);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  new_weak_array(L, cap);
  if (epoch != lp->tasks.epoch || old != lp->tasks.capslots) {
    lua_pop(L, 1);
    return 0;
  }
  replace_array(L, lp->tasks.r_handles, lp->tasks.nslots);
  return 1;
}

/* Task structs come in blocks (one allocation per TASK_BLOCK tasks: no
 * allocator overhead per task) and are kept for reuse: no allocation per
 * spawn once warm. Freed with the loop (free_all). */
#define TASK_BLOCK 64
struct cn_task_block {
  struct cn_task_block *next;
  cn_task tasks[TASK_BLOCK];
};

/* Grows the slot table and everything sized by it, so that nothing later in
 * the life of a task needs memory the C side could fail to get. Returns 1
 * when a slot is free, 0 when a finalizer changed the loop while the Lua
 * arrays were made (call again). */
static int reserve_slot(lua_State *L, cn_loop *lp) {
  int cap;
  cn_task **slots;
  if (lp->tasks.nfree > 0 || lp->tasks.nslots < lp->tasks.capslots) return 1;
  cap = lp->tasks.capslots ? lp->tasks.capslots * 2 : 64;
  if (cap <= 0 || cap > (1 << 26) || (size_t)cap > ((size_t)-1) / sizeof *slots)
    luaL_error(L, "cosock: too many tasks");
  /* Bigger tables and heap first: too big is harmless, C arrays sized
   * unlike capslots are not. The C allocations below call the allocator
   * directly: no collection, no finalizer runs from here on. */
  if (!grow_arrays(L, lp, cap)) return 0;
  /* Each task has at most one armed timer: push can then never fail. */
  if (th_reserve(&lp->tasks.timers, (size_t)cap + lp->tasks.nxreserved) != 0)
    luaL_error(L, CN_MSG_NO_MEMORY);
  slots = cn_mem_resize(&lp->mem, lp->tasks.slots, (size_t)lp->tasks.capslots * sizeof *slots,
                        (size_t)cap * sizeof *slots);
  if (slots == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
  lp->tasks.slots = slots;
  lp->tasks.capslots = cap;
  return 1;
}

/* A zeroed task struct out of the newest block, or a new block (may raise;
 * the allocator is called directly: no finalizer runs). */
static cn_task *new_struct(lua_State *L, cn_loop *lp) {
  cn_task *t;
  if (lp->tasks.blocks == NULL || lp->tasks.blockused == TASK_BLOCK) {
    struct cn_task_block *b = cn_mem_resize(&lp->mem, NULL, 0, sizeof *b);
    if (b == NULL) luaL_error(L, CN_MSG_NO_MEMORY);
    b->next = lp->tasks.blocks;
    lp->tasks.blocks = b;
    lp->tasks.blockused = 0;
  }
  t = &lp->tasks.blocks->tasks[lp->tasks.blockused++];
  memset(t, 0, sizeof *t);
  return t;
}

/* Makes sure a slot is free (may raise, and run finalizers while the Lua
 * arrays grow; nothing after them does). */
static void task_reserve(lua_State *L, cn_loop *lp) {
  while (!reserve_slot(L, lp)) continue;
  if (lp->tasks.nfree == 0) {
    cn_task *t = new_struct(L, lp);
    t->slot = lp->tasks.nslots;
    t->waits = &t->wait1;                      /* one wait needs no array */
    t->capwait = 1;
    lp->tasks.slots[lp->tasks.nslots++] = t;
    t->next = lp->tasks.freehead;
    lp->tasks.freehead = t->slot;
    lp->tasks.nfree++;
  }
}

/* Stores the value on top at index i of registry[ref] (pops it). Within the
 * arrays, or a nil for a key that exists: cannot fail. */
static void set_in(lua_State *L, int ref, lua_Integer i) {
  cn_push_ref(L, ref);
  lua_insert(L, -2);
  lua_rawseti(L, -2, i);
  lua_pop(L, 1);
}

/* Clears records[slot] if there is one (an existing key: no allocation; a
 * nil stored under a missing key would still make the key, and may
 * allocate). With no record at all, nothing to look up. */
static void drop_record(lua_State *L, cn_loop *lp, int slot) {
  cn_task_push_record(L, lp, slot);
  if (!lua_isnil(L, -1)) {
    lua_pushnil(L);
    set_in(L, lp->tasks.r_records, slot);
    lp->tasks.nrecords--;
  }
  lua_pop(L, 1);
}

/* cos[2 * slot + 1] and cos[2 * slot + 2] = the values at indices co and
 * name (0: false for both, a freed slot; a nil name is NONAME). Within the
 * array: cannot fail. */
static void set_pair(lua_State *L, cn_loop *lp, int slot, int co, int name) {
  cn_push_ref(L, lp->tasks.r_cos);
  if (co == 0) lua_pushboolean(L, 0);
  else lua_pushvalue(L, co);
  lua_rawseti(L, -2, 2 * (lua_Integer)slot + 1);
  if (co == 0) lua_pushboolean(L, 0);
  else if (lua_isnil(L, name)) lua_pushlightuserdata(L, NONAME);
  else lua_pushvalue(L, name);
  lua_rawseti(L, -2, 2 * (lua_Integer)slot + 2);
  lua_pop(L, 1);
}

cn_task *cn_task_new(lua_State *L, cn_loop *lp, int co, int name, int handle, int mapped) {
  int slot;
  cn_task *t;
  co = lua_absindex(L, co);
  name = lua_absindex(L, name);
  handle = lua_absindex(L, handle);
  luaL_checkstack(L, 4, NULL);
  /* Once a slot is free nothing below allocates (the arrays hold every
   * slot, the handle's key is in the map), so no finalizer runs in between
   * to take the slot or reset the loop. */
  task_reserve(L, lp);                         /* may raise: nothing is taken yet */
  slot = lp->tasks.freehead;
  t = lp->tasks.slots[slot];
  lp->tasks.freehead = t->next;
  /* A record a finalizer's cancel left behind (a wake was listing an object
   * for the task it freed) is not this task's (an existing key: no allocation). */
  drop_record(L, lp, slot);
  if (slot != mapped) {
    lua_pushinteger(L, slot);
    cn_hooks_handle_map(L, lp, handle, -1);
    lua_pop(L, 1);
  }
  lp->tasks.nfree--;
  set_pair(L, lp, slot, co, name);
  lua_pushvalue(L, handle);
  set_in(L, lp->tasks.r_handles, slot + 1);
  th_node_init(&t->timer);
  t->slot = slot;
  t->waitid = 0;
  t->state = T_READY;
  t->list = L_NONE;
  t->timed_out = t->internal = t->bare = t->armed = 0;
  t->hooked = 0;
  t->prev = t->next = -1;
  t->nwait = t->nrecvt = t->nsendt = 0;
  t->tmo = CN_TMO_NONE;
  t->last_wake = -1;
  t->resumes = 0;
  t->sent_by = NULL;
  t->co = lua_tothread(L, co);
  lp->tasks.live++;
  list_push(lp, lp->tasks.ready, t);
  return t;
}

void cn_task_free(lua_State *L, cn_loop *lp, cn_task *t) {
  if (t->state == T_FREE) return;              /* freed already (must not count twice) */
  cn_at(L, lp, CN_AT_FREED, t);
  cn_timer_disarm(lp, t);
  th_remove(&lp->tasks.timers, &t->timer);
  cn_list_unlink(lp, t);
  t->state = T_FREE;
  t->waitid = 0;
  t->nwait = 0;
  lp->tasks.live--;
  t->next = lp->tasks.freehead;                /* (out of every list: next is free) */
  lp->tasks.freehead = t->slot;
  lp->tasks.nfree++;
  /* Tell its handle (whose task it no longer is), then drop the
   * coroutine, its name and its wait objects. */
  luaL_checkstack(L, 4, NULL);
  cn_task_push_handle(L, lp, t->slot);
  if (!lua_isnil(L, -1)) {
    cn_task_push_co(L, t);
    cn_hooks_handle_map(L, lp, -2, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  set_pair(L, lp, t->slot, 0, 0);
  lua_pushnil(L);
  set_in(L, lp->tasks.r_handles, t->slot + 1);
  drop_record(L, lp, t->slot);
}

static void init_lists(cn_loop *lp) {
  memset(lp->tasks.lists, 0, sizeof lp->tasks.lists);
  lp->tasks.lists[L_A].head = lp->tasks.lists[L_A].tail = -1;
  lp->tasks.lists[L_B].head = lp->tasks.lists[L_B].tail = -1;
  lp->tasks.ready = L_A;
}

/* Frees every task and timer (C memory only). */
static void free_all(cn_loop *lp) {
  int i;
  th_free(&lp->tasks.timers); /* before the tasks its nodes live in */
  for (i = 0; i < lp->tasks.nslots; i++) {
    cn_task *t = lp->tasks.slots[i];
    if (t->waits != &t->wait1)
      cn_mem_free(&lp->mem, t->waits, (size_t)t->capwait * sizeof *t->waits);
  }
  while (lp->tasks.blocks != NULL) {
    struct cn_task_block *b = lp->tasks.blocks;
    lp->tasks.blocks = b->next;
    cn_mem_free(&lp->mem, b, sizeof *b);
  }
  cn_mem_free(&lp->mem, lp->tasks.slots, (size_t)lp->tasks.capslots * sizeof *lp->tasks.slots);
  lp->tasks.slots = NULL;
  lp->tasks.nslots = lp->tasks.capslots = lp->tasks.nfree = lp->tasks.blockused = 0;
  lp->tasks.freehead = -1;
  lp->tasks.live = lp->tasks.narmed = lp->tasks.nxarmed = 0; /* (th_free unqueued them) */
  init_lists(lp);
}

void cn_tasks_init(lua_State *L, cn_loop *lp) {
  th_init(&lp->tasks.timers);
  lp->tasks.freehead = -1;
  init_lists(lp);
  cn_tasks_new_tables(L);
  lp->tasks.r_records = luaL_ref(L, LUA_REGISTRYINDEX);
  lp->tasks.r_handles = luaL_ref(L, LUA_REGISTRYINDEX);
  lp->tasks.r_cos = luaL_ref(L, LUA_REGISTRYINDEX);
}

void cn_tasks_reset(lua_State *L, cn_loop *lp, int tables) {
  tables = lua_absindex(L, tables);
  free_all(lp);
  lp->tasks.epoch++;
  lp->tasks.nrecords = 0;                      /* (the new records table is empty) */
  /* Existing registry slots: no allocation. */
  lua_pushvalue(L, tables);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->tasks.r_cos);
  lua_pushvalue(L, tables + 1);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->tasks.r_handles);
  lua_pushvalue(L, tables + 2);
  lua_rawseti(L, LUA_REGISTRYINDEX, lp->tasks.r_records);
}

void cn_tasks_free(lua_State *L, cn_loop *lp) {
  free_all(lp);
  cn_unref(L, &lp->tasks.r_cos);
  cn_unref(L, &lp->tasks.r_handles);
  cn_unref(L, &lp->tasks.r_records);
}

static void list_push(cn_loop *lp, unsigned char which, cn_task *t) {
  cn_list *l = &lp->tasks.lists[which];
  t->list = which;
  t->next = -1;
  t->prev = l->tail;
  if (l->tail >= 0) lp->tasks.slots[l->tail]->next = t->slot;
  else l->head = t->slot;
  l->tail = t->slot;
  l->n++;
}

void cn_list_unlink(cn_loop *lp, cn_task *t) {
  cn_list *l;
  if (t->list == L_NONE) return;
  l = &lp->tasks.lists[t->list];
  if (t->prev >= 0) lp->tasks.slots[t->prev]->next = t->next;
  else l->head = t->next;
  if (t->next >= 0) lp->tasks.slots[t->next]->prev = t->prev;
  else l->tail = t->prev;
  l->n--;
  t->list = L_NONE;
  t->prev = t->next = -1;
}

static unsigned char wake_list(const cn_loop *lp) {
  return lp->tasks.ready == L_A ? L_B : L_A;
}

void cn_lists_swap(cn_loop *lp) {
  lp->tasks.ready = wake_list(lp);
}

int cn_wake_pop(cn_loop *lp) {
  int slot = lp->tasks.lists[wake_list(lp)].head;
  if (slot >= 0) cn_list_unlink(lp, lp->tasks.slots[slot]);
  return slot;
}

int cn_wake_count(const cn_loop *lp) {
  return lp->tasks.lists[wake_list(lp)].n;
}

/* (cosock.sim's seeded order: a walk of k links, in simulation only.) */
int cn_wake_nth(const cn_loop *lp, int k) {
  int slot = lp->tasks.lists[wake_list(lp)].head;
  while (slot >= 0 && k-- > 0) slot = lp->tasks.slots[slot]->next;
  return slot;
}

int cn_wake_has(const cn_loop *lp, int slot) {
  const cn_task *t = slot >= 0 && slot < lp->tasks.nslots ? lp->tasks.slots[slot] : NULL;
  return t != NULL && t->state != T_FREE && t->list == wake_list(lp);
}

int cn_wake_take(cn_loop *lp, int slot) {
  cn_task *t = cn_task_get(lp, slot);
  if (t == NULL || t->list != wake_list(lp)) return -1;
  cn_list_unlink(lp, t);
  return slot;
}

/* After a failed pass: the tasks it did not get to go back to the front of
 * the ready list, in their order (they were ready before anything woken in
 * that pass). */
void cn_wake_requeue(cn_loop *lp) {
  cn_list *ready = &lp->tasks.lists[lp->tasks.ready];
  int slot;
  while ((slot = lp->tasks.lists[wake_list(lp)].tail) >= 0) {
    cn_task *t = lp->tasks.slots[slot];
    cn_list_unlink(lp, t);
    t->list = lp->tasks.ready;
    t->prev = -1;
    t->next = ready->head;
    if (t->next >= 0) lp->tasks.slots[t->next]->prev = slot;
    else ready->tail = slot;
    ready->head = slot;
    ready->n++;
  }
}

/* A parked task becomes ready for the next pass; its timer is disarmed. */
void cn_make_ready(cn_loop *lp, cn_task *t) {
  cn_timer_disarm(lp, t);
  t->state = T_READY;
  list_push(lp, lp->tasks.ready, t);
  cn_at(NULL, lp, CN_AT_READY, t);             /* (no Lua here: the hints say why) */
}

/* Arms t's timer for deadline. A node still queued from an earlier wait
 * stays where it is when it is due no later than deadline (it will be moved
 * when it reaches the top), else it moves up now. th_reserve made room. */
void cn_timer_arm(cn_loop *lp, cn_task *t, double deadline) {
  if (!t->armed) lp->tasks.narmed++;
  t->armed = 1;
  t->deadline = deadline;
  t->dseq = th_next_seq(&lp->tasks.timers);
  if (!th_queued(&t->timer)) {
    th_push(&lp->tasks.timers, &t->timer, deadline);
    t->dseq = t->timer.seq;
  } else if (deadline < t->timer.when) {
    th_move(&lp->tasks.timers, &t->timer, deadline, t->dseq);
  }
}

void cn_timer_disarm(cn_loop *lp, cn_task *t) {
  if (!t->armed) return;
  t->armed = 0;
  lp->tasks.narmed--;
}

/* Every timer whose deadline passed wakes its task with "timeout". A node
 * left queued by an ended wait is dropped; one whose task waits again with a
 * later deadline moves there (see cn_timer_arm). The top may then be due
 * earlier than any armed deadline: the loop wakes once for nothing. */
double cn_timers_run(cn_loop *lp, double now) {
  th_node *n;
  if (cn_timers_armed(lp) == 0) return -1;
  while ((n = th_top(&lp->tasks.timers)) != NULL && n->when <= now) {
    cn_task *t;
    if (n->tag == CN_TAG_XTIMER) {
      th_remove(&lp->tasks.timers, n);
      lp->tasks.nxarmed--;
      ((cn_xtimer *)n)->fire(lp, (cn_xtimer *)n);
      break;                                   /* its owner acts on it before the later ones */
    }
    t = (cn_task *)(void *)((char *)n - offsetof(cn_task, timer)); /* the task around the node */
    if (t->armed && (n->when != t->deadline || n->seq != t->dseq)) {
      /* re-armed in place: to its real key first, so that a late pass
       * still fires due timers in deadline order */
      th_move(&lp->tasks.timers, n, t->deadline, t->dseq);
      continue;
    }
    th_remove(&lp->tasks.timers, n);
    if (t->armed && t->state == T_PARKED) {
      t->timed_out = 1;
      cn_make_ready(lp, t);
    }
    cn_timer_disarm(lp, t);
  }
  if (cn_timers_armed(lp) == 0 || (n = th_top(&lp->tasks.timers)) == NULL) return -1;
  return n->when;                              /* (may be due still, after a timer object) */
}

int cn_xtimer_reserve(cn_loop *lp) {
  th_heap *h = &lp->tasks.timers;
  size_t need = (size_t)lp->tasks.capslots + lp->tasks.nxreserved + 1;
  /* Doubling: making many timers must not reallocate the heap each time. */
  if (need > h->cap && th_reserve(h, need < 2 * h->cap ? 2 * h->cap : need) != 0 &&
      th_reserve(h, need) != 0)
    return -1;
  lp->tasks.nxreserved++;
  return 0;
}

void cn_xtimer_unreserve(cn_loop *lp) {
  if (lp->tasks.nxreserved > 0) lp->tasks.nxreserved--;
}

void cn_xtimer_arm(cn_loop *lp, cn_xtimer *x, double when) {
  x->node.tag = CN_TAG_XTIMER;
  if (th_queued(&x->node)) {
    th_move(&lp->tasks.timers, &x->node, when, th_next_seq(&lp->tasks.timers));
  } else {
    th_push(&lp->tasks.timers, &x->node, when); /* room reserved: cannot fail */
    lp->tasks.nxarmed++;
  }
}

void cn_xtimer_disarm(cn_loop *lp, cn_xtimer *x) {
  if (!th_queued(&x->node)) return;
  th_remove(&lp->tasks.timers, &x->node);
  lp->tasks.nxarmed--;
}

void cn_task_push_co(lua_State *L, cn_task *t) {
  lua_pushthread(t->co);                       /* on its own stack (room kept by the resumer) */
  lua_xmove(t->co, L, 1);
}

void cn_task_push_name(lua_State *L, cn_loop *lp, int slot) {
  cn_push_ref(L, lp->tasks.r_cos);
  lua_rawgeti(L, -1, 2 * (lua_Integer)slot + 2);
  lua_remove(L, -2);
  if (lua_touserdata(L, -1) == NONAME) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
}

void cn_task_push_handle(lua_State *L, cn_loop *lp, int slot) {
  cn_push_ref(L, lp->tasks.r_handles);
  lua_rawgeti(L, -1, slot + 1);
  lua_remove(L, -2);
}

void cn_task_set_handle(lua_State *L, cn_loop *lp, cn_task *t, int handle) {
  handle = lua_absindex(L, handle);
  luaL_checkstack(L, 3, NULL);
  lua_pushinteger(L, t->slot);
  cn_hooks_handle_map(L, lp, handle, -1);            /* its key exists: no allocation */
  lua_pop(L, 1);
  lua_pushvalue(L, handle);
  set_in(L, lp->tasks.r_handles, t->slot + 1); /* within the array: no allocation */
}

void cn_task_push_record(lua_State *L, cn_loop *lp, int slot) {
  if (lp->tasks.nrecords == 0) {               /* none at all: nothing to look up */
    lua_pushnil(L);
    return;
  }
  cn_push_ref(L, lp->tasks.r_records);
  lua_rawgeti(L, -1, slot);
  lua_remove(L, -2);
}

void cn_push_record(lua_State *L, cn_loop *lp, int slot) {
  cn_task_push_record(L, lp, slot);
  if (lua_isnil(L, -1)) {                      /* the task's first protocol wait */
    lua_pop(L, 1);
    luaL_checkstack(L, 3, NULL);
    cn_push_ref(L, lp->tasks.r_records);
    lua_createtable(L, R_WAIT, 0);             /* records, rec */
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, slot);                  /* may raise: nothing changed */
    lp->tasks.nrecords++;
    lua_remove(L, -2);
  }
}

/* Pushes 'name' (a string name as is, another name through tostring, no name:
 * the coroutine), quoted, for error messages. */
void cn_push_label(lua_State *L, cn_loop *lp, int slot) {
  cn_task *t = cn_task_get(lp, slot);
  if (t == NULL) {
    lua_pushliteral(L, "'?'");
    return;
  }
  cn_task_push_name(L, lp, slot);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    cn_task_push_co(L, t);
  }
  luaL_tolstring(L, -1, NULL);        /* name, str */
  lua_pushfstring(L, "'%s'", lua_tostring(L, -1));
  lua_replace(L, -3);
  lua_pop(L, 1);
}

void cn_push_object_name(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 3, NULL);
  lua_pushfstring(L, "%s: %p", luaL_typename(L, idx), lua_topointer(L, idx));
  if (lua_istable(L, idx)) {
    lua_pushliteral(L, "class");
    lua_rawget(L, idx);
    if (lua_type(L, -1) == LUA_TSTRING) {
      lua_pushfstring(L, "%s %s", lua_tostring(L, -1), lua_tostring(L, -2));
      lua_replace(L, -3);
    }
    lua_pop(L, 1);
  }
}

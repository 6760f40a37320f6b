/* sim: the C side of cosock.sim (lua/cosock/sim.lua), deterministic
 * simulation: a virtual clock that jumps to the next deadline instead of
 * polling, a seeded order for the tasks that became ready together, and a
 * note of each resume for the record. sim.c owns loop->sim (NULL while the
 * simulation is off, and its hook's points off with it). */
#ifndef COSOCK_SIM_H
#define COSOCK_SIM_H

#include "compat.h"

#include "loop.h"

/* Whether the simulation is on (its clock virtual). */
static inline int cn_sim_on(const cn_loop *lp) { return lp->sim != NULL; }

/* (Both reached through the hook sim.c registers: CN_AT_ORDER's next_ready
 * and CN_AT_SLEEP's sleep, on while the simulation is.)
 * The ready-batch order: takes the next slot of this pass's wake list to
 * resume (drawn from the seed when there is one, else the first), or -1;
 * the record is told of it first. */
int cn_sim_pop(lua_State *L, cn_loop *lp);
/* The loop would poll for up to timeout seconds (< 0: no limit): instead
 * the virtual clock moves on by timeout. Raises when a real descriptor is
 * waited on, or when nothing could ever end the wait. */
void cn_sim_instead_of_poll(lua_State *L, cn_loop *lp, double timeout);
/* At load: registers the hook (its reset and free turn the simulation
 * off; its points stay off until sim_on). */
void cn_sim_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "sim", by cosock.sim): adds sim_on, sim_off,
 * sim_active, sim_draw to the module on top (the loop just below it). */
void cn_sim_open(lua_State *L, cn_loop *lp);

#endif

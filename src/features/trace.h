/* trace: cosock.trace's recording (trace.c owns loop->trace). While a trace
 * is on, the hook's points (hooks.h: SPAWN, RESUME, PARKED, READY, ENDED,
 * FREED, TIMED, POLL, POLLED) each write one fixed-size
 * record into a buffer of the size the program chose: the first `size`
 * events are kept, the rest counted (dropped). A record holds numbers only;
 * its strings (names, sites, errors, details) are interned in a Lua table the
 * trace anchors, and the record holds their index. Off, no point is on: the
 * trace costs nothing per pass. lua/cosock/trace.lua is the program's API;
 * the contract is doc/reference.md's "Module cosock.trace" (its file
 * format: "The trace file" there, and doc/tracing.md's "The file format"). */
#ifndef COSOCK_TRACE_H
#define COSOCK_TRACE_H

#include "compat.h"

#include "loop.h"

/* At load: registers the hook (its points stay off until trace_start). */
void cn_trace_init(lua_State *L, cn_loop *lp);
/* On first use (core.open "trace", by cosock.trace): adds trace_start,
 * trace_stop, trace_stats, trace_events, trace_mark, trace_task_id,
 * trace_label and trace_cause to the module on top (the loop just below it).
 * While a trace is on, cosock.trace sets cosock.core.trace_wait (trace_label)
 * and trace_wake (trace_cause): the waits and wakes written in Lua label
 * themselves through them, a field read that is nil while no trace is on. */
void cn_trace_open(lua_State *L, cn_loop *lp);

#endif

/* feature_list: what the loop offers beyond its core (src/features/), each in
 * its own file, calling the core (src/loop/) and attaching to it through
 * hooks.h when it must act at a pass's fixed points. core.c, the module
 * entry, opens each one (its *_open adds its functions to cosock.core and
 * registers its hook).
 *
 *   wrapper.h, luasocket_tcp.h  the socket wrappers' receive, send and wait;
 *                               the fast paths over LuaSocket's TCP objects
 *   channel.h                   cosock.channel
 *   timer_object.h              cosock.timer's timer objects      (hook)
 *   predicate.h                 cosock.when's predicate waits     (hook)
 *   sigwait.h, wakers.h         cosock.signal's wait; stale wakers
 *   resolver.h                  name lookups with c-ares          (hook)
 *   accounting.h, alloc_count.h set_accounting, the counting allocator (hook)
 *   watchdog.h                  set_watchdog                      (hook)
 *   handle.h, metadata.h        thread handles, join; get_thread_metadata (hook)
 *   names.h                     where tasks were spawned, for errors (hook)
 *   fidelity.h                  the switches of departures from cosock (hook)
 *   step.h, embed.h             cosock.step, next_timeout, pollfd
 *   ossignal.h                  cosock.ossignal's C part
 *   sim.h                       cosock.sim: virtual clock, seeded order (hook)
 *   cancel.h                    cosock.scope's cancellation that cleans up (hook)
 *   trace.h                     cosock.trace's recording of the loop's events (hook)
 *   tasks_warn.h                cosock.tasks: turn stamps, warnings (hook)
 *
 * What belongs here: anything a program may do without. A new feature is a
 * new file here (or a folder, with its header here), its open function
 * called from core.c, and its cn_hook registered there: no edit to
 * src/loop/. */
#ifndef COSOCK_FEATURES_H
#define COSOCK_FEATURES_H

#include "accounting.h"
#include "cancel.h"
#include "channel.h"
#include "embed.h"
#include "fidelity.h"
#include "handle.h"
#include "luasocket_tcp.h"
#include "metadata.h"
#include "names.h"
#include "ossignal.h"
#include "predicate.h"
#include "resolver.h"
#include "sigwait.h"
#include "sim.h"
#include "tasks_warn.h"
#include "step.h"
#include "timer_object.h"
#include "trace.h"
#include "wakers.h"
#include "watchdog.h"
#include "wrapper.h"

#endif

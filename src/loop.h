/* loop: the state of the run loop and the functions its files share.
 *
 * The spec's globals (seeds/001) map to this state as follows:
 *   threads            slots[] (C) + the tasks table (slot -> record, Lua)
 *   threadnames        record[R_NAME]
 *   threadswaitingfor  task.waits[] (C) + record[R_WAIT + i] (the objects)
 *   readythreads       the ready list (C) + record[R_RECVR], record[R_SENDR]
 *   socketwrappermap   fdcount[] (C) + the fdsets table (fd*2+kind -> {obj = n});
 *                      the project's own wrappers: natslot[]/natwait[] (C)
 *   timers             the timer heap, on the monotonic clock
 * Every Lua value the C side points to lives in a table anchored in the
 * registry (refs below), so the collector never frees what the loop uses. */
#ifndef COSOCK_LOOP_H
#define COSOCK_LOOP_H

#include <stdint.h>

#include <lua.h>

#include "mem.h"
#include "poller.h"
#include "timer_heap.h"

/* Fields of a task's record table (tasks[slot]). */
enum { R_CO = 1, R_NAME, R_RECVR, R_SENDR, R_WAIT };

enum { K_RECV = 0, K_SEND = 1 };

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
} cn_wait;

typedef struct cn_task {
  /* Its timer. It stays queued after a wait ends (unarmed) and a later wait
   * arms it again in place when that deadline is not earlier, so a socket
   * timeout costs no heap work per wait; the loop moves a node to its real
   * deadline, or drops it, when the node reaches the top (see cn_timer_arm). */
  th_node timer;
  double deadline;          /* when armed: the real deadline, >= timer.when */
  uint64_t dseq;            /* ... and its tie-breaker */
  unsigned char armed;
  int slot;
  uint64_t serial;          /* unique per spawn, never reused: handle identity */
  lua_Integer waitid;       /* unique per wait; 0 while not waiting */
  unsigned char state;
  unsigned char list;       /* L_NONE, L_A, L_B */
  unsigned char timed_out;
  unsigned char has_timeout;
  unsigned char internal;   /* a wrapper's own retry wait (see CN_INTERNAL) */
  unsigned char bare;       /* parked by cn_prepark: one native wait, no record entries */
  lua_State *co;            /* its coroutine (kept alive by the record) */
  int prev, next;           /* run list links (slot numbers, -1 ends) */
  cn_wait *waits;
  int nwait, capwait;
  int nrecvt, nsendt;       /* objects in the last yield, for metadata */
  double timeout;           /* the last yielded timeout, for metadata */
  long long last_wake;      /* os.time() of the last resume, -1 for never */
  const void *sent_by;      /* the wrapper that last sent in this task's coroutine (a hint) */
} cn_task;

typedef struct cn_list { int head, tail, n; } cn_list;

/* Fds at or above this are refused (the per-fd arrays would not fit). */
#define CN_MAX_FD (1 << 28)

#define CN_MAX_NATIVE 8 /* wrapper metatables the project registers (tcp, udp, tls) */

typedef struct cn_loop {
  cn_task **slots;
  int nslots, capslots;
  int *freeslots;           /* stack of unused slot numbers */
  int nfree;
  int live;                 /* tasks spawned and not finished or cancelled */
  cn_list lists[3];         /* [L_A], [L_B]: the ready list and the wake list */
  unsigned char ready;      /* which of L_A/L_B is the ready list */
  int running;              /* run() is on the C stack */
  int current;              /* slot being resumed, -1 */
  lua_State *current_co;    /* its coroutine while lua_resume runs, else NULL */
  struct {                  /* a wait announced by cn_prepark for the next yield */
    int slot;               /* -1: none */
    unsigned char kind, has_timeout, polled;
    double timeout;
    lua_Integer waitid;     /* the wait's id, known before it is parked */
    int fd;                 /* the wrapper's cached _fd, or -1 (then find_fd) */
  } pre;
  int parking;              /* slot being parked, -1 */
  int nset;                 /* wakers handed out so far while parking */
  uint64_t serials;
  lua_Integer waitids;
  th_heap timers;
  int narmed;               /* tasks whose timer is armed */
  cn_poller poller;
  int *fdcount;             /* waits per fd*2+kind */
  int *natslot;             /* per fd*2+kind: slot + 1 of the native waiter, 0 none */
  int *natwait;             /* per fd*2+kind: which wait of that task */
  unsigned char *fdflag;    /* per fd: queued in dirty[] */
  const void **fdobj;       /* per fd: address of the object last registered (see new_file) */
  int nfd;                  /* size of fdflag (fdcount has 2*nfd) */
  int *dirty;               /* fds whose waits dropped this pass (nfd long) */
  int ndirty;
  int nwaitfds;             /* fds at least one task waits on */
  int r_tasks, r_fdsets, r_inner, r_natives, r_hook; /* registry references */
  int r_handle_mt;          /* this loop's handle metatable (see handle.c) */
  const void *natmt[CN_MAX_NATIVE]; /* registered metatables (kept alive by r_natives) */
  int nnatmt;
  const cn_backend *backend0; /* the backend reset goes back to */
  const void *tcp_mt;       /* LuaSocket's tcp{client} metatable, once seen (wrapper.c) */
  cn_mem mem;               /* the Lua state's allocator, for the C memory above */
} cn_loop;

#define LOOP_UPVALUE lua_upvalueindex(1)

/* The project's wrappers yield (recvt, sendt, timeout, CN_INTERNAL) when they
 * wait after a call failed, and its channels when a receive waits: they
 * ignore the ready lists (none are built) and a socket's buffer is empty (no
 * dirty() call). A light userdata that only cosock.core.INTERNAL hands out. */
extern const char cn_internal_mark;
#define CN_INTERNAL ((void *)&cn_internal_mark)

/* core.c */
cn_loop *cn_loop_get(lua_State *L);           /* the loop of upvalue 1 */
void cn_push_ref(lua_State *L, int ref);       /* pushes registry[ref] */

/* task.c */
cn_task *cn_task_get(cn_loop *lp, int slot);   /* NULL unless slot is in use */
/* Makes sure a slot is free (may raise); returns the slot cn_task_new takes. */
int cn_task_reserve(lua_State *L, cn_loop *lp);
cn_task *cn_task_new(cn_loop *lp);             /* cannot fail after reserve */
void cn_task_free(lua_State *L, cn_loop *lp, cn_task *t);
void cn_list_push(cn_loop *lp, unsigned char which, cn_task *t);
void cn_list_unlink(cn_loop *lp, cn_task *t);
int cn_list_pop(cn_loop *lp, unsigned char which); /* slot or -1 */
void cn_make_ready(cn_loop *lp, cn_task *t);
void cn_timer_arm(cn_loop *lp, cn_task *t, double deadline);
void cn_timer_disarm(cn_loop *lp, cn_task *t);
void cn_push_record(lua_State *L, cn_loop *lp, int slot);
void cn_push_label(lua_State *L, cn_loop *lp, int slot); /* task name for messages */
const char *cn_kind_name(int kind);
void cn_free_all(cn_loop *lp);                 /* tasks and timers; the lists need init */

/* park.c */
/* rec: index of the task's record on the stack (cn_unpark: 0 to look it up). */
void cn_park(lua_State *L, cn_loop *lp, int slot, int args, int rec);
int cn_unpark(lua_State *L, cn_loop *lp, cn_task *t, int protected_calls, int rec);
void cn_rollback_park(lua_State *L, cn_loop *lp);
void cn_deliver(lua_State *L, cn_loop *lp, cn_task *t, int i);
/* For the project's wrappers and channels (wrapper.c, chanwait.c): when L
 * is the task the loop is resuming and may yield, notes a wait for kind with
 * an optional timeout (polled: on the object's fd; else only a direct wake
 * or the timeout ends it) and returns 1; the caller then yields the object
 * alone, and the loop parks the task with cn_park_bare (no yield tuple to
 * read, no record entries). Returns 0 otherwise (the caller yields the usual
 * tuple). */
int cn_prepark(lua_State *L, cn_loop *lp, int kind, int has_timeout, double timeout, int polled);
int cn_plausible_fd(lua_State *L, int idx);
/* Whether the socket object at inner has buffered data: its dirty() if it
 * has one, else false. */
int cn_dirty(lua_State *L, int inner);
void cn_park_bare(lua_State *L, cn_loop *lp, int slot, int obj);
int cn_is_native(lua_State *L, cn_loop *lp, int obj);

/* fdset.c */
/* how: CN_FD_NATIVE for the project's wrappers, | CN_FD_CACHED when fd came
 * from the wrapper's _fd cache (set when it was registered before). */
enum { CN_FD_NATIVE = 1, CN_FD_CACHED = 2 };
void cn_fd_register(lua_State *L, cn_loop *lp, int slot, int i, int fd, int kind, int obj,
                    int inner, int how);
void cn_fd_unregister(lua_State *L, cn_loop *lp, int slot, int fd, int kind, int obj, int native);
void cn_fd_closing(lua_State *L, cn_loop *lp, int fd);
void cn_fd_apply(cn_loop *lp);
void cn_fd_dispatch(lua_State *L, cn_loop *lp, const cn_event *ev, int n);
int cn_fd_reset(cn_loop *lp, const cn_backend *backend);
void cn_fd_free(cn_loop *lp);

/* loop.c */
int cn_run(lua_State *L);

/* handle.c */
void cn_handle_push(lua_State *L, cn_loop *lp, int slot, uint64_t serial, int name);
void cn_handle_open(lua_State *L);

/* wrapper.c: adds receive, send and wait to the module table on top (the
 * loop just below it). */
void cn_wrapper_open(lua_State *L);
/* chanwait.c: adds channel_wait, channel_wake, channel_waiting, the same way. */
void cn_chanwait_open(lua_State *L);

/* metadata.c */
int cn_get_thread_metadata(lua_State *L);

#endif

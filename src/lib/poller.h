/* poller: the loop's interest in file descriptors, behind one small interface.
 *
 * The loop says which events it wants per fd (cn_poller_set) and waits
 * (cn_poller_wait). The poller keeps the applied mask per fd, so a change
 * that changes nothing costs nothing, and it hands the work to a backend: one
 * file per mechanism (poller_select.c is the reference, poller_epoll.c has no
 * descriptor limit). When an fd does not fit the current backend (select's
 * FD_SETSIZE) the poller moves every interest to the unlimited backend by
 * itself; an fd is never put where it does not fit. No Lua here. */
#ifndef COSOCK_POLLER_H
#define COSOCK_POLLER_H

#include <stddef.h>

enum {
  CN_READ = 1,
  CN_WRITE = 2,
  CN_INVALID = 4  /* reported by wait: the fd is not open any more */
};

typedef struct cn_event {
  int fd;
  int events; /* CN_READ | CN_WRITE | CN_INVALID */
} cn_event;

/* A polling mechanism. Every function returns 0 (or a count) on success and
 * -1 with errno set on failure. */
typedef struct cn_backend {
  const char *name;
  int max_fd; /* fds >= max_fd do not fit this backend */
  void *(*create)(void);
  void (*destroy)(void *state);
  /* Changes the interest in fd from oldmask to newmask (either may be 0). */
  int (*set)(void *state, int fd, int oldmask, int newmask);
  /* Waits up to timeout seconds (< 0: no limit) and fills at most max events.
   * Returns the count, or -1 with errno (EINTR included: see cn_poller_wait). */
  int (*wait)(void *state, double timeout, cn_event *out, int max);
} cn_backend;

extern const cn_backend cn_backend_select;
#ifdef HAVE_SYS_EPOLL_H
extern const cn_backend cn_backend_epoll;
/* The epoll descriptor of an epoll backend's state (for cosock.pollfd). */
int cn_epoll_fd(const void *state);
#endif

typedef struct cn_poller {
  const cn_backend *backend;
  void *state;
  int *mask;        /* applied mask per fd */
  int nmask;        /* size of mask[] */
  int nfds;         /* fds with a non-zero mask */
  cn_event *events; /* buffer for wait, at least nfds long */
  int nevents;
  int hot;          /* the last wait found events without sleeping */
} cn_poller;

/* Looks up a backend by name ("select", "epoll"); NULL if not built. */
const cn_backend *cn_backend_named(const char *name);
/* The backend used when nothing else is asked for. */
const cn_backend *cn_backend_default(void);

/* Returns 0, or -1 with errno set (the poller is then unusable but freeable). */
int cn_poller_init(cn_poller *p, const cn_backend *backend);
void cn_poller_free(cn_poller *p);
/* Sets the interest in fd (>= 0) to mask. force re-applies an unchanged mask
 * (the file behind fd may have changed). Returns 0, or -1 with errno: ENOMEM,
 * ERANGE (fd does not fit any backend), or the backend's error. */
int cn_poller_set(cn_poller *p, int fd, int mask, int force);
/* The applied mask of fd (inline: every wait asks). */
static inline int cn_poller_get(const cn_poller *p, int fd) {
  return fd >= 0 && fd < p->nmask ? p->mask[fd] : 0;
}
/* Waits up to timeout seconds (< 0: no limit). A signal ends the wait: -1
 * with errno EINTR, so that the caller can let the signal's handling run
 * before it waits again with the time left. Fds found closed are reported with CN_INVALID and forgotten. While
 * events keep being ready at once, it first looks without waiting.
 * Returns the number of events stored in *out, or -1 with errno. */
int cn_poller_wait(cn_poller *p, double timeout, cn_event **out);
/* Moves every interest to another backend. Returns 0 or -1 with errno (the
 * poller is unchanged on failure). */
int cn_poller_switch(cn_poller *p, const cn_backend *backend);

#endif

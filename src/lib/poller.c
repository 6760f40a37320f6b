/* poller: per-fd interest, backend switching and the wait retry policy. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "poller.h"

const cn_backend *cn_backend_named(const char *name) {
  if (strcmp(name, "select") == 0) return &cn_backend_select;
#ifdef HAVE_SYS_EPOLL_H
  if (strcmp(name, "epoll") == 0) return &cn_backend_epoll;
#endif
  return NULL;
}

const cn_backend *cn_backend_default(void) {
  return &cn_backend_select;
}

/* The backend to move to when an fd does not fit the current one. */
static const cn_backend *unlimited_backend(void) {
#ifdef HAVE_SYS_EPOLL_H
  return &cn_backend_epoll;
#else
  return NULL;
#endif
}

int cn_poller_init(cn_poller *p, const cn_backend *backend) {
  memset(p, 0, sizeof *p);
  p->backend = backend;
  p->state = backend->create();
  return p->state ? 0 : -1;
}

void cn_poller_free(cn_poller *p) {
  if (p->state) p->backend->destroy(p->state);
  free(p->mask);
  free(p->events);
  memset(p, 0, sizeof *p);
}

static int grow_masks(cn_poller *p, int fd) {
  int n = p->nmask ? p->nmask : 64;
  int *mask;
  while (n <= fd) {
    if (n > INT_MAX / 2) { errno = ENOMEM; return -1; }
    n *= 2;
  }
  mask = realloc(p->mask, (size_t)n * sizeof *mask);
  if (mask == NULL) { errno = ENOMEM; return -1; }
  memset(mask + p->nmask, 0, (size_t)(n - p->nmask) * sizeof *mask);
  p->mask = mask;
  p->nmask = n;
  return 0;
}

/* The event buffer holds one event per registered fd, so wait never drops one. */
static int grow_events(cn_poller *p, int need) {
  cn_event *ev;
  int n;
  if (need <= p->nevents) return 0;
  n = p->nevents ? p->nevents : 64;
  while (n < need) {
    if (n > INT_MAX / 2) { errno = ENOMEM; return -1; }
    n *= 2;
  }
  ev = realloc(p->events, (size_t)n * sizeof *ev);
  if (ev == NULL) { errno = ENOMEM; return -1; }
  p->events = ev;
  p->nevents = n;
  return 0;
}

int cn_poller_switch(cn_poller *p, const cn_backend *backend) {
  void *state;
  int fd;
  if (backend == p->backend) return 0;
  state = backend->create();
  if (state == NULL) return -1;
  for (fd = 0; fd < p->nmask; fd++) {
    if (p->mask[fd] == 0) continue;
    if (fd >= backend->max_fd || backend->set(state, fd, 0, p->mask[fd]) != 0) {
      int err = fd >= backend->max_fd ? ERANGE : errno;
      backend->destroy(state);
      errno = err;
      return -1;
    }
  }
  p->backend->destroy(p->state);
  p->backend = backend;
  p->state = state;
  return 0;
}

int cn_poller_set(cn_poller *p, int fd, int mask, int force) {
  int old;
  if (fd < 0) { errno = EBADF; return -1; }
  old = cn_poller_get(p, fd);
  if (old == mask && !force) return 0;
  if (mask == 0 && old == 0) return 0;
  if (fd >= p->backend->max_fd && mask != 0) {
    const cn_backend *b = unlimited_backend();
    if (b == NULL || fd >= b->max_fd) { errno = ERANGE; return -1; }
    if (cn_poller_switch(p, b) != 0) return -1;
  }
  if (fd >= p->nmask && grow_masks(p, fd) != 0) return -1;
  if (old == 0 && grow_events(p, p->nfds + 1) != 0) return -1;
  if (p->backend->set(p->state, fd, old, mask) != 0) return -1;
  p->mask[fd] = mask;
  p->nfds += (old == 0) - (mask == 0);
  return 0;
}

/* After EBADF: report every registered fd that is no longer open, and forget
 * it, so the owners are woken and the next wait works again. */
static int collect_invalid(cn_poller *p, cn_event *out) {
  int fd, n = 0;
  for (fd = 0; fd < p->nmask; fd++) {
    int mask = p->mask[fd];
    if (mask == 0 || fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    p->backend->set(p->state, fd, mask, 0); /* may fail: the fd is gone */
    p->mask[fd] = 0;
    p->nfds--;
    out[n].fd = fd;
    out[n].events = mask | CN_INVALID;
    n++;
  }
  return n;
}

/* One wait. EINTR is not retried here: it goes back to the caller, which
 * lets Lua's signal hooks run (Ctrl-C) and then waits with the time left. */
static int wait_once(cn_poller *p, double timeout) {
  int n = p->backend->wait(p->state, timeout, p->events, p->nevents);
  if (n >= 0 || errno != EBADF) return n;
  n = collect_invalid(p, p->events);
  if (n > 0) return n;
  errno = EBADF;
  return -1;
}

/* A wait that returned events this soon did not sleep: they were there. */
#define HOT_WAIT 20e-6

int cn_poller_wait(cn_poller *p, double timeout, cn_event **out) {
  double start;
  int n;
  if (grow_events(p, 1) != 0) return -1;
  *out = p->events;
  if (timeout == 0) return wait_once(p, 0);
  /* Under load the fds are ready before the loop asks. Asking without a
   * timeout is then cheaper: the kernel arms no timer and queues no waiter
   * (select: about 10% of the call; a far timer costs most). Only while the
   * last wait did not sleep, so an idle loop does not pay an extra call. */
  if (p->hot) {
    n = wait_once(p, 0);
    if (n != 0) return n;
  }
  start = cn_clock_now();
  n = wait_once(p, timeout);
  p->hot = n > 0 && cn_clock_now() - start < HOT_WAIT;
  return n;
}

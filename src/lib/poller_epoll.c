/* poller_epoll: the Linux backend with no descriptor limit; work per wait
 * grows with the ready fds, not with the registered ones. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "poller.h"

typedef struct epoll_state {
  int epfd;
  struct epoll_event *ev;
  int nev;
} epoll_state;

static void *ep_create(void) {
  epoll_state *s = malloc(sizeof *s);
  if (s == NULL) { errno = ENOMEM; return NULL; }
  s->epfd = epoll_create1(EPOLL_CLOEXEC);
  s->ev = NULL;
  s->nev = 0;
  if (s->epfd < 0) { int err = errno; free(s); errno = err; return NULL; }
  return s;
}

static void ep_destroy(void *state) {
  epoll_state *s = state;
  close(s->epfd);
  free(s->ev);
  free(s);
}

static uint32_t ep_bits(int mask) {
  return ((mask & CN_READ) ? EPOLLIN : 0) | ((mask & CN_WRITE) ? EPOLLOUT : 0);
}

static int ep_set(void *state, int fd, int oldmask, int newmask) {
  epoll_state *s = state;
  struct epoll_event e;
  e.events = ep_bits(newmask);
  e.data.fd = fd;
  if (newmask == 0) {
    /* A closed fd has already left the epoll set by itself. */
    if (epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, &e) != 0 && errno != ENOENT && errno != EBADF)
      return -1;
    return 0;
  }
  /* oldmask may be stale (the fd was closed and reopened), so fall back. */
  if (oldmask == 0) {
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e) == 0) return 0;
    if (errno != EEXIST) return -1;
    return epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &e);
  }
  if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &e) == 0) return 0;
  if (errno != ENOENT) return -1;
  return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e);
}

static int ep_wait(void *state, double timeout, cn_event *out, int max) {
  epoll_state *s = state;
  int ms, n, i;
  if (max > s->nev) {
    struct epoll_event *ev = realloc(s->ev, (size_t)max * sizeof *ev);
    if (ev == NULL) { errno = ENOMEM; return -1; }
    s->ev = ev;
    s->nev = max;
  }
  /* Round up so that a wait never ends just before a deadline and spins. */
  if (timeout < 0) ms = -1;
  else if (timeout * 1000.0 >= (double)INT_MAX) ms = INT_MAX;
  else ms = (int)ceil(timeout * 1000.0);
  n = epoll_wait(s->epfd, s->ev, max, ms);
  for (i = 0; i < n; i++) {
    uint32_t e = s->ev[i].events;
    out[i].fd = s->ev[i].data.fd;
    /* Errors and hang-ups count as readable and writable, as with select:
     * the next call on the socket reports what happened. */
    out[i].events = ((e & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) ? CN_READ : 0) |
                    ((e & (EPOLLOUT | EPOLLERR | EPOLLHUP)) ? CN_WRITE : 0);
  }
  return n;
}

int cn_epoll_fd(const void *state) {
  return ((const epoll_state *)state)->epfd;
}

const cn_backend cn_backend_epoll = {
  "epoll", INT_MAX, ep_create, ep_destroy, ep_set, ep_wait
};

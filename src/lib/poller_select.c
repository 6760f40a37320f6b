/* poller_select: the reference backend, select(2) with master fd_sets.
 *
 * The master sets are copied before each call (select overwrites them). Fds at
 * or above FD_SETSIZE are refused by max_fd before they get here: FD_SET on
 * such an fd writes out of bounds. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/select.h>

#include "poller.h"

typedef struct select_state {
  fd_set rd, wr;
  int maxfd; /* highest fd in either set, -1 when empty */
} select_state;

static void *sel_create(void) {
  select_state *s = malloc(sizeof *s);
  if (s == NULL) { errno = ENOMEM; return NULL; }
  FD_ZERO(&s->rd);
  FD_ZERO(&s->wr);
  s->maxfd = -1;
  return s;
}

static void sel_destroy(void *state) {
  free(state);
}

static int sel_set(void *state, int fd, int oldmask, int newmask) {
  select_state *s = state;
  (void)oldmask;
  if (fd < 0 || fd >= FD_SETSIZE) { errno = ERANGE; return -1; }
  if (newmask & CN_READ) FD_SET(fd, &s->rd); else FD_CLR(fd, &s->rd);
  if (newmask & CN_WRITE) FD_SET(fd, &s->wr); else FD_CLR(fd, &s->wr);
  if (newmask && fd > s->maxfd) s->maxfd = fd;
  while (s->maxfd >= 0 && !FD_ISSET(s->maxfd, &s->rd) && !FD_ISSET(s->maxfd, &s->wr))
    s->maxfd--;
  return 0;
}

static int sel_wait(void *state, double timeout, cn_event *out, int max) {
  select_state *s = state;
  fd_set rd = s->rd, wr = s->wr;
  struct timeval tv, *tvp = NULL;
  int fd, n, seen = 0, count = 0;
  if (timeout >= 0) {
    double secs = floor(timeout);
    tv.tv_sec = (time_t)secs;
    tv.tv_usec = (suseconds_t)((timeout - secs) * 1e6);
    tvp = &tv;
  }
  n = select(s->maxfd + 1, &rd, &wr, NULL, tvp);
  if (n <= 0) return n;
  /* n counts the set bits: stop at the last one, not at maxfd. */
  for (fd = 0; fd <= s->maxfd && count < max && seen < n; fd++) {
    int ev = (FD_ISSET(fd, &rd) ? CN_READ : 0) | (FD_ISSET(fd, &wr) ? CN_WRITE : 0);
    if (ev == 0) continue;
    seen += (ev & CN_READ ? 1 : 0) + (ev & CN_WRITE ? 1 : 0);
    out[count].fd = fd;
    out[count].events = ev;
    count++;
  }
  return count;
}

const cn_backend cn_backend_select = {
  "select", FD_SETSIZE, sel_create, sel_destroy, sel_set, sel_wait
};

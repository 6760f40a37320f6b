/* poller_select: the reference backend, select(2) with master fd_sets.
 *
 * The master sets are copied before each call (select overwrites them). Fds at
 * or above FD_SETSIZE are refused by max_fd before they get here: FD_SET on
 * such an fd writes out of bounds.
 *
 * Where fd_set is the bit array of words that Linux's select reads (NFDBITS
 * bits a word, fd's bit in word fd / NFDBITS), a wait copies and scans only
 * the words up to the highest fd, a word at a time: per wait, work grows
 * with the highest fd / NFDBITS (64 or 32) and the ready fds, not with every
 * fd below the highest (a few hundred sockets: a few words instead of a few
 * hundred FD_ISSET tests). Elsewhere it uses FD_ISSET on each fd. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
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

#if defined(__linux__) && defined(NFDBITS)
#define WORDWISE 1
/* Linux's fd_set word (the kernel's and every libc's): an unsigned long. */
typedef unsigned long fd_word;
typedef char fd_word_is_nfdbits[NFDBITS == 8 * sizeof(fd_word) ? 1 : -1];

/* Word w of set (memcpy: fd_set's member has another name in each libc). */
static fd_word word_at(const fd_set *set, int w) {
  fd_word v;
  memcpy(&v, (const char *)set + (size_t)w * sizeof v, sizeof v);
  return v;
}

/* The words of a set that hold fds 0 .. maxfd (one when there is none).
 * (NFDBITS is unsigned in some libcs: -1 / NFDBITS would be huge.) */
static int words_for(int maxfd) {
  return maxfd < 0 ? 1 : maxfd / (int)NFDBITS + 1;
}

static int lowest_bit(fd_word v) {
#if defined(__GNUC__)
  return __builtin_ctzl(v);
#else
  int b = 0;
  while (!(v & 1)) v >>= 1, b++;
  return b;
#endif
}
#endif

/* The ready fds of the sets select returned, lowest first, at most max. */
static int collect(const select_state *s, const fd_set *rd, const fd_set *wr, cn_event *out, int max) {
  int count = 0;
#ifdef WORDWISE
  int w, words = words_for(s->maxfd);
  for (w = 0; w < words && count < max; w++) {
    fd_word r = word_at(rd, w), x = word_at(wr, w), any = r | x;
    while (any != 0 && count < max) {
      int b = lowest_bit(any);
      fd_word bit = (fd_word)1 << b;
      out[count].fd = w * (int)NFDBITS + b;
      out[count].events = (r & bit ? CN_READ : 0) | (x & bit ? CN_WRITE : 0);
      count++;
      any &= any - 1;
    }
  }
#else
  int fd;
  for (fd = 0; fd <= s->maxfd && count < max; fd++) {
    int ev = (FD_ISSET(fd, rd) ? CN_READ : 0) | (FD_ISSET(fd, wr) ? CN_WRITE : 0);
    if (ev == 0) continue;
    out[count].fd = fd;
    out[count].events = ev;
    count++;
  }
#endif
  return count;
}

static int sel_wait(void *state, double timeout, cn_event *out, int max) {
  select_state *s = state;
  fd_set rd, wr;
  struct timeval tv, *tvp = NULL;
  int n;
#ifdef WORDWISE
  /* Only the words select reads (the first (maxfd + 1) bits, in words). */
  int words = words_for(s->maxfd);
  if (words == 1) {                            /* (all in the first word: no memcpy call) */
    fd_word r = word_at(&s->rd, 0), x = word_at(&s->wr, 0);
    memcpy(&rd, &r, sizeof r);
    memcpy(&wr, &x, sizeof x);
  } else {
    memcpy(&rd, &s->rd, (size_t)words * sizeof(fd_word));
    memcpy(&wr, &s->wr, (size_t)words * sizeof(fd_word));
  }
#else
  rd = s->rd;
  wr = s->wr;
#endif
  if (timeout == 0) {
    tv.tv_sec = 0;
    tv.tv_usec = 0;
    tvp = &tv;
  } else if (timeout > 0) {
    double secs = floor(timeout), us = ceil((timeout - secs) * 1e6);
    /* Rounded up, as epoll's: a wait never ends just before a deadline (a
     * step would then return before the timer it waited for fell due). */
    if (us >= 1e6) { secs += 1; us = 0; }
    tv.tv_sec = (time_t)secs;
    tv.tv_usec = (suseconds_t)us;
    tvp = &tv;
  }
  n = select(s->maxfd + 1, &rd, &wr, NULL, tvp);
  if (n <= 0) return n;
  return collect(s, &rd, &wr, out, max);
}

const cn_backend cn_backend_select = {
  "select", FD_SETSIZE, sel_create, sel_destroy, sel_set, sel_wait
};

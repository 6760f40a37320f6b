/* poller_test: the poller and each backend in isolation (cmocka). Every test
 * runs once per backend through the state pointer. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/poller.h"

typedef struct fixture {
  cn_poller p;
  int sv[2];
} fixture;

static int setup(void **state, const char *backend) {
  static fixture f;
  const cn_backend *b = cn_backend_named(backend);
  if (b == NULL) return -1;
  memset(&f, 0, sizeof f);
  if (cn_poller_init(&f.p, b) != 0) return -1;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, f.sv) != 0) return -1;
  *state = &f;
  return 0;
}
static int setup_select(void **state) { return setup(state, "select"); }
#ifdef HAVE_SYS_EPOLL_H
static int setup_epoll(void **state) { return setup(state, "epoll"); }
#endif

static int teardown(void **state) {
  fixture *f = *state;
  cn_poller_free(&f->p);
  close(f->sv[0]);
  close(f->sv[1]);
  return 0;
}

static int find(const cn_event *ev, int n, int fd) {
  int i;
  for (i = 0; i < n; i++)
    if (ev[i].fd == fd) return ev[i].events;
  return 0;
}

static void nothing_ready_times_out(void **state) {
  fixture *f = *state;
  cn_event *ev;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(cn_poller_wait(&f->p, 0.01, &ev), 0);
  assert_int_equal(cn_poller_wait(&f->p, 0, &ev), 0);
}

static void readable_after_write(void **state) {
  fixture *f = *state;
  cn_event *ev;
  int n;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(n, 1);
  assert_int_equal(ev[0].fd, f->sv[0]);
  assert_int_equal(ev[0].events & CN_READ, CN_READ);
  assert_int_equal(ev[0].events & CN_INVALID, 0);
}

static void writable_and_mask_changes(void **state) {
  fixture *f = *state;
  cn_event *ev;
  int n;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ | CN_WRITE, 0), 0);
  assert_int_equal(f->p.nfds, 1);
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(find(ev, n, f->sv[0]), CN_WRITE);
  /* Dropping write interest: nothing is ready any more. */
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(cn_poller_get(&f->p, f->sv[0]), CN_READ);
  assert_int_equal(cn_poller_wait(&f->p, 0, &ev), 0);
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], 0, 0), 0);
  assert_int_equal(f->p.nfds, 0);
  assert_int_equal(cn_poller_get(&f->p, f->sv[0]), 0);
}

static void removed_fd_is_not_reported(void **state) {
  fixture *f = *state;
  cn_event *ev;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], 0, 0), 0);
  assert_int_equal(cn_poller_wait(&f->p, 0, &ev), 0);
}

static void setting_the_same_mask_twice_is_harmless(void **state) {
  fixture *f = *state;
  cn_event *ev;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 1), 0); /* forced */
  assert_int_equal(f->p.nfds, 1);
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  assert_int_equal(cn_poller_wait(&f->p, 1.0, &ev), 1);
}

static void negative_fd_is_refused(void **state) {
  fixture *f = *state;
  assert_int_equal(cn_poller_set(&f->p, -1, CN_READ, 0), -1);
  assert_int_equal(errno, EBADF);
  assert_int_equal(f->p.nfds, 0);
}

static void peer_close_counts_as_readable(void **state) {
  fixture *f = *state;
  cn_event *ev;
  int n;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  close(f->sv[1]);
  f->sv[1] = socket(AF_UNIX, SOCK_STREAM, 0); /* keep teardown's close valid */
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(find(ev, n, f->sv[0]) & CN_READ, CN_READ);
}

/* select only: a closed fd in the set makes select fail with EBADF; the
 * poller reports it as invalid once and forgets it. */
static void closed_fd_is_reported_invalid(void **state) {
  fixture *f = *state;
  cn_event *ev;
  int fd = dup(f->sv[0]), n;
  assert_true(fd >= 0);
  assert_int_equal(cn_poller_set(&f->p, fd, CN_READ, 0), 0);
  close(fd);
  n = cn_poller_wait(&f->p, 0.5, &ev);
  assert_int_equal(n, 1);
  assert_int_equal(ev[0].fd, fd);
  assert_int_equal(ev[0].events, CN_READ | CN_INVALID);
  assert_int_equal(cn_poller_get(&f->p, fd), 0);
  assert_int_equal(f->p.nfds, 0);
  assert_int_equal(cn_poller_wait(&f->p, 0, &ev), 0);
}

/* An fd beyond FD_SETSIZE is never put in a select set: the poller moves to
 * the unlimited backend with every interest it had. */
static void large_fd_moves_off_select(void **state) {
  fixture *f = *state;
  struct rlimit rl;
  cn_event *ev;
  int big = FD_SETSIZE + 100, n;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max <= (rlim_t)big + 1) {
    print_message("RLIMIT_NOFILE hard limit too low to open fd %d\n", big);
    skip();
  }
  if (rl.rlim_cur <= (rlim_t)big + 1) {
    rl.rlim_cur = (rlim_t)big + 2;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
  }
  assert_int_equal(dup2(f->sv[0], big), big);
  assert_int_equal(cn_poller_set(&f->p, f->sv[1], CN_WRITE, 0), 0);
#ifdef HAVE_SYS_EPOLL_H
  assert_int_equal(cn_poller_set(&f->p, big, CN_READ, 0), 0);
  assert_string_equal(f->p.backend->name, "epoll");
  assert_int_equal(cn_poller_get(&f->p, f->sv[1]), CN_WRITE);
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(find(ev, n, big), CN_READ);
  assert_int_equal(find(ev, n, f->sv[1]), CN_WRITE);
#else
  assert_int_equal(cn_poller_set(&f->p, big, CN_READ, 0), -1);
  assert_int_equal(errno, ERANGE);
  (void)ev; (void)n;
#endif
  close(big);
}

/* Ready fds in several words of a select set, at the edges of a word (63,
 * 64) and above the last word boundary (130), each reported once with its
 * own events; an fd waited on by no one is not reported, and after the
 * highest fd leaves, the rest still are. */
static void fds_across_set_words(void **state) {
  fixture *f = *state;
  static const int rd[] = {63, 64, 130};
  const int wr = 127;
  cn_event *ev;
  int i, n;
  for (i = 0; i < 3; i++) {
    assert_int_equal(fcntl(rd[i], F_GETFD), -1);     /* free before the test */
    assert_int_equal(dup2(f->sv[0], rd[i]), rd[i]);
    assert_int_equal(cn_poller_set(&f->p, rd[i], CN_READ, 0), 0);
  }
  assert_int_equal(fcntl(wr, F_GETFD), -1);
  assert_int_equal(dup2(f->sv[1], wr), wr);
  assert_int_equal(cn_poller_set(&f->p, wr, CN_WRITE, 0), 0);
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(n, 4);
  for (i = 0; i < 3; i++) assert_int_equal(find(ev, n, rd[i]), CN_READ);
  assert_int_equal(find(ev, n, wr), CN_WRITE);
  assert_int_equal(find(ev, n, f->sv[0]), 0);
  assert_int_equal(cn_poller_set(&f->p, 130, 0, 0), 0);
  n = cn_poller_wait(&f->p, 1.0, &ev);
  assert_int_equal(n, 3);
  assert_int_equal(find(ev, n, 130), 0);
  assert_int_equal(find(ev, n, 64), CN_READ);
  for (i = 0; i < 3; i++) close(rd[i]);
  close(wr);
}

/* Each test once per backend, named after it: "readable_after_write [epoll]". */
#define ON(fn, backend) \
  { #fn " [" #backend "]", fn, setup_##backend, teardown, NULL }
/* A poller that saw events ready at once looks without waiting first; when
 * that finds nothing it must still wait (here with no limit) for what comes
 * later, and stop looking first. */
static void loaded_poller_still_waits(void **state) {
  fixture *f = *state;
  cn_event *ev;
  char c;
  pid_t child;
  int status;
  assert_int_equal(cn_poller_set(&f->p, f->sv[0], CN_READ, 0), 0);
  f->p.hot = 1;
  assert_int_equal(write(f->sv[1], "x", 1), 1);
  assert_int_equal(cn_poller_wait(&f->p, -1, &ev), 1);
  assert_int_equal(f->p.hot, 1);
  assert_int_equal(read(f->sv[0], &c, 1), 1);
  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    usleep(20000);
    _exit(write(f->sv[1], "y", 1) == 1 ? 0 : 1);
  }
  assert_int_equal(cn_poller_wait(&f->p, -1, &ev), 1);
  assert_int_equal(ev[0].fd, f->sv[0]);
  assert_int_equal(ev[0].events & CN_READ, CN_READ);
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_int_equal(status, 0);
  assert_int_equal(read(f->sv[0], &c, 1), 1);
  assert_int_equal(c, 'y');
  f->p.hot = 1;
  assert_int_equal(cn_poller_wait(&f->p, 0.01, &ev), 0);
  assert_int_equal(f->p.hot, 0);
}

#ifdef HAVE_SYS_EPOLL_H
#define BOTH(fn) ON(fn, select), ON(fn, epoll)
#else
#define BOTH(fn) ON(fn, select)
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
    BOTH(nothing_ready_times_out),
    BOTH(readable_after_write),
    BOTH(writable_and_mask_changes),
    BOTH(removed_fd_is_not_reported),
    BOTH(setting_the_same_mask_twice_is_harmless),
    BOTH(negative_fd_is_refused),
    BOTH(peer_close_counts_as_readable),
    BOTH(loaded_poller_still_waits),
    BOTH(fds_across_set_words),
    ON(closed_fd_is_reported_invalid, select),
    ON(large_fd_moves_off_select, select),
  };
  return cmocka_run_group_tests_name("poller", tests, NULL, NULL);
}

/* ossignal: a signalfd per receiver of cosock.ossignal. Opening one blocks
 * its signals in the process mask first, then makes the signalfd: a signal
 * that comes in between stays pending and is read from the descriptor, so
 * none is lost and none reaches the default action (no race, no handler).
 * Closing it (close() or collection) unblocks each signal no other receiver
 * holds and that was not blocked before the first one took it: the mask
 * is as it was. The dispositions are never changed. The descriptor is what
 * the loop polls (the receiver's inner_sock); read() takes one signal.
 * The counts are the process's (the mask is per thread: a program with
 * threads blocks these signals in the others itself). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "messages.h"
#include "ossignal.h"

#ifdef HAVE_SYS_SIGNALFD_H
#include <sys/signalfd.h>

#define SIGFD_MT "cosock.ossignal.fd"

static const struct { const char *name; int signo; } SIGNALS[] = {
  {"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
  {"USR2", SIGUSR2}, {"CHLD", SIGCHLD}, {"WINCH", SIGWINCH}, {"ALRM", SIGALRM}, {"PIPE", SIGPIPE},
  {NULL, 0}
};

static int holders[NSIG];       /* open receivers per signal */
static sigset_t blocked_before; /* of the signals held, those blocked before */

typedef struct sigfd {
  int fd;                       /* -1 once closed */
  sigset_t mask;
} sigfd;

static const char *signal_name(int signo) {
  int i;
  for (i = 0; SIGNALS[i].name; i++)
    if (SIGNALS[i].signo == signo) return SIGNALS[i].name;
  return "?";
}

/* "TERM" or "SIGTERM" (len bytes) -> SIGTERM; 0 when unknown ("USR1\0x"
 * too: the whole string must be the name). */
static int signal_number(const char *s, size_t len) {
  int i;
  if (strlen(s) != len) return 0;
  if (strncmp(s, "SIG", 3) == 0) s += 3;
  for (i = 0; SIGNALS[i].name; i++)
    if (strcmp(SIGNALS[i].name, s) == 0) return SIGNALS[i].signo;
  return 0;
}

/* Takes the signals of mask: blocks those nobody held (noting which were
 * blocked already). */
static int hold(const sigset_t *mask) {
  sigset_t cur;
  int s;
  if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0) return -1;
  for (s = 1; s < NSIG; s++) {
    if (!sigismember(mask, s) || holders[s]++ > 0) continue;
    if (sigismember(&cur, s)) sigaddset(&blocked_before, s);
    else sigdelset(&blocked_before, s);
  }
  return sigprocmask(SIG_BLOCK, mask, NULL);
}

/* Gives them back: unblocks those nobody holds now and that were not
 * blocked before. */
static void release(const sigset_t *mask) {
  sigset_t unblock;
  int s;
  sigemptyset(&unblock);
  for (s = 1; s < NSIG; s++)
    if (sigismember(mask, s) && --holders[s] == 0 && !sigismember(&blocked_before, s))
      sigaddset(&unblock, s);
  sigprocmask(SIG_UNBLOCK, &unblock, NULL);
}

static void sigfd_close(sigfd *f) {
  if (f->fd < 0) return;
  close(f->fd);
  f->fd = -1;
  release(&f->mask);
}

/* open(name, ...) -> sigfd. Names: INT, TERM, HUP, ... with or without SIG. */
static int l_open(lua_State *L) {
  int n = lua_gettop(L), i, err;
  sigfd *f;
  sigset_t mask;
  sigemptyset(&mask);
  if (n == 0) return luaL_error(L, "cosock.ossignal.receiver: no signal named");
  for (i = 1; i <= n; i++) {
    int str = lua_type(L, i) == LUA_TSTRING;    /* (before lua_tolstring turns a number into one) */
    size_t len = 0;
    const char *name = lua_tolstring(L, i, &len);
    int signo = name && str ? signal_number(name, len) : 0;
    if (signo == 0)
      return cn_argerror(L, i, "receiver", "unknown signal '%s%s': INT, TERM, HUP, QUIT, USR1, "
                         "USR2, CHLD, WINCH, ALRM or PIPE expected", name ? name : luaL_typename(L, i),
                         name && strlen(name) != len ? "\\0..." : "");
    sigaddset(&mask, signo);
  }
  f = (sigfd *)lua_newuserdata(L, sizeof *f);   /* (may raise: nothing held yet) */
  f->fd = -1;
  f->mask = mask;
  luaL_getmetatable(L, SIGFD_MT);
  lua_setmetatable(L, -2);
  if (hold(&mask) != 0) {
    err = errno;
    release(&mask);
    return luaL_error(L, "cosock.ossignal.receiver: cannot block the signals: %s", strerror(err));
  }
  f->fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (f->fd < 0) {
    err = errno;
    release(&mask);
    return luaL_error(L, "cosock.ossignal.receiver: cannot make a signalfd: %s", strerror(err));
  }
  return 1;
}

static sigfd *check(lua_State *L) {
  return (sigfd *)luaL_checkudata(L, 1, SIGFD_MT);
}

/* read() -> the name of one signal received, or nil when none is pending. */
static int l_read(lua_State *L) {
  sigfd *f = check(L);
  struct signalfd_siginfo si;
  ssize_t n;
  if (f->fd < 0) return 0;
  do n = read(f->fd, &si, sizeof si); while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof si) return 0;
  lua_pushstring(L, signal_name((int)si.ssi_signo));
  return 1;
}

/* getfd() -> the descriptor, -1 once closed (LuaSocket's select takes it). */
static int l_getfd(lua_State *L) {
  lua_pushinteger(L, check(L)->fd);
  return 1;
}

static int l_dirty(lua_State *L) {
  (void)check(L);
  lua_pushboolean(L, 0);
  return 1;
}

static int l_close(lua_State *L) {
  sigfd_close(check(L));
  return 0;
}

int cn_ossignal_open(lua_State *L) {
  static const luaL_Reg methods[] = {
    {"read", l_read}, {"getfd", l_getfd}, {"dirty", l_dirty}, {"close", l_close}, {NULL, NULL}
  };
  if (luaL_newmetatable(L, SIGFD_MT)) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_close);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, l_open);
  lua_setfield(L, -2, "open");
  return 1;
}
#else
int cn_ossignal_open(lua_State *L) {
  return luaL_error(L, "cosock.ossignal: not available on this system (it needs signalfd)");
}
#endif

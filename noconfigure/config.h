/* config.h for builds without configure: the rock (luarocks' builtin build
 * type, rockspecs/cosock-native-scm-1.rockspec) and the Debian package (dh-lua,
 * debian/lua5.3.cosock-native.dh-lua.conf) put this directory on the include
 * path. The autotools build makes its own config.h and never sees this one.
 * Those builds define PACKAGE_VERSION. */
#ifndef COSOCK_NOCONFIGURE_CONFIG_H
#define COSOCK_NOCONFIGURE_CONFIG_H

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION must be defined (the rockspec and debian/*.dh-lua.conf do)"
#endif

/* c-ares (src/features/resolver.c) is not detected here: the Debian build defines
 * HAVE_CARES and links -lcares (the dh-lua.conf files in debian/); the rock
 * does not, and keeps LuaSocket's blocking resolver. */

/* The epoll backend: those builds compile src/lib/poller_epoll.c on Linux only. */
#ifdef __linux__
#define HAVE_SYS_EPOLL_H 1
#define HAVE_SYS_TIMERFD_H 1
#define HAVE_SYS_SIGNALFD_H 1
#endif

#endif

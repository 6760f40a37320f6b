/* config.h for builds without configure: the rock (luarocks' builtin build
 * type, rockspecs/cosock-native-scm-1.rockspec) puts this directory on the
 * include path. The autotools build makes its own config.h and never sees
 * this one. The rockspec defines PACKAGE_VERSION. */
#ifndef COSOCK_ROCK_CONFIG_H
#define COSOCK_ROCK_CONFIG_H

#ifndef PACKAGE_VERSION
#error "PACKAGE_VERSION must be defined (the rockspec does)"
#endif

/* The epoll backend: the rockspec compiles src/poller_epoll.c on Linux only. */
#ifdef __linux__
#define HAVE_SYS_EPOLL_H 1
#endif

#endif

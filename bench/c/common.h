/* Shared helpers of the plain C epoll programs (the physical limit that the
 * Lua implementations are compared with). Single-threaded, loopback only. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *bench_workload = "?";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* user+sys CPU seconds of this process (and of its waited-for children
 * when with_children is set). */
static double cpu_s(int with_children)
{
    struct rusage ru;
    double t;
    getrusage(RUSAGE_SELF, &ru);
    t = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
        (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    if (with_children) {
        getrusage(RUSAGE_CHILDREN, &ru);
        t += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    }
    return t;
}

/* A "<field>: <n> kB" line of /proc/self/status (fmt: "VmHWM: %ld"), or -1. */
static long status_kb(const char *fmt)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, fmt, &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* Peak resident set in kB. */
static long rss_kb(void)
{
    return status_kb("VmHWM: %ld");
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    printf("FAIL %s impl=c-epoll ", bench_workload);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        fail("fcntl: %s", strerror(errno));
}

/* Listening socket on 127.0.0.1, ephemeral port; *port receives it. */
static int listen_loopback(int backlog, int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fail("socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        fail("bind: %s", strerror(errno));
    if (listen(fd, backlog) < 0)
        fail("listen: %s", strerror(errno));
    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        fail("getsockname: %s", strerror(errno));
    *port = ntohs(sa.sin_port);
    set_nonblock(fd);
    return fd;
}

/* Non-blocking connect to 127.0.0.1:port (may still be in progress). */
static int connect_loopback(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fail("socket: %s", strerror(errno));
    set_nonblock(fd);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS)
        fail("connect: %s", strerror(errno));
    return fd;
}

static void ep_add(int ep, int fd, unsigned events, void *ptr)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.ptr = ptr;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        fail("epoll_ctl: %s", strerror(errno));
}

/* A non-blocking connect reported writable (or failed): checks the result
 * and moves the fd's interest to reading. Returns 0 when the event was not
 * about the connect yet. */
static inline int connect_done(int ep, int fd, unsigned events, void *ptr)
{
    struct epoll_event ev;
    int err = 0;
    socklen_t len = sizeof err;
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
        return 0;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err)
        fail("connect: %s", strerror(err));
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.ptr = ptr;
    if (epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev) < 0)
        fail("epoll_ctl: %s", strerror(errno));
    return 1;
}

/* Write a whole short message; loopback buffers are far larger than any
 * message here, so a short write is reported as a failure. */
static void send_all(int fd, const char *buf, size_t len)
{
    ssize_t n = write(fd, buf, len);
    if (n != (ssize_t)len)
        fail("short write (%zd of %zu): %s", n, len, n < 0 ? strerror(errno) : "");
}

/* A client's request number i: "<id> <i>\n" (the W4 and W6 programs). */
static inline void send_request(int fd, long id, long i)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%ld %ld\n", id, i);
    send_all(fd, buf, (size_t)n);
}

/* Per-connection input buffer that yields complete lines. */
struct linebuf {
    char data[512];
    size_t len;
};

/* Read what is available. Returns 1 if data was read, 0 on EOF, -1 when
 * nothing is available (EAGAIN). */
static int lb_fill(int fd, struct linebuf *lb)
{
    ssize_t n;
    if (lb->len == sizeof lb->data)
        fail("line too long");
    n = read(fd, lb->data + lb->len, sizeof lb->data - lb->len);
    if (n > 0) {
        lb->len += (size_t)n;
        return 1;
    }
    if (n == 0)
        return 0;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return -1;
    fail("read: %s", strerror(errno));
    return 0;
}

/* Take the next complete line (without "\n") into out; returns its length
 * or -1 when no complete line is buffered. */
static int lb_line(struct linebuf *lb, char *out, size_t outsz)
{
    char *nl = memchr(lb->data, '\n', lb->len);
    size_t n;
    if (!nl)
        return -1;
    n = (size_t)(nl - lb->data);
    if (n + 1 > outsz)
        fail("line too long");
    memcpy(out, lb->data, n);
    out[n] = '\0';
    lb->len -= n + 1;
    memmove(lb->data, nl + 1, lb->len);
    return (int)n;
}

static void print_result(const char *extra, long ops, double wall, double cpu, long rss,
                         double rate)
{
    printf("RESULT %s impl=c-epoll ops=%ld %swall=%.6g cpu=%.6g rss_kb=%ld rate=%.0f\n",
           bench_workload, ops, extra, wall, cpu, rss, rate);
    fflush(stdout);
}

#endif

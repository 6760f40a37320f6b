/* Per-connection memory in plain C (the anchor of bench/footprint): N
 * loopback connections held open, each end a struct conn (its fd and a
 * 512-byte line buffer) registered with epoll for reading, as a server and
 * a client of bench/c/epoll_many.c hold them. Prints the resident memory
 * the N connections added (VmRSS after, minus before) per connection.
 * Usage: conn_hold N [one|split]   (default 1500 one)
 *   one:   both ends in this process (2N fds);
 *   split: the clients in a forked child (N fds each), which adds its own
 *          growth to the figure (when 2N fds exceed the limit). */
#include "common.h"
#include <sys/wait.h>

struct conn {
    int fd;
    int role;
    long id;
    struct linebuf lb;
};

static long rss_now_kb(void)
{
    return status_kb("VmRSS: %ld");
}

/* A struct conn for fd, registered for reading with ep. */
static struct conn *hold(int ep, int fd, int role, long id)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        fail("out of memory");
    c->fd = fd;
    c->role = role;
    c->id = id;
    set_nonblock(fd);
    ep_add(ep, fd, EPOLLIN, c);
    return c;
}

/* Blocking connect to 127.0.0.1:port. */
static int connect_blocking(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        fail("socket: %s", strerror(errno));
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((unsigned short)port);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        fail("connect: %s", strerror(errno));
    return fd;
}

static int accept_one(int lfd)
{
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd >= 0)
            return fd;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            fail("accept: %s", strerror(errno));
        usleep(100);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1500, i, rss0, rss1, child_kb = 0;
    int split = argc > 2 && strcmp(argv[2], "split") == 0;
    int port, lfd, ep, report[2], release[2];
    struct conn **conns;
    pid_t child = -1;
    static char name[64];
    snprintf(name, sizeof name, "conn_%ld", n);
    bench_workload = name;
    if (n < 1)
        fail("N must be positive");
    conns = calloc((size_t)(2 * n), sizeof *conns);
    ep = epoll_create1(0);
    if (!conns || ep < 0)
        fail("setup: %s", strerror(errno));
    lfd = listen_loopback(4096, &port);
    rss0 = rss_now_kb();
    if (split) {
        if (pipe(report) < 0 || pipe(release) < 0)
            fail("pipe: %s", strerror(errno));
        child = fork();
        if (child < 0)
            fail("fork: %s", strerror(errno));
        if (child == 0) {                     /* the clients */
            char b;
            long c0 = rss_now_kb(), kb;
            close(release[1]);
            for (i = 0; i < n; i++)
                conns[n + i] = hold(ep, connect_blocking(port), 1, i);
            kb = rss_now_kb() - c0;
            if (write(report[1], &kb, sizeof kb) != (ssize_t)sizeof kb)
                _exit(1);
            if (read(release[0], &b, 1) < 0)   /* until the parent is done */
                _exit(1);
            _exit(0);
        }
        close(release[0]);
        for (i = 0; i < n; i++)
            conns[i] = hold(ep, accept_one(lfd), 0, i);
        if (read(report[0], &child_kb, sizeof child_kb) != (ssize_t)sizeof child_kb)
            fail("no report from the client process");
    } else {
        for (i = 0; i < n; i++) {
            conns[n + i] = hold(ep, connect_blocking(port), 1, i);
            conns[i] = hold(ep, accept_one(lfd), 0, i);
        }
    }
    rss1 = rss_now_kb();
    printf("RESULT %s impl=c-epoll conns=%ld mode=%s rss_per_conn=%.0f\n", name, n,
           split ? "split" : "one", (double)((rss1 - rss0) + child_kb) * 1024.0 / (double)n);
    fflush(stdout);
    if (split) {
        close(release[1]);
        waitpid(child, NULL, 0);
    }
    for (i = 0; i < 2 * n; i++)
        if (conns[i]) {
            close(conns[i]->fd);
            free(conns[i]);
        }
    free(conns);
    close(lfd);
    close(ep);
    return 0;
}

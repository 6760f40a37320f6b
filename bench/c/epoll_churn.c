/* Churn in plain C: CLIENTS client slots each make connections in turn until
 * CONNS were made in all: a non-blocking connect, one line request
 * ("<slot> <n>"), one line reply ("ok <slot> <n>"), close. The server side
 * accepts, reads the request, answers and closes. Both sides in this
 * single-threaded process on one epoll.
 * Usage: epoll_churn [CONNS] [CLIENTS]   (default 10000 100) */
#include "common.h"

enum { LISTENER, CLIENT, SERVER };

struct conn {
    int fd;
    int role;
    int started; /* client: request sent */
    long id;     /* client: slot number */
    long n;      /* client: connection number */
    struct linebuf lb;
};

static long started_total;

/* A client slot's next connection. */
static void client_start(int ep, struct conn *c, int port)
{
    memset(&c->lb, 0, sizeof c->lb);
    c->started = 0;
    c->n = ++started_total;
    c->fd = connect_loopback(port);
    ep_add(ep, c->fd, EPOLLIN | EPOLLOUT, c);
}

int main(int argc, char **argv)
{
    long conns = argc > 1 ? atol(argv[1]) : 10000;
    long clients = argc > 2 ? atol(argv[2]) : 100;
    long served = 0, answered = 0, accepted = 0;
    int port, ep;
    long i;
    struct conn listener;
    char line[512], want[64], out[600];
    double t0, c0;

    bench_workload = "churn";
    ep = epoll_create1(0);
    if (ep < 0)
        fail("epoll_create1: %s", strerror(errno));
    memset(&listener, 0, sizeof listener);
    listener.role = LISTENER;

    t0 = now_s();
    c0 = cpu_s(0);
    listener.fd = listen_loopback(1024, &port);
    ep_add(ep, listener.fd, EPOLLIN, &listener);
    for (i = 1; i <= clients && started_total < conns; i++) {
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            fail("out of memory");
        c->role = CLIENT;
        c->id = i;
        client_start(ep, c, port);
    }

    while (served < conns || answered < conns) {
        struct epoll_event evs[256];
        int k, n = epoll_wait(ep, evs, 256, 10000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("epoll_wait: %s", n == 0 ? "stalled for 10 s" : strerror(errno));
        for (k = 0; k < n; k++) {
            struct conn *c = evs[k].data.ptr;
            int r;
            if (c->role == LISTENER) {
                for (;;) {
                    struct conn *s;
                    int fd = accept4(listener.fd, NULL, NULL, SOCK_NONBLOCK);
                    if (fd < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                            break;
                        fail("accept: %s", strerror(errno));
                    }
                    s = calloc(1, sizeof *s);
                    if (!s)
                        fail("out of memory");
                    s->role = SERVER;
                    s->fd = fd;
                    ep_add(ep, fd, EPOLLIN, s);
                    if (++accepted == conns) {
                        epoll_ctl(ep, EPOLL_CTL_DEL, listener.fd, NULL);
                        close(listener.fd);
                        break;
                    }
                }
                continue;
            }
            if (c->role == CLIENT && !c->started) {
                if (!connect_done(ep, c->fd, evs[k].events, c))
                    continue;
                c->started = 1;
                send_request(c->fd, c->id, c->n);
                continue;
            }
            r = lb_fill(c->fd, &c->lb);
            if (lb_line(&c->lb, line, sizeof line) >= 0) {
                if (c->role == SERVER) {
                    int m = snprintf(out, sizeof out, "ok %s\n", line);
                    send_all(c->fd, out, (size_t)m);
                    served++;
                    close(c->fd); /* also leaves the epoll set */
                    free(c);
                } else {
                    snprintf(want, sizeof want, "ok %ld %ld", c->id, c->n);
                    if (strcmp(line, want) != 0)
                        fail("client %ld got '%s'", c->id, line);
                    answered++;
                    close(c->fd);
                    if (started_total < conns)
                        client_start(ep, c, port);
                    else
                        free(c);
                }
                continue;
            }
            if (r == 0)
                fail("%s saw the connection close early",
                     c->role == CLIENT ? "a client" : "the server");
        }
    }
    close(ep);
    {
        double wall = now_s() - t0;
        print_result("", conns, wall, cpu_s(0) - c0, rss_kb(), (double)conns / wall);
    }
    return 0;
}

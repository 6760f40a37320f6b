/* W4 fan-in in plain C: CLIENTS client connections, each REQS line
 * request/responses ("<client> <i>" answered by "ok <client> <i>"), against
 * one listening socket, all in this single-threaded process on one epoll.
 * Usage: epoll_fanin [CLIENTS] [REQS]   (default 100 100) */
#include "common.h"

enum { LISTENER, CLIENT, SERVER };

struct conn {
    int fd;
    int role;
    int started; /* client: first request sent */
    long id;     /* client number */
    long next;   /* client: request number awaited */
    struct linebuf lb;
};

int main(int argc, char **argv)
{
    long clients = argc > 1 ? atol(argv[1]) : 100;
    long reqs = argc > 2 ? atol(argv[2]) : 100;
    long served = 0, answered = 0, handlers_done = 0, clients_done = 0, accepted = 0;
    int port, ep;
    long i;
    struct conn listener;
    char line[512], want[64], out[600];
    double t0, c0;

    bench_workload = "w4";
    ep = epoll_create1(0);
    if (ep < 0)
        fail("epoll_create1: %s", strerror(errno));
    memset(&listener, 0, sizeof listener);
    listener.role = LISTENER;

    t0 = now_s();
    c0 = cpu_s(0);
    listener.fd = listen_loopback(1024, &port);
    ep_add(ep, listener.fd, EPOLLIN, &listener);
    for (i = 1; i <= clients; i++) {
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            fail("out of memory");
        c->role = CLIENT;
        c->id = i;
        c->next = 1;
        c->fd = connect_loopback(port);
        ep_add(ep, c->fd, EPOLLIN | EPOLLOUT, c);
    }

    while (handlers_done < clients || clients_done < clients) {
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
                    if (++accepted == clients) {
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
                send_request(c->fd, c->id, c->next);
                continue;
            }
            r = lb_fill(c->fd, &c->lb);
            while (lb_line(&c->lb, line, sizeof line) >= 0) {
                if (c->role == SERVER) {
                    int m = snprintf(out, sizeof out, "ok %s\n", line);
                    served++;
                    send_all(c->fd, out, (size_t)m);
                } else {
                    snprintf(want, sizeof want, "ok %ld %ld", c->id, c->next);
                    if (strcmp(line, want) != 0)
                        fail("client %ld got '%s'", c->id, line);
                    answered++;
                    if (c->next++ < reqs) {
                        send_request(c->fd, c->id, c->next);
                    } else {
                        close(c->fd); /* also leaves the epoll set */
                        free(c);
                        clients_done++;
                        c = NULL;
                        break;
                    }
                }
            }
            if (c && r == 0) {
                if (c->role == CLIENT)
                    fail("client %ld saw the connection close early", c->id);
                close(c->fd);
                free(c);
                handlers_done++;
            }
        }
    }
    close(ep);
    if (served != clients * reqs || answered != clients * reqs)
        fail("served=%ld answered=%ld want %ld", served, answered, clients * reqs);
    {
        double wall = now_s() - t0;
        print_result("", clients * reqs, wall, cpu_s(0) - c0, rss_kb(),
                     (double)(clients * reqs) / wall);
    }
    return 0;
}

/* W6 many sockets in plain C: N loopback connections held open at once,
 * ROUNDS line round trips on each. The server accepts all N before it sends
 * "go\n" on every one; a client waits for "go", does its round trips
 * ("<client> <i>" answered by "ok <client> <i>"), then closes. Clients
 * connect in batches of 500, one batch per loop turn.
 * Usage: epoll_many [N] [ROUNDS] [one|split]   (default 1500 10 one)
 *   one:   both ends in this process; split: the clients run in a forked
 *   child process with its own epoll loop (when 2N fds exceed the limit). */
#include "common.h"
#include <sys/wait.h>

enum { LISTENER, CLIENT, SERVER };
#define BATCH 500

struct conn {
    int fd;
    int role;
    int state; /* client: 0 connecting, 1 awaiting go, 2 in round trips */
    long id;
    long next;
    struct linebuf lb;
};

static long n_conns, rounds;
static long accepted, served, handlers_done, answered, clients_done, started;
static int port, ep;
static struct conn listener;
static struct conn **server_conns;
static double t_first, t_last;

static void start_batch(void)
{
    long end = started + BATCH < n_conns ? started + BATCH : n_conns;
    while (started < end) {
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            fail("out of memory");
        c->role = CLIENT;
        c->id = ++started;
        c->next = 1;
        c->fd = connect_loopback(port);
        ep_add(ep, c->fd, EPOLLIN | EPOLLOUT, c);
    }
}

static void accept_ready(void)
{
    for (;;) {
        struct conn *s;
        int fd = accept4(listener.fd, NULL, NULL, SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            fail("accept: %s", strerror(errno));
        }
        if (accepted == 0)
            t_first = now_s();
        s = calloc(1, sizeof *s);
        if (!s)
            fail("out of memory");
        s->role = SERVER;
        s->fd = fd;
        server_conns[accepted++] = s;
        if (accepted == n_conns) {
            long i;
            epoll_ctl(ep, EPOLL_CTL_DEL, listener.fd, NULL);
            close(listener.fd);
            for (i = 0; i < n_conns; i++) {
                ep_add(ep, server_conns[i]->fd, EPOLLIN, server_conns[i]);
                send_all(server_conns[i]->fd, "go\n", 3);
            }
            return;
        }
    }
}

/* Runs until the wanted sides are finished. */
static void loop(int with_server, int with_client)
{
    char line[512], want[64], out[600];
    for (;;) {
        struct epoll_event evs[512];
        int k, n;
        if ((!with_server || handlers_done == n_conns) &&
            (!with_client || clients_done == n_conns))
            return;
        if (with_client && started < n_conns)
            start_batch();
        n = epoll_wait(ep, evs, 512, 10000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("epoll_wait: %s", n == 0 ? "stalled for 10 s" : strerror(errno));
        for (k = 0; k < n; k++) {
            struct conn *c = evs[k].data.ptr;
            int r;
            if (c->role == LISTENER) {
                accept_ready();
                continue;
            }
            if (c->role == CLIENT && c->state == 0) {
                if (!connect_done(ep, c->fd, evs[k].events, c))
                    continue;
                c->state = 1;
                if (!(evs[k].events & EPOLLIN))
                    continue;
            }
            r = lb_fill(c->fd, &c->lb);
            while (lb_line(&c->lb, line, sizeof line) >= 0) {
                if (c->role == SERVER) {
                    int m = snprintf(out, sizeof out, "ok %s\n", line);
                    served++;
                    send_all(c->fd, out, (size_t)m);
                } else if (c->state == 1) {
                    if (strcmp(line, "go") != 0)
                        fail("client %ld expected go, got '%s'", c->id, line);
                    c->state = 2;
                    send_request(c->fd, c->id, c->next);
                } else {
                    snprintf(want, sizeof want, "ok %ld %ld", c->id, c->next);
                    if (strcmp(line, want) != 0)
                        fail("client %ld got '%s'", c->id, line);
                    answered++;
                    if (c->next++ < rounds) {
                        send_request(c->fd, c->id, c->next);
                    } else {
                        close(c->fd);
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
                if (++handlers_done == n_conns)
                    t_last = now_s();
            }
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode;
    char extra[64];
    double t0, c0, wall, cpu;
    pid_t child = -1;
    long want;

    n_conns = argc > 1 ? atol(argv[1]) : 1500;
    rounds = argc > 2 ? atol(argv[2]) : 10;
    mode = argc > 3 ? argv[3] : "one";
    if (n_conns == 1500) {
        bench_workload = "w6";
    } else {
        static char name[32];
        snprintf(name, sizeof name, "w6_%ld", n_conns);
        bench_workload = name;
    }
    server_conns = calloc((size_t)n_conns, sizeof *server_conns);
    if (!server_conns)
        fail("out of memory");

    t0 = now_s();
    c0 = cpu_s(1);
    listener.role = LISTENER;
    listener.fd = listen_loopback(4096, &port);
    if (strcmp(mode, "split") == 0) {
        fflush(stdout);
        child = fork();
        if (child < 0)
            fail("fork: %s", strerror(errno));
        if (child == 0) {
            close(listener.fd);
            ep = epoll_create1(0);
            if (ep < 0)
                fail("epoll_create1: %s", strerror(errno));
            loop(0, 1);
            _exit(answered == n_conns * rounds ? 0 : 3);
        }
    } else if (strcmp(mode, "one") != 0) {
        fail("mode must be one or split, not %s", mode);
    }
    ep = epoll_create1(0);
    if (ep < 0)
        fail("epoll_create1: %s", strerror(errno));
    ep_add(ep, listener.fd, EPOLLIN, &listener);
    loop(1, child < 0);
    wall = now_s() - t0;
    if (child > 0) {
        int status;
        if (waitpid(child, &status, 0) != child)
            fail("waitpid: %s", strerror(errno));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail("client process failed (status %d)", status);
        answered = n_conns * rounds; /* checked by the child's exit status */
        clients_done = n_conns;
    }
    cpu = cpu_s(1) - c0;
    want = n_conns * rounds;
    if (served != want || answered != want || handlers_done != n_conns ||
        clients_done != n_conns)
        fail("served=%ld answered=%ld handlers=%ld clients=%ld want %ld/%ld", served,
             answered, handlers_done, clients_done, want, n_conns);
    snprintf(extra, sizeof extra, "conns=%ld mode=%s ", n_conns, mode);
    print_result(extra, want, wall, cpu, rss_kb(), (double)want / (t_last - t_first));
    return 0;
}

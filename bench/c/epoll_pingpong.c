/* W1 ping-pong in plain C: one loopback TCP connection, both ends in this
 * single-threaded process, "ping\n"/"pong\n" exchanged through one epoll
 * instance: each step is write, epoll_wait, read, as an event loop does it.
 * Usage: epoll_pingpong [ROUNDS]   (default 20000) */
#include "common.h"

enum { SERVER, CLIENT };

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    long served = 0, answered = 0;
    int port, lfd, cfd, sfd, ep, open_ends = 2;
    struct linebuf lb[2];
    int fds[2];
    char line[512];
    double t0, c0, t_first, t_last = 0;

    bench_workload = "w1";
    memset(lb, 0, sizeof lb);
    t0 = now_s();
    c0 = cpu_s(0);
    lfd = listen_loopback(16, &port);
    cfd = connect_loopback(port);
    for (;;) { /* loopback connect completes at once; wait for the accept */
        sfd = accept(lfd, NULL, NULL);
        if (sfd >= 0)
            break;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            fail("accept: %s", strerror(errno));
        usleep(100);
    }
    close(lfd);
    set_nonblock(sfd);
    fds[SERVER] = sfd;
    fds[CLIENT] = cfd;
    ep = epoll_create1(0);
    if (ep < 0)
        fail("epoll_create1: %s", strerror(errno));
    ep_add(ep, sfd, EPOLLIN, &fds[SERVER]);
    ep_add(ep, cfd, EPOLLIN, &fds[CLIENT]);

    t_first = now_s();
    send_all(cfd, "ping\n", 5);
    while (open_ends > 0) {
        struct epoll_event evs[4];
        int i, n = epoll_wait(ep, evs, 4, 10000);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("epoll_wait: %s", n == 0 ? "stalled for 10 s" : strerror(errno));
        for (i = 0; i < n; i++) {
            int *who = evs[i].data.ptr;
            int role = (int)(who - fds);
            int r;
            if (*who < 0)
                continue;
            r = lb_fill(*who, &lb[role]); /* level-triggered: one read */
            while (lb_line(&lb[role], line, sizeof line) >= 0) {
                if (role == SERVER) {
                    if (strcmp(line, "ping") != 0)
                        fail("server got '%s'", line);
                    served++;
                    send_all(sfd, "pong\n", 5);
                } else {
                    if (strcmp(line, "pong") != 0)
                        fail("client got '%s'", line);
                    if (++answered < rounds) {
                        send_all(cfd, "ping\n", 5);
                    } else {
                        t_last = now_s();
                        epoll_ctl(ep, EPOLL_CTL_DEL, cfd, NULL);
                        close(cfd);
                        fds[CLIENT] = -1;
                        open_ends--;
                    }
                }
            }
            if (r == 0 && role == SERVER) {
                epoll_ctl(ep, EPOLL_CTL_DEL, sfd, NULL);
                close(sfd);
                fds[SERVER] = -1;
                open_ends--;
            } else if (r == 0) {
                fail("client saw the connection close early");
            }
        }
    }
    close(ep);
    if (served != rounds || answered != rounds)
        fail("served=%ld answered=%ld want %ld", served, answered, rounds);
    print_result("", rounds, now_s() - t0, cpu_s(0) - c0, rss_kb(),
                 (double)rounds / (t_last - t_first));
    return 0;
}

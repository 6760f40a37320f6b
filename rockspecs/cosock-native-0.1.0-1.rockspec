-- cosock-native 0.1.0 as a rock, built from the release tarball (make dist;
-- doc/releasing.md): `luarocks install cosock-native` once it is published
-- on luarocks.org, or `luarocks build` of this file. The builtin build type
-- compiles the C module with luarocks' own compiler flags and the Lua headers
-- for the Lua it runs for, so neither autotools nor lua-compat-5.3 are
-- needed; noconfigure/config.h stands in for the one configure writes
-- (without HAVE_CARES: the builtin type cannot make an optional library
-- optional, so the rock keeps LuaSocket's blocking resolver rather than
-- require c-ares). The module lists are those of the scm rockspec (for
-- development, from a checkout); scripts/check-rock.sh checks both against
-- src/ and lua-modules.am, and --release builds and packs this one from a
-- local copy of the tarball.
rockspec_format = "3.0"
package = "cosock-native"
version = "0.1.0-1"

source = {
  -- The one field the publisher sets: where the release tarball is
  -- published (doc/releasing.md, "What only a person can supply"). The
  -- address below is a placeholder.
  url = "https://cosock-native.invalid/releases/cosock-native-0.1.0.tar.gz",
  dir = "cosock-native-0.1.0",
}

description = {
  summary = "cosock (coroutine executor for LuaSocket code) with its run loop in C",
  detailed = [[
A drop-in replacement for cosock 0.2.0: tasks are coroutines, and a task that
would block on a socket yields to a run loop written in C (cosock.core) that
keeps per-fd interest, a ready list and a timer heap from pass to pass.
cosock.ssl needs LuaSec (rock luasec), which is not a dependency: everything
else works without it. The rock is built without c-ares: name lookups use
LuaSocket's blocking resolver (the autotools build and the Debian package
resolve without blocking the loop). Lua 5.1 to 5.4 and LuaJIT 2.1, built
against the Lua headers alone.]],
  license = "MIT",
  -- A placeholder, like source.url (doc/releasing.md).
  homepage = "https://cosock-native.invalid/",
}

dependencies = {
  "lua >= 5.1, < 5.5",
  "luasocket >= 3.0",
}

-- The lists are written out in full: a rockspec is data (luarocks loads it
-- with no library functions).
build = {
  type = "builtin",
  -- The command cosock-trace (pure Lua): luarocks installs it with a
  -- wrapper that runs it on the rock's Lua with the rock's paths.
  install = { bin = { ["cosock-trace"] = "bin/cosock-trace" } },
  -- The documentation (Markdown; the HTML is made from it with pandoc:
  -- make doc) and the examples, installed beside the rock.
  copy_directories = { "doc", "examples" },
  modules = {
    ["cosock"] = "lua/cosock.lua",
    ["cosock.asyncify"] = "lua/cosock/asyncify.lua",
    ["cosock.channel"] = "lua/cosock/channel.lua",
    ["cosock.compat"] = "lua/cosock/compat.lua",
    ["cosock.copas"] = "lua/cosock/copas.lua",
    ["cosock.copas.ftp"] = "lua/cosock/copas/ftp.lua",
    ["cosock.copas.future"] = "lua/cosock/copas/future.lua",
    ["cosock.copas.http"] = "lua/cosock/copas/http.lua",
    ["cosock.copas.install"] = "lua/cosock/copas/install.lua",
    ["cosock.copas.lock"] = "lua/cosock/copas/lock.lua",
    ["cosock.copas.luasocket"] = "lua/cosock/copas/luasocket.lua",
    ["cosock.copas.queue"] = "lua/cosock/copas/queue.lua",
    ["cosock.copas.semaphore"] = "lua/cosock/copas/semaphore.lua",
    ["cosock.copas.smtp"] = "lua/cosock/copas/smtp.lua",
    ["cosock.copas.timer"] = "lua/cosock/copas/timer.lua",
    ["cosock.deadlock"] = "lua/cosock/deadlock.lua",
    ["cosock.dns"] = "lua/cosock/dns.lua",
    ["cosock.dump"] = "lua/cosock/dump.lua",
    ["cosock.lazy"] = "lua/cosock/lazy.lua",
    ["cosock.socket"] = "lua/cosock/socket.lua",
    ["cosock.socket.http"] = "lua/cosock/socket/http.lua",
    ["cosock.socket.resolve"] = "lua/cosock/socket/resolve.lua",
    ["cosock.socket.tcp"] = "lua/cosock/socket/tcp.lua",
    ["cosock.socket.udp"] = "lua/cosock/socket/udp.lua",
    ["cosock.socket.wrap"] = "lua/cosock/socket/wrap.lua",
    ["cosock.ssl"] = "lua/cosock/ssl.lua",
    ["cosock.ssl.https"] = "lua/cosock/ssl/https.lua",
    ["cosock.signal"] = "lua/cosock/signal.lua",
    ["cosock.timer"] = "lua/cosock/timer.lua",
    ["cosock.trace.chrome"] = "lua/cosock/trace/chrome.lua",
    ["cosock.trace.cli"] = "lua/cosock/trace/cli.lua",
    ["cosock.trace.file"] = "lua/cosock/trace/file.lua",
    ["cosock.trace.html"] = "lua/cosock/trace/html.lua",
    ["cosock.trace.html_page"] = "lua/cosock/trace/html_page.lua",
    ["cosock.trace.json"] = "lua/cosock/trace/json.lua",
    ["cosock.trace.model"] = "lua/cosock/trace/model.lua",
    ["cosock.trace.summary"] = "lua/cosock/trace/summary.lua",
    ["cosock.when"] = "lua/cosock/when.lua",
    ["cosock.op"] = "lua/cosock/op.lua",
    ["cosock.op.basic"] = "lua/cosock/op/basic.lua",
    ["cosock.op.cond"] = "lua/cosock/op/cond.lua",
    ["cosock.op.node"] = "lua/cosock/op/node.lua",
    ["cosock.op.perform"] = "lua/cosock/op/perform.lua",
    ["cosock.op.recv"] = "lua/cosock/op/recv.lua",
    ["cosock.op.send"] = "lua/cosock/op/send.lua",
    ["cosock.op.sources"] = "lua/cosock/op/sources.lua",
    ["cosock.op.wake"] = "lua/cosock/op/wake.lua",
    ["cosock.ossignal"] = "lua/cosock/ossignal.lua",
    ["cosock.stop"] = "lua/cosock/stop.lua",
    ["cosock.profile"] = "lua/cosock/profile.lua",
    ["cosock.sim"] = "lua/cosock/sim.lua",
    ["cosock.sim.net"] = "lua/cosock/sim/net.lua",
    ["cosock.sim.sock"] = "lua/cosock/sim/sock.lua",
    ["cosock.sim.tcp"] = "lua/cosock/sim/tcp.lua",
    ["cosock.sim.tls"] = "lua/cosock/sim/tls.lua",
    ["cosock.sim.udp"] = "lua/cosock/sim/udp.lua",
    ["cosock.tasks"] = "lua/cosock/tasks.lua",
    ["cosock.tasks.warnings"] = "lua/cosock/tasks/warnings.lua",
    ["cosock.scope"] = "lua/cosock/scope.lua",
    ["cosock.sync"] = "lua/cosock/sync.lua",
    ["cosock.trace"] = "lua/cosock/trace.lua",
    -- The C module, with the select poller only (any POSIX system) ...
    ["cosock.core"] = {
      sources = {
        "src/lib/clock.c", "src/lib/timer_heap.c", "src/lib/grid.c", "src/lib/poller.c",
        "src/lib/poller_select.c",
        "src/lib/chan_line.c", "src/lib/ready_list.c",
        "src/compat/compat53.c", "src/compat/kcompat.c",
        "src/loop/mem.c", "src/loop/hooks.c", "src/loop/run.c", "src/loop/task.c",
        "src/loop/park.c", "src/loop/waiters.c", "src/loop/current_task.c",
        "src/core.c",
        "src/features/names.c", "src/features/handle.c", "src/features/metadata.c",
        "src/features/wrapper.c", "src/features/luasocket_tcp.c", "src/features/channel.c", "src/features/channel_op.c", "src/features/channel_line.c",
        "src/features/timer_object.c", "src/features/alloc_count.c", "src/features/accounting.c",
        "src/features/watchdog.c", "src/features/resolver.c", "src/features/dns_answer.c", "src/features/predicate.c",
        "src/features/wakers.c", "src/features/sigwait.c", "src/features/fidelity.c",
        "src/features/step.c", "src/features/embed.c", "src/features/ossignal.c", "src/features/sim.c", "src/features/tasks_warn.c",
        "src/features/cancel.c", "src/features/trace.c",
      },
      defines = { 'PACKAGE_VERSION="0.1.0"' },
      incdirs = { "noconfigure", "src", "src/compat", "src/loop", "src/features" },
    },
  },
  platforms = {
    -- ... and with epoll on Linux (the whole list again: luarocks merges
    -- lists by position).
    linux = {
      modules = {
        ["cosock.core"] = {
          sources = {
            "src/lib/clock.c", "src/lib/timer_heap.c", "src/lib/grid.c", "src/lib/poller.c",
            "src/lib/poller_select.c",
            "src/lib/chan_line.c", "src/lib/ready_list.c",
            "src/compat/compat53.c", "src/compat/kcompat.c",
            "src/loop/mem.c", "src/loop/hooks.c", "src/loop/run.c", "src/loop/task.c",
            "src/loop/park.c", "src/loop/waiters.c", "src/loop/current_task.c",
            "src/core.c",
            "src/features/names.c", "src/features/handle.c", "src/features/metadata.c",
            "src/features/wrapper.c", "src/features/luasocket_tcp.c", "src/features/channel.c", "src/features/channel_op.c", "src/features/channel_line.c",
            "src/features/timer_object.c", "src/features/alloc_count.c", "src/features/accounting.c",
            "src/features/watchdog.c", "src/features/resolver.c", "src/features/dns_answer.c", "src/features/predicate.c",
            "src/features/wakers.c", "src/features/sigwait.c", "src/features/fidelity.c",
            "src/features/step.c", "src/features/embed.c", "src/features/ossignal.c", "src/features/sim.c", "src/features/tasks_warn.c",
        "src/features/cancel.c", "src/features/trace.c",
            "src/lib/poller_epoll.c",
          },
        },
      },
    },
  },
}

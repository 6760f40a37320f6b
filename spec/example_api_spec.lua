-- The examples that show the calls doc/reference.md lists and no other
-- example shows (timer_alarms, when_signals, dns_configure, op_sources,
-- close_wakes, luasocket_timeouts, and the embedding ones: step_host,
-- luv_host, skipped with the reason printed where this Lua has no luv
-- module) run and print what their headers say.

local cosock = require "cosock"
local L = require "spec.support.loop"

local function lines_of(out)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

local function run_example(name)
  local out, ok, err = L.capture(dofile, "examples/" .. name .. ".lua")
  assert(ok, err)
  return lines_of(out)
end

describe("reference examples", function()
  before_each(function() cosock.reset() end)

  it("trace: each task's waits and what woke them", function()
    local lines = run_example("trace")
    assert.same({
      "client got: HELLO",
      "client got from the worker: 42",
      "task 1 'server'",
    }, { lines[1], lines[2], lines[3] })
    local text = table.concat(lines, "\n")
    assert.matches("task 2 'worker'\n  waits on channel%-recv, woken by send from client\n" ..
      "  waits on sleep, woken by timer\n  ends: returned\n", text)
    assert.matches("  waits on channel%-recv, woken by send from worker\n  ends: returned\n", text)
    assert.matches("waits on recv, woken by ready", text)
    assert.matches("\n%d+ events recorded, 0 dropped\nsaved: a temporary file$", text)
    assert.is_false(require("cosock.trace").on())
  end)

  it("timer_alarms: every alarm and timer object call, in order", function()
    assert.same({
      "now() never goes back: true",
      "sleep_until: woke at or after the deadline: true",
      "every: tick 1 (arg: x)",
      "every: tick 2 (arg: x)",
      "every: tick 3 (arg: x), returning false",
      "every's task ended: true",
      "after: fn(10, 20) called",
      "after's join: true 30",
      "cancelled after's join: nil cancelled",
      "timeout channel: nil closed",
      "oneshot wait: true",
      "oneshot handled: true",
      "oneshot wait again: nil handled",
      "interval wait with settimeout(0.01): nil timeout",
      "interval wait after cancel: nil cancelled",
      "run() returned",
    }, run_example("timer_alarms"))
    L.assert_clean()
  end)

  it("close_wakes: close under a waiting reader and a select, with the switch off and on", function()
    assert.same({
      "close_wakes off: reader got nil timeout",
      "close_wakes off: select over a closed receiver: timeout",
      "close_wakes off: receive: nil closed",
      "set_close_wakes(true) returned false",
      "close_wakes on: reader got nil closed",
      "close_wakes on: select over a closed receiver: ready",
      "close_wakes on: receive: nil closed",
      "run() returned",
    }, run_example("close_wakes"))
    assert.is_false(cosock.set_close_wakes(false))
    L.assert_clean()
  end)

  it("luasocket_timeouts: polls with settimeout(0) and a 't' timeout, with the switch off and on", function()
    assert.same({
      "off: 3 polls with settimeout(0), ticker ran 3 times in between",
      'off: settimeout(1, "t"): "abcdefghij"',
      "set_luasocket_timeouts(true) returned false",
      "on: 3 polls with settimeout(0), ticker ran 0 times in between",
      'on: settimeout(1, "t"): nil timeout, with the start of the line',
      "run() returned",
    }, run_example("luasocket_timeouts"))
    assert.is_false(cosock.set_luasocket_timeouts(false))
    L.assert_clean()
  end)

  it("when_signals: signal_on reaches every waiter; the intervals", function()
    local before = cosock.when.get_interval()
    assert.same({
      "interval: 0.01",
      "set_interval(0.005) returned 0.01; now 0.005",
      "level 1",
      "level 2",
      "level 3",
      "on handler: tank full 3",
      "waiter 1: true tank full 3",
      "waiter 2: true tank full 3",
      "signal_on's task woke: true 3",
      "when.wait(level > 10, 0.02): nil timeout",
      "when.wait(level == 3): true 3",
      "signal.one with nobody waiting: 0",
      'signal.wait("quiet", 0.01): nil timeout',
      "interval back to 0.01",
      "run() returned",
    }, run_example("when_signals"))
    assert.equal(before, cosock.when.get_interval())
    L.assert_clean()
  end)

  it("dns_configure: a server that never answers, then back to the system's", function()
    local dns = cosock.socket.dns
    local lines = run_example("dns_configure")
    if dns.resolver ~= "c-ares" then
      assert.equal("resolver: luasocket", lines[1])
      assert.truthy(lines[2]:find("^configure: nil cosock%-native was built without c%-ares"))
      assert.equal("run() returned", lines[3])
      return
    end
    assert.same({
      "resolver: c-ares",
      "configure: true",
      "toip: nil Host name lookup failure",
      "getaddrinfo: nil temporary failure in name resolution",
      "localhost (from /etc/hosts): 127.0.0.1",
      "connect with a 50 ms timeout: nil timeout",
      "configure{tries = 0}: bad argument #1 to 'configure' (tries: integer from 1 to 100 expected, got 0)",
      "setservers{\"dns.example\"}: bad argument #1 to 'setservers' (entry 1: numeric address expected, got 'dns.example')",
      "setservers(nil): true",
      "configure{}: true",
      "run() returned",
    }, lines)
    -- The query the connect's timeout gave up on may still be in flight in
    -- c-ares (its timer in the loop's heap, doc/dns.md); reset ends it.
    cosock.reset()
    L.assert_clean()
    assert.equal(0, require("cosock.core").dns_stats().lookups)
  end)

  it("op_sources: each kind of operation", function()
    assert.same({
      "is_op: true false",
      "always: 1 nil 3",
      "choice(never, always): a",
      "deadline: passed",
      "cond: signalled (the sleep lost)",
      "cond again: ready at once",
      "guard: 1 then 2",
      "writable: true",
      "readable: hello",
      "timer: true",
      "timer again: nil handled",
      "cancelled timer: nil cancelled",
      "join: true done 42",
      "op.perform(always): via op.perform",
      "op_methods: true true cosock.op",
      "run() returned",
    }, run_example("op_sources"))
    L.assert_clean()
  end)

  it("step_host: a frame loop steps the echo tasks to their end", function()
    assert.same({
      'frame loop: the echo task answered "hello"',
      "frame loop: done after the tasks ended: true",
    }, run_example("step_host"))
    L.assert_clean()
  end)

  local has_luv = pcall(require, "luv")
  if not has_luv then
    print("example_api_spec: no luv module for this Lua (Debian's lua-luv): luv_host not run")
  end
  local luv_it = has_luv and it or pending
  luv_it("luv_host: luv's loop watches pollfd and steps the task through three host ticks", function()
    assert.same({
      "task got tick 1",
      "task got tick 2",
      "task got tick 3",
      "luv loop ended: cosock has no task left",
    }, run_example("luv_host"))
    L.assert_clean()
  end)
end)

--- cosock.op: Concurrent ML operations over cosock's channels, sockets, task
--- handles and timers (after Snabb's fibers; doc/op.md).
---
--- An operation is a value that describes a possible communication; op:perform()
--- does it, waiting in the loop as every cosock call does. Combinators:
---   choice(...)      the first of several to become possible (left-biased)
---   op:wrap(f)       f applied to the results, if and when op is chosen
---   guard(fn)        fn() -> op, called at each perform
---   with_nack(fn)    fn(nack) -> op; nack (an op) becomes ready when the op
---                    fn returned is not the one chosen (or the task is cancelled)
---   always(...), never(), sleep(s), deadline(t)
--- Base operations: send(tx, v), recv(rx), readable(sock), writable(sock),
--- join(handle), timer(t), cond():wait_op().
---
--- The parts, one job each, under cosock/op/: node (operations and
--- combinators), wake (waking performs, the fan-outs), cond, basic (always,
--- never, sleep, deadline), recv, send, sources (sockets, handles, timers),
--- perform.

require("cosock.core").open "timer" -- (its C functions: added to cosock.core on first use)

local node = require "cosock.op.node"
local cond = require "cosock.op.cond"
local basic = require "cosock.op.basic"
local recv = require "cosock.op.recv"
local send = require "cosock.op.send"
local sources = require "cosock.op.sources"
local perform = require "cosock.op.perform"
local wake = require "cosock.op.wake"

local withdraw_all = send.withdraw_all

-- For the lines other modules keep (cosock.sync's acquire_op): a base
-- operation of impl (try, block, unblock, finish), and the grant that
-- chooses it while its perform waits, unless that perform chose already
-- (false then). finish(inst) gives the results of a granted operation.
local function grant(st, inst)
  if st.committed or st.done then return false end
  st.committed = inst
  pcall(withdraw_all, st, inst) -- (the perform withdraws them again when it resumes)
  wake.wake_state(st)
  return true
end

return {
  is_op = node.is_op,
  choice = node.choice, guard = node.guard, with_nack = node.with_nack,
  cond = cond.cond,
  always = basic.always, never = basic.never, sleep = basic.sleep, deadline = basic.deadline,
  recv = recv.recv, send = send.send,
  readable = sources.readable, writable = sources.writable, join = sources.join,
  timer = sources.timer,
  perform = perform.perform,
  op_methods = node.OP,
  _base = node.base, _grant = grant,
}

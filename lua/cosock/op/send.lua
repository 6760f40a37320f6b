--- cosock.op.send: send(tx, v), true once the message is queued (a
--- rendezvous: taken by a receiver); nil, "closed" when the channel is
--- closed. A send that cannot complete at once offers its message by joining
--- the channel's line of senders (a proxy place in line, src/features/channel.c); a
--- receiver that takes it commits the perform at that moment, and the
--- perform's other offers leave their lines before the receive returns.

local core = require "cosock.core"
local channel = require "cosock.channel"
local compat = require "cosock.compat"
local node = require "cosock.op.node"
local wake = require "cosock.op.wake"

local type, error, pcall, getmetatable, setmetatable = type, error, pcall, getmetatable, setmetatable
local pack = compat.pack
local resume, create, costatus = coroutine.resume, coroutine.create, coroutine.status
local sender_send = channel.sender.send
-- A send that never waits, and a send that waits without the sender's
-- timeout: the ends' own timeouts are left alone (src/features/channel.c).
local try_send, send_untimed = core.channel_try_send, core.channel_send_untimed
local argerror, is_end = node.argerror, node.is_end
local each_protected = wake.each_protected

local M = {}

local send_impl = {}
M.impl = send_impl

-- (the senders' metatable checked first: a send is made per message)
local tx_mt = getmetatable((channel.new()))
local OP = node.OP

function M.send(tx, v)
  if getmetatable(tx) ~= tx_mt and not is_end(tx, channel.sender) then
    argerror(1, "send", "cosock.channel sender expected, got " .. type(tx))
  end
  -- (node.base, inline)
  local n = setmetatable({ impl = send_impl, a = tx, b = v, node = false }, OP)
  n.node = n
  return n
end

local SENT, CLOSED = { true, n = 1 }, { nil, "closed", n = 2 }
M.SENT, M.CLOSED = SENT, CLOSED

local function send_result(ok, err)
  if ok then return SENT end
  if err == "closed" then return CLOSED end
  return nil
end

function send_impl.try(inst)
  return send_result(try_send(inst.node.a, inst.node.b))
end

-- The send itself, waiting (the sender has no timeout of its own).
function send_impl.wait(inst)
  local ok, err = sender_send(inst.node.a, inst.node.b)
  return send_result(ok, err) or CLOSED
end

-- Withdraws a send's offer from its line (unless a receiver took it already).
-- (out of line first, then forgotten: an error in between leaves it to try again)
local function withdraw(inst)
  local proxy = inst.proxy
  if proxy ~= nil then
    proxy:setwaker("sendr", nil)
    inst.proxy = nil
  end
end

-- Withdraws every offer of st's perform but except's.
local function withdraw_all(st, except)
  each_protected(st.offers, except, withdraw)
end
M.withdraw_all = withdraw_all

-- The offer: a send run in a coroutine of its own waits in line through the
-- channel's proxy (what a send in a forwarded coroutine does); the proxy goes
-- to the loop inside a wrapper whose waker commits this branch first.
function send_impl.offer(inst, st)
  local tx = inst.node.a
  local co = create(send_untimed)
  local r = pack(resume(co, tx, inst.node.b))
  if not r[1] then error(r[2], 0) end
  if costatus(co) == "dead" then return send_result(r[2], r[3]) end
  local proxy = r[3][1]
  inst.co, inst.proxy = co, proxy
  st.offers[#st.offers + 1] = inst
  st.offering[tx.link] = true
  local wrapper = {}
  function wrapper.setwaker(_, kind, fn)
    if fn == nil then
      if inst.proxy == proxy then withdraw(inst) end
      return
    end
    proxy:setwaker(kind, function()
      -- A receiver took the message (or the channel closed): this branch is
      -- chosen now, and the perform's other offers leave their lines at once.
      if not st.committed and not st.done then
        st.committed = inst
        inst.proxy = nil
        pcall(withdraw_all, st, inst) -- (the perform withdraws them again when it resumes)
      end
      fn()
    end)
  end
  st.sendt[#st.sendt + 1] = wrapper
end

function send_impl.finish(inst)
  local r = pack(resume(inst.co))
  if not r[1] then error(r[2], 0) end
  return send_result(r[2], r[3]) or CLOSED
end

return M

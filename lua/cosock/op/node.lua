--- cosock.op.node: what an operation is (doc/op.md): the metatable of every
--- operation, the node kinds, base nodes, and the combinators that build the
--- tree a perform walks (choice, wrap, guard, with_nack).

local type, error, getmetatable, setmetatable, select =
  type, error, getmetatable, setmetatable, select

local M = {}

local OP = {}
OP.__index = OP
OP.__name = "cosock.op"
M.OP = OP

local function is_op(x) return getmetatable(x) == OP end
M.is_op = is_op

-- Raises at the caller of the public function (level: of argerror's caller).
local function argerror(n, fname, msg, level)
  error(("bad argument #%d to '%s' (%s)"):format(n, fname, msg), (level or 2) + 1)
end
M.argerror = argerror

-- Whether x is a channel end (its metatable's __index is methods).
function M.is_end(x, methods)
  local mt = getmetatable(x)
  return type(x) == "table" and type(mt) == "table" and mt.__index == methods
end

local function check_fn(fname, fn)
  if type(fn) ~= "function" then argerror(1, fname, "function expected, got " .. type(fn), 3) end
end

-- Node kinds. A base node holds its impl (the table of try / block / finish
-- functions of its module) and up to two arguments, and no kind: its kind
-- is BASE, nil (the metatable has no field kind). Base operations are made
-- per message (op.send), and a table of four fields is half the size of one
-- of eight: the collector's work, with many tasks alive, follows the bytes.
local BASE, CHOICE, WRAP, GUARD, NACK = nil, 2, 3, 4, 5
M.BASE, M.CHOICE, M.WRAP, M.GUARD, M.NACK = BASE, CHOICE, WRAP, GUARD, NACK

-- Every combinator node, and every receive, has a field fast: the list of
-- receive nodes it is made of when it is nothing but receives (a recv, a
-- choice of them; no wraps), else false. perform tries those with their
-- bound tries and waits on them alone (cosock.op.perform). The other base
-- nodes have none (nil, from the metatable: read only where a choice is
-- made; perform's first try reads it raw).

-- A base node is also its own instance for perform's first, non-waiting tries
-- (node.node = node: the try functions read inst.node.a).
function M.base(impl, a, b)
  -- (node made here: setting it later would grow the table)
  local node = setmetatable({ impl = impl, a = a, b = b, node = false }, OP)
  node.node = node
  return node
end

-- The fast list of a choice of ops[1..n]: their fast lists in order, or
-- false when one of them has none (and for choice(), which never completes).
local function fast_of(ops, n)
  if n == 0 then return false end
  local fast = {}
  for i = 1, n do
    local f = ops[i].fast
    if not f then return false end
    for j = 1, #f do fast[#fast + 1] = f[j] end
  end
  return fast
end

--- choice(...) -> op: the first of the operations to become possible. With
--- several possible at once, the first in argument order. choice() never completes.
function M.choice(...)
  local n = select("#", ...)
  local ops = { ... }
  for i = 1, n do
    local o = ops[i]
    if not is_op(o) then argerror(i, "choice", "cosock.op operation expected, got " .. type(o)) end
  end
  return setmetatable({ kind = CHOICE, ops = ops, n = n, fast = fast_of(ops, n), chans = false }, OP)
end

--- op:wrap(f) -> op: when op is chosen, perform returns f(op's results).
function OP:wrap(f)
  if not is_op(self) then argerror(1, "wrap", "cosock.op operation expected, got " .. type(self)) end
  check_fn("wrap", f)
  return setmetatable({ kind = WRAP, op = self, f = f, fast = false }, OP)
end

--- guard(fn) -> op: at each perform, fn() makes the operation to perform.
function M.guard(fn)
  check_fn("guard", fn)
  return setmetatable({ kind = GUARD, fn = fn, fast = false }, OP)
end

--- with_nack(fn) -> op: at each perform, fn(nack) makes the operation; nack is
--- an operation that becomes ready when that operation is not the one chosen.
function M.with_nack(fn)
  check_fn("with_nack", fn)
  return setmetatable({ kind = NACK, fn = fn, fast = false }, OP)
end

return M

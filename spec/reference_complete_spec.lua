-- doc/reference.md has an entry for every public name: each module's
-- exported names, and the methods and fields of the objects the modules make
-- (handles, channel ends, socket wrappers, timers, operations, conditions,
-- get_thread_metadata's entries, stats(), watchdog reports). An entry is a
-- heading, a list item or a table row of the reference that starts with the
-- name in backquotes (several names may lead it, separated by commas).
-- A name exported without an entry fails the spec, naming it.

local cosock = require "cosock"
local core = require "cosock.core"

local function read_reference()
  local top = os.getenv("abs_top_srcdir") or "."
  local f = assert(io.open(top .. "/doc/reference.md", "r"))
  local text = f:read("*a")
  f:close()
  return text
end

-- The names that lead an entry: every backquoted span at the start of a
-- heading, list item or table row (its continuation lines joined), each as
-- it is and as its leading identifier (`tcp:receive([pattern])` gives both
-- that text and "tcp:receive").
local function entries(text)
  local names = {}
  local function scan(block)
    local s = block:gsub("^#+%s*", ""):gsub("^[-|]%s*", "")
    while true do
      local span, rest = s:match("^`([^`]+)`(.*)$")
      if span == nil then return end
      names[span] = true
      local id = span:match("^[%w_.:]+")
      if id then names[id] = true end
      local sep = rest:match("^,%s*")
      if sep == nil then return end
      s = rest:sub(#sep + 1)
    end
  end
  local block
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^#") or line:match("^%- ") or line:match("^| ") then
      if block then scan(block) end
      block = line
    elseif block and line:match("^  %S") then
      block = block .. " " .. line:gsub("^%s+", "")
    else
      if block then scan(block) end
      block = nil
    end
  end
  if block then scan(block) end
  return names
end

local documented = entries(read_reference())

-- Private names the modules export for their own use (not API).
local PRIVATE = { _from_inner = true, _spawned = true, _task_ended = true, _base = true, _grant = true,
  _from_env = true, _closer = true, _poll = true, _helpers = true }

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do
    if type(k) == "string" and not PRIVATE[k] then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

-- The names in `expected` that have no entry, for assert.same({}, ...).
local function missing(expected)
  local out = {}
  for _, name in ipairs(expected) do
    if not documented[name] then out[#out + 1] = name end
  end
  return out
end

-- prefix .. key for each key of t ("cosock.socket." .. "bind").
local function qualified(prefix, t, extra)
  local out = {}
  for _, k in ipairs(sorted_keys(t)) do out[#out + 1] = prefix .. k end
  for _, k in ipairs(extra or {}) do out[#out + 1] = prefix .. k end
  return out
end

-- The methods and fields of an object's method table: "obj:m" for
-- functions, "obj.f" for other values; metamethods are left out, except
-- __tostring, which gives "tostring(obj)".
local function members(obj, methods)
  local out = {}
  for _, k in ipairs(sorted_keys(methods)) do
    if k == "__tostring" then
      out[#out + 1] = "tostring(" .. obj .. ")"
    elseif not k:find("^__") then
      out[#out + 1] = obj .. (type(methods[k]) == "function" and ":" or ".") .. k
    end
  end
  return out
end

describe("doc/reference.md", function()
  before_each(function() cosock.reset() end)

  it("finds entries in the reference at all", function()
    assert.is_true(documented["cosock.spawn"])
    assert.is_nil(documented["cosock.no_such_function"])
  end)

  it("has every name of cosock", function()
    assert.same({}, missing(qualified("cosock.", cosock, { "ssl" })))
  end)

  it("has every name of cosock.socket, cosock.socket.dns and the wrappers", function()
    assert.same({}, missing(qualified("cosock.socket.", cosock.socket, { "http" })))
    assert.same({}, missing(qualified("cosock.socket.dns.", cosock.socket.dns)))
    assert.same({}, missing(members("tcp", cosock.socket.tcp)))
    assert.same({}, missing(members("udp", cosock.socket.udp)))
    local t, u = cosock.socket.tcp(), cosock.socket.udp()
    assert.same({}, missing(qualified("tcp.", t)))
    assert.same({}, missing(qualified("udp.", u)))
    t:close()
    u:close()
  end)

  it("has every name of cosock.channel and of its ends", function()
    local channel = cosock.channel
    assert.same({}, missing(qualified("cosock.channel.", channel)))
    assert.same({}, missing(members("sender", channel.sender)))
    assert.same({}, missing(members("receiver", channel.receiver)))
    local tx, rx = channel.new()
    assert.same({}, missing(qualified("sender.", tx)))
    assert.same({}, missing(qualified("receiver.", rx)))
    assert.same({}, missing(qualified("link.", tx.link, { "waker" })))
  end)

  it("has every name of cosock.timer and of timer objects", function()
    assert.same({}, missing(qualified("cosock.timer.", cosock.timer)))
    local t = cosock.timer.create_oneshot(1)
    assert.same({}, missing(members("timer", getmetatable(t))))
    assert.same({}, missing(members("timer", getmetatable(t).__index)))
    t:cancel()
  end)

  it("has every name of cosock.signal and cosock.when", function()
    assert.same({}, missing(qualified("cosock.signal.", cosock.signal)))
    assert.same({}, missing(qualified("cosock.when.", cosock.when)))
  end)

  it("has every name of cosock.scope and of scopes", function()
    local scope = cosock.scope
    assert.same({}, missing(qualified("cosock.scope.", scope)))
    local methods
    cosock.spawn(function() scope.run(function(s) methods = getmetatable(s).__index end) end)
    cosock.run()
    assert.same({}, missing(members("s", methods)))
  end)

  it("has every name of cosock.sync and of its locks and semaphores", function()
    assert.same({}, missing(qualified("cosock.sync.", cosock.sync)))
    assert.same({}, missing(members("sem", getmetatable(cosock.sync.lock()))))
  end)

  it("has every name of cosock.trace", function()
    assert.same({}, missing(qualified("cosock.trace.", cosock.trace)))
    assert.same({}, missing({ "COSOCK_TRACE", "COSOCK_TRACE_SIZE" }))
  end)

  it("has every name of cosock.op, of operations and of conditions", function()
    local op = cosock.op
    assert.same({}, missing(qualified("cosock.op.", op)))
    assert.same({}, missing(members("op", op.op_methods)))
    assert.same({}, missing(members("cond", getmetatable(op.cond()).__index)))
  end)

  it("has every method and field of thread handles", function()
    local h = cosock.spawn(function() end, "h")
    assert.same({}, missing(members("handle", getmetatable(h))))
    assert.same({}, missing(qualified("handle.", h)))
    cosock.run()
  end)

  it("has every field of get_thread_metadata's entries and of stats()", function()
    local was = cosock.set_accounting(true)
    local fields = {}
    cosock.spawn(function()
      cosock.socket.sleep(0) -- a wait with a timeout: the entry then has `timeout`
      for _, md in ipairs(cosock.get_thread_metadata()) do
        for k in pairs(md) do fields[k] = true end
      end
    end, "asker")
    cosock.run()
    local stats = cosock.stats()
    cosock.set_accounting(was)
    assert.is_true(fields.timeout and fields.busy and fields.allocated)
    assert.same({}, missing(qualified("metadata.", fields)))
    assert.same({}, missing(qualified("stats.", stats)))
  end)

  it("has every field of a watchdog report", function()
    local report
    cosock.set_watchdog(0.001, "report", function(r) report = r end)
    cosock.spawn(function()
      -- runs until the watchdog reports it (a bound of 30 s, so that a
      -- watchdog that never fires fails the spec instead of hanging it)
      local t0 = core.monotime()
      while report == nil and core.monotime() - t0 < 30 do end
    end, "spinner")
    local ok, err = pcall(cosock.run)
    cosock.set_watchdog(nil)
    assert(ok, err)
    assert(report ~= nil, "the watchdog never reported the spinner")
    assert.same({}, missing(qualified("report.", report)))
  end)

  it("has every name of cosock.tasks", function()
    assert.same({}, missing(qualified("cosock.tasks.", require "cosock.tasks")))
  end)

  it("has every name of cosock.sim", function()
    assert.same({}, missing(qualified("cosock.sim.", require "cosock.sim")))
  end)

  it("has the public names of cosock.core", function()
    local public = { "_VERSION", "fast_path", "dns", "dns_version", "dns_stats", "set_backend",
      "monotime", "stats" }
    local expected = {}
    for _, k in ipairs(public) do
      if k ~= "dns_version" then assert.is_not_nil(core[k], "cosock.core." .. k) end
      if core[k] ~= nil then expected[#expected + 1] = "cosock.core." .. k end
    end
    assert.same({}, missing(expected))
  end)

  it("has every name of the trace readers (cosock.trace.file, model, summary, chrome, html, cli)", function()
    for _, m in ipairs({ "file", "model", "summary", "chrome", "html", "cli" }) do
      assert.same({}, missing(qualified("cosock.trace." .. m .. ".", require("cosock.trace." .. m))))
    end
  end)

  it("has every name of cosock.ssl and of tls wrappers #luasec", function()
    local ssl = cosock.ssl
    assert.same({}, missing(qualified("cosock.ssl.", ssl, { "https" })))
    local tcp = cosock.socket.tcp()
    local w = assert(ssl.wrap(tcp, { mode = "client", protocol = "any" }))
    assert.same({}, missing(members("tls", getmetatable(w).__index)))
    w:close()
    tcp:close()
  end)
end)

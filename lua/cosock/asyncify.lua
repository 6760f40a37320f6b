--- cosock.asyncify: load a module so that it, and every module it requires in turn,
--- gets cosock.socket for `require "socket"` and cosock.ssl for `require "ssl"`.
---
--- `asyncify(name)` finds the module's loader through package.searchers like
--- `require` does; when it is a fresh Lua chunk, its `_ENV` upvalue (on 5.1 and
--- LuaJIT: its environment, setfenv) is replaced by an environment whose `require` is this module's, and the chunk is run. Reads of
--- other globals go to the real ones; writes stay in that environment, which
--- every asyncified module shares (as in cosock 0.2.0). Results are cached per name (and kept
--- apart from package.loaded, so plain `require` still gives the blocking module).
---
--- Rules (see doc/lua-layer.md):
--- * "socket" / "ssl": a fresh copy of cosock.socket / cosock.ssl (cached).
--- * "cosock" and "cosock.*": already cosock-aware, plain require.
--- * standard-library modules, and modules that no searcher finds but that are in
---   package.loaded: returned as they are.
--- * modules whose loader is not a fresh Lua chunk (C modules, package.preload
---   functions): plain require (their upvalues may be shared and must not change).
--- * not found: asyncify returns the last searcher's message (as cosock 0.2.0
---   does); a require inside an asyncified module raises require's "module '...'
---   not found:..." error, as require would.
---
--- This module must not require "cosock" (lua/cosock.lua requires it).

local require, type, pairs, error, pcall, setmetatable, getmetatable, rawset =
  require, type, pairs, error, pcall, setmetatable, getmetatable, rawset
local sfind, concat = string.find, table.concat
local dgetinfo, dgetupvalue, dsetupvalue = debug.getinfo, debug.getupvalue, debug.setupvalue
local setfenv = setfenv -- (5.1 and LuaJIT only)

local STDLIB = {
  _G = true, coroutine = true, debug = true, io = true, math = true, os = true,
  package = true, string = true, table = true, utf8 = true, bit32 = true,
}

local cache = {}
local LOADING = setmetatable({}, { __tostring = function() return "cosock.asyncify loading" end })

local load_module -- forward

-- The environment given to asyncified chunks: globals read through to the real
-- ones (except `require`); what they write stays here, as in cosock 0.2.0.
local env = setmetatable({}, { __index = _G })
local SUBSTITUTE = { socket = "cosock.socket", ssl = "cosock.ssl" }
rawset(env, "require", function(name)
  local sub = SUBSTITUTE[name]
  if sub ~= nil then return require(sub) end
  local mod, err = load_module(name)
  if mod == nil then error(err, 2) end
  return mod
end)

local function copy_of(modname)
  local orig = require(modname)
  local c = {}
  for k, v in pairs(orig) do c[k] = v end
  return setmetatable(c, getmetatable(orig))
end

-- Find the loader like require does. Returns loader, extra, index of the searcher;
-- or nil, the concatenated messages of the searchers, and the last one.
local function find_loader(name)
  local msgs = {}
  local searchers = package.searchers or package.loaders -- (5.1: loaders)
  for i = 1, #searchers do
    local loader, extra = searchers[i](name)
    if type(loader) == "function" then return loader, extra, i end
    if type(loader) == "string" then msgs[#msgs + 1] = loader end
  end
  return nil, concat(msgs), msgs[#msgs]
end

-- Is `loader` a freshly loaded main chunk? Then gives it `env` and returns true.
-- 5.2 and later: its first upvalue is its _ENV; 5.1 and LuaJIT: setfenv.
local function give_env(loader)
  local info = dgetinfo(loader, "S")
  if info.what ~= "main" then return false end
  if setfenv then
    setfenv(loader, env)
    return true
  end
  local uvname = dgetupvalue(loader, 1)
  -- "" when the chunk was stripped of debug names: a main chunk's only upvalue is _ENV
  if uvname ~= "_ENV" and uvname ~= "" then return false end
  dsetupvalue(loader, 1, env)
  return true
end

--- Load (or find in the cache) module `name`. Returns the module, or nil, err, last
--- when it cannot be found (err: require's message; last: the last searcher's).
--- Errors raised by the module's own code propagate.
function load_module(name)
  local mod = cache[name]
  if mod == LOADING then
    error("loop or previous error loading module '" .. name .. "'", 0)
  end
  if mod ~= nil then return mod end

  if name == "socket" then
    mod = copy_of("cosock.socket")
  elseif name == "ssl" then
    mod = copy_of("cosock.ssl")
  elseif name == "cosock" or sfind(name, "^cosock%.") or STDLIB[name] then
    mod = require(name)
  else
    local loader, extra, idx = find_loader(name)
    if loader == nil then
      if package.loaded[name] ~= nil then
        mod = package.loaded[name]
      else
        local last = idx -- (when nothing is found: the last searcher's message)
        return nil, "module '" .. name .. "' not found:" .. extra, last
      end
    elseif idx == 1 or not give_env(loader) then
      mod = require(name)
    else
      local before = package.loaded[name]
      cache[name] = LOADING
      local ok, res = pcall(loader, name, extra)
      -- a module that registers itself in package.loaded must not replace the
      -- blocking module there
      local after = package.loaded[name]
      package.loaded[name] = before
      if not ok then
        cache[name] = nil
        error(res, 0)
      end
      mod = res
      if mod == nil then
        -- like require: a loader that returns nothing may have registered itself
        if after ~= before and after ~= nil then mod = after else mod = true end
      end
    end
  end
  cache[name] = mod
  return mod
end

--- asyncify(name) -> the module, or, when no searcher finds it, the last
--- searcher's message (what cosock 0.2.0 returns there).
local function asyncify(name)
  if type(name) ~= "string" then
    error("bad argument #1 to 'asyncify' (string expected, got " .. type(name) .. ")", 2)
  end
  local mod, _, last = load_module(name)
  if mod == nil then return last end
  return mod
end

return asyncify

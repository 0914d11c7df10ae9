-- The `http` bench's load, played by wrk (tests/bench/http.py starts it; docs/performance.md).
--
--   REDDOG_WRK_SPEC=SPEC.json wrk -t N -c N -d SECONDS -s tests/bench/wrk/mix.lua URL
--
-- One wrk thread per client, each with one connection (so a thread's Lua state is its
-- connection's state: wrk tells a script nothing about which connection it serves). SPEC.json
-- (written by the bench) holds `clients`, one per thread in order, each with its `script`
-- (live, casino, high-card, reader), `seed` and what its script needs (table, wallet, keys);
-- `start_at` (CLOCK_MONOTONIC seconds, the bench's time.monotonic()), `seconds`, `warmup`,
-- `delay` (whether this process defines delay(): open loop or readers), `groups` (the kinds
-- pooled into `commands` and `play`) and `out`, where done() writes what it counted.
--
-- A client's script is a coroutine that yields one request at a time and is resumed with its
-- answer's status and, where it asked for it, its parsed JSON body (a deal's id and legal
-- actions, a table's legal actions, a feed page's `next`). Every POST carries a fresh
-- Idempotency-Key (a random prefix read from /dev/urandom for each thread, and a counter).
--
-- Latency is counted by the script, per request, from its start to its answer's end: in a
-- closed loop the start is when wrk asked for the request; in an open loop (a client with a
-- `rate`) it is the request's scheduled time (delay() holds each request until then, and a
-- request due while the last is still unanswered goes at once, its latency counted from when it
-- was due: no coordinated omission), or its send if that was earlier (delay() is whole
-- milliseconds, rounded down, so a request may go out up to 1 ms before it is due).
-- A request counts when its start falls in [start_at + warmup, start_at + seconds). A 429 or
-- a 5xx is counted by status, not as a latency (as the bench always did). A reader waits
-- 0.2 s after a 429.

local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = dir .. "?.lua;" .. package.path
local json = require("json")
local ffi = require("ffi")

ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } reddog_timespec;
int clock_gettime(int clock_id, reddog_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("reddog_timespec")
local function now()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
  return tonumber(timespec.tv_sec) + tonumber(timespec.tv_nsec) * 1e-9
end

local function read_spec()
  local path = os.getenv("REDDOG_WRK_SPEC")
  if not path then error("mix.lua: REDDOG_WRK_SPEC (the bench's spec file) is not set") end
  local file = assert(io.open(path, "rb"))
  local text = file:read("*a")
  file:close()
  return json.decode(text)
end

local spec = read_spec()
local counted_from = spec.start_at + spec.warmup
local end_at = spec.start_at + spec.seconds

-- The scripts (the bench's mix; tests/bench/http.py's docstring says what each does).
local function ask(kind, method, path, key, body, parse)
  return coroutine.yield({ kind = kind, method = method, path = path, key = key, body = body,
                           parse = parse })
end

local function live_script()
  while true do ask("live", "GET", "/health/live") end
end

-- Rounds of: a deal, then stand (or, a third of the time when it is legal, raise); a look at
-- the table; every 2nd round the wallet, every 5th a grant, every 4th a feed page (following
-- the log from where this client's last page ended; not when `feed` is false). With `reads`
-- false, the commands alone: no look at the table or the wallet, no feed page (the table is
-- read only to finish a deal left deciding, as always).
local function casino_script(me)
  local tbl, wallet = me.table_id, me.wallet_id
  local player, operator = me.player_key, me.operator_key
  local after, turn = 0, 0
  while true do
    turn = turn + 1
    local status, deal = ask("deal", "POST", "/tables/" .. tbl .. "/deals", player, { bet = 10 },
                             true)
    if status == 422 then -- a deal still deciding (its decision went unanswered): finish it
      local view
      status, view = ask("read table", "GET", "/tables/" .. tbl, player, nil, true)
      deal = status == 200 and type(view) == "table" and view.current_deal or nil
      if deal then status = 201 end
    end
    if status == 201 and type(deal) == "table" and deal.phase == "deciding" then
      local action = "stand"
      for _, legal in ipairs(deal.legal_actions or {}) do
        if legal == "raise" and math.random() < 1 / 3 then action = "raise" end
      end
      ask(action, "POST", "/deals/" .. deal.id .. "/" .. action, player)
    end
    local reads = me.reads ~= false
    if reads then ask("read table", "GET", "/tables/" .. tbl, player) end
    if reads and turn % 2 == 0 then ask("read wallet", "GET", "/wallets/" .. wallet, player) end
    if turn % 5 == 0 then
      ask("grant", "POST", "/wallets/" .. wallet .. "/grants", operator, { amount = 100 })
    end
    if reads and turn % 4 == 0 and me.feed ~= false then
      local page
      status, page = ask("feed page", "GET", "/events?after=" .. after .. "&limit=50", operator,
                         nil, true)
      if status == 200 and type(page) == "table" and page.next then after = page.next end
    end
  end
end

-- A legal action that moves the game on (never closing the table or splitting the pot), and
-- the request that takes it: tests/e2e/load_client.py's choose and table_command.
local function choose(actions)
  for _, a in ipairs(actions or {}) do
    local kind = a.action
    if (kind == "deal" or kind == "fund_bank" or kind == "bet" or kind == "choose")
        and (a.min == nil or a.max == nil or a.min <= a.max) then
      return a
    end
  end
end

local function table_command(tbl, action)
  local kind, path = action.action, "/tables/" .. tbl
  if kind == "deal" then return path .. "/next-deal", {}, "next_deal" end
  local low = action.min
  local high = action.max or low
  if kind == "fund_bank" then return path .. "/bank", { amount = math.min(2 * low, high) }, "bank" end
  if kind == "bet" then
    local amount = math.random(2) == 1 and low or math.min(2 * low, high)
    return path .. "/bets", { seat = action.seat, amount = amount }, "bet"
  end
  return path .. "/dealer-choice", { choice = "pass" }, "choose"
end

-- Seat the table's players, then take its legal actions (next deal, bank, bets, dealer's
-- choice) as whichever player each belongs to, reading the table as the operator in between.
local function high_card_script(me)
  local tbl, operator = me.table_id, me.operator_key
  local keys = {}
  for _, p in ipairs(me.players) do
    keys[p.player_id] = p.key
    ask("high-card other", "POST", "/tables/" .. tbl .. "/seats", p.key,
        { seat = p.seat, wallet_id = p.wallet_id })
  end
  while true do
    local status, view = ask("read table", "GET", "/tables/" .. tbl, operator, nil, true)
    local action = status == 200 and type(view) == "table" and choose(view.legal_actions) or nil
    if action then -- else nothing this client may do: look again, as a client would
      local path, body, op = table_command(tbl, action)
      local who = keys[action.player_id or ""] or operator
      ask(op == "bet" and "high-card bet" or "high-card other", "POST", path, who, body)
    end
  end
end

-- An audit reader, as fast as it is answered: the feed (from the start, by player, by table
-- and type, by time), reports as JSON and CSV, recall, statements and a wallet as of now, over
-- the players' tables and wallets (the wait after a 429 is delay()'s).
local function reader_script(me)
  local key, players = me.operator_key, me.players
  while true do
    local p = players[math.random(#players)]
    local t = os.time()
    local day, next_day = os.date("!%Y-%m-%d", t), os.date("!%Y-%m-%d", t + 86400)
    local moment = os.date("!%Y-%m-%dT%H:%M:%SZ", t - 5)
    local reads = {
      { "feed", "/events?after=" .. ({ 0, 100, 1000 })[math.random(3)] .. "&limit=100" },
      { "feed", "/events?player=" .. p.player_id .. "&limit=100" },
      { "feed", "/events?table=" .. p.table_id .. "&type=Settled&limit=100" },
      { "feed", "/events?since=" .. moment .. "&limit=100" },
      { "report", "/reports?since=" .. day .. "&until=" .. next_day .. "&group_by="
        .. ({ "player", "table", "variant" })[math.random(3)] },
      { "report", "/reports?since=" .. day .. "&until=" .. next_day .. "&format=csv" },
      { "recall", "/players/" .. p.player_id .. "/recall" },
      { "statement", "/wallets/" .. p.wallet_id .. "/statement" },
      { "as-of", "/wallets/" .. p.wallet_id .. "/as-of?at=" .. moment },
    }
    local read = reads[math.random(#reads)]
    ask("audit " .. read[1], "GET", read[2], key)
  end
end

local SCRIPTS = { live = live_script, casino = casino_script, ["high-card"] = high_card_script,
                  reader = reader_script }

-- The main thread: give each wrk thread its client, and merge what they counted at the end.
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("client_index", #threads)
end

-- A wrk thread: one client on one connection.
local me, co, current, started, due, interval
local key_prefix, key_count, last_status = "", 0, nil
-- What a thread counted, read by done() with thread:get, which copies flat tables only (a
-- table in a table crashes wrk 4.1): each latency and its kind, and "KIND\tSTATUS" -> count.
latencies, latency_kinds, counts = {}, {}, {}

local function resume(...)
  local ok, step = coroutine.resume(co, ...)
  if not ok then error("mix.lua: the " .. me.script .. " script failed: " .. tostring(step)) end
  return step
end

function init(args)
  me = spec.clients[client_index]
  if not me then error("mix.lua: no client in the spec for thread " .. tostring(client_index)) end
  math.randomseed(me.seed)
  local random = assert(io.open("/dev/urandom", "rb"))
  key_prefix = random:read(8):gsub(".", function(c) return string.format("%02x", c:byte()) end)
  random:close()
  if me.rate then
    interval = 1 / me.rate
    due = spec.start_at + (me.phase or 0) * interval
  end
  co = coroutine.create(SCRIPTS[me.script])
  current = resume(me)
end

function request()
  local t = now()
  started = due and math.min(due, t) or t
  local headers = { Accept = "application/json" }
  if current.key then headers["Authorization"] = "Bearer " .. current.key end
  local body
  if current.method == "POST" then
    key_count = key_count + 1
    headers["Idempotency-Key"] = key_prefix .. "-" .. key_count
    headers["Content-Type"] = "application/json"
    body = json.encode(current.body or {})
  end
  return wrk.format(current.method, current.path, headers, body)
end

function response(status, headers, body)
  local t = now()
  local kind = current.kind
  if started >= counted_from and started < end_at then
    local counted = kind .. "\t" .. status
    counts[counted] = (counts[counted] or 0) + 1
    if status < 500 and status ~= 429 then -- busy (the audit gate) and failures: apart
      local n = #latencies + 1
      latencies[n], latency_kinds[n] = t - started, kind
    end
  end
  local answer
  if current.parse and body and #body > 0 then
    local ok, value = pcall(json.decode, body)
    if ok then answer = value end
  end
  if due then due = due + interval end
  last_status = status
  current = resume(status, answer)
end

if spec.delay then
  -- Defined only where it is needed: wrk calls it before every request once it exists.
  function delay()
    if due then
      local wait = due - now()
      return wait > 0 and math.floor(wait * 1000) or 0
    end
    return last_status == 429 and 200 or 0
  end
end

-- The bench's percentile: the value at index floor(share * n) of the sorted values (0-based).
local function percentile(ordered, share)
  local n = #ordered
  if n == 0 then return nil end
  return ordered[math.min(n, math.floor(share * n) + 1)]
end

local function stats(values)
  table.sort(values)
  local p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
  return { count = #values, p50_ms = p50 and 1000 * p50, p99_ms = p99 and 1000 * p99 }
end

function done(summary, latency, requests)
  local by_kind, by_status, records = {}, {}, 0
  for _, thread in ipairs(threads) do
    local values, of = thread:get("latencies"), thread:get("latency_kinds")
    for i, v in ipairs(values) do
      local into = by_kind[of[i]] or {}
      by_kind[of[i]] = into
      into[#into + 1] = v
    end
    for counted, n in pairs(thread:get("counts")) do
      local kind, status = counted:match("^(.*)\t(%d+)$")
      local into = by_status[kind] or {}
      by_status[kind] = into
      into[status] = (into[status] or 0) + n
      records = records + n
    end
  end
  local groups = { all = {} }
  for name in pairs(spec.groups or {}) do groups[name] = {} end
  local member = {}
  for name, kinds in pairs(spec.groups or {}) do
    for _, kind in ipairs(kinds) do
      member[kind] = member[kind] or {}
      member[kind][#member[kind] + 1] = name
    end
  end
  for kind, values in pairs(by_kind) do
    for _, v in ipairs(values) do
      local all = groups.all
      all[#all + 1] = v
      for _, name in ipairs(member[kind] or {}) do
        local into = groups[name]
        into[#into + 1] = v
      end
    end
  end
  local kinds = {}
  for kind, counts in pairs(by_status) do
    kinds[kind] = stats(by_kind[kind] or {})
    kinds[kind].statuses = counts
  end
  local pooled = {}
  for name, values in pairs(groups) do pooled[name] = stats(values) end
  local errors = summary.errors
  local result = {
    kinds = kinds, groups = pooled, records = records, threads = #threads,
    wrk = {
      requests = summary.requests, duration_s = summary.duration / 1e6, bytes = summary.bytes,
      errors = { connect = errors.connect, read = errors.read, write = errors.write,
                 status = errors.status, timeout = errors.timeout },
      -- wrk's own histogram: every request from when wrk wrote it, warm-up included
      latency_p50_ms = latency:percentile(50) / 1000,
      latency_p99_ms = latency:percentile(99) / 1000,
    },
  }
  local file = assert(io.open(spec.out, "wb"))
  file:write(json.encode(result), "\n")
  file:close()
  io.write(string.format("counted %d answers in [%.1f s, %.1f s) of the run:\n", records,
                         spec.warmup, spec.seconds))
  local names = {}
  for kind in pairs(kinds) do names[#names + 1] = kind end
  table.sort(names)
  for _, kind in ipairs(names) do
    local k = kinds[kind]
    local parts = {}
    for status, n in pairs(k.statuses) do parts[#parts + 1] = status .. ": " .. n end
    table.sort(parts)
    io.write(string.format("  %-16s %7d  p50 %8.2f ms  p99 %8.2f ms  (%s)\n", kind, k.count,
                           k.p50_ms or 0, k.p99_ms or 0, table.concat(parts, ", ")))
  end
end

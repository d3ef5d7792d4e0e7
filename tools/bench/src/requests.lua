-- The wrk script of the events benchmark (tools/bench/src/wrk.mjs runs it). Arguments after `--`:
-- the config file (a Lua table written by wrk.mjs: tokens, Contacts, organizations, payload) and
-- the measurement's tag. Every request takes the next access token (many keys, so no key's
-- write budget caps the rate) and the next Contact, and every Event a dedupKey of its own:
-- "<tag>.<thread>.<n>[.<i>]", which the publish-lag consumer reads the measurement back from.
-- done() prints one line, "WRK_RESULT {json}", with the counts per status and the latency.

local threads = {}
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("thread_id", next_thread)
  table.insert(threads, thread)
end

local cfg, tag, kind, n_events, route
local counter = 0
local headers = {}
-- Per-thread tallies, read by done() through thread:get.
statuses = {}
accepted_events = 0

-- Pieces of one Event's JSON before and after its dedupKey, one per Contact (or organization).
local before = {}
local after = '"}'

local function json_event_prefix(identity)
  return '{' .. identity .. ',"eventName":"' .. cfg.eventName .. '","occurredAt":"'
    .. cfg.occurredAt .. '","properties":' .. cfg.properties .. ',"dedupKey":"'
end

function init(args)
  cfg = dofile(args[1])
  tag = args[2] .. "." .. thread_id
  kind = cfg.kind
  n_events = cfg.events or 1
  route = cfg.route
  headers["Host"] = cfg.host
  local list = {}
  if route == "by-organization" then
    for i, org in ipairs(cfg.organizations) do
      list[i] = json_event_prefix('"organizationExternalId":"' .. org .. '"')
    end
  elseif kind == "events" then
    for i, c in ipairs(cfg.contacts) do
      if route == "by-contact-id" then
        list[i] = json_event_prefix('"contactId":"' .. c.id .. '"')
      elseif route == "by-external-id" then
        list[i] = json_event_prefix('"contactExternalId":"' .. c.externalId .. '"')
      else
        list[i] = json_event_prefix('"contactEmail":"' .. c.email .. '"')
      end
    end
  end
  before = list
  -- Threads start at different places in the rotations.
  counter = (thread_id - 1) * 7919
end

local function pick(list)
  return list[counter % #list + 1]
end

local parts = {}

function request()
  counter = counter + 1
  headers["Authorization"] = "Bearer " .. pick(cfg.tokens)
  if kind == "events" then
    headers["Content-Type"] = "application/json"
    local key = tag .. "." .. counter
    local body
    if n_events == 1 then
      body = pick(before) .. key .. after
    else
      -- An array: consecutive Contacts, "<key>.<i>" as each Event's dedupKey.
      local k = 0
      for i = 1, n_events do
        if i > 1 then
          k = k + 1
          parts[k] = ","
        end
        k = k + 1
        parts[k] = before[(counter + i) % #before + 1]
        k = k + 1
        parts[k] = key .. "." .. i
        k = k + 1
        parts[k] = after
      end
      body = "[" .. table.concat(parts, "", 1, k) .. "]"
    end
    return wrk.format("POST", "/v1/events/" .. route, headers, body)
  end
  local contact = pick(cfg.contacts)
  local path = "/v1/contacts/" .. contact.externalId
  if kind == "upsert" then
    headers["Content-Type"] = "application/json"
    -- A new name each time, so every upsert really writes.
    local body = '{"email":"' .. contact.email .. '","name":"bench ' .. tag .. "." .. counter .. '"}'
    return wrk.format("PUT", path, headers, body)
  end
  headers["Content-Type"] = nil
  return wrk.format("GET", path, headers, nil)
end

function response(status, _, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 202 then
    local n = tonumber(string.match(body or "", '"accepted":(%d+)'))
    if n then
      accepted_events = accepted_events + n
    end
  end
end

local function to_json(t)
  local items = {}
  for k, v in pairs(t) do
    local value
    if type(v) == "table" then
      value = to_json(v)
    else
      value = tostring(v)
    end
    table.insert(items, '"' .. tostring(k) .. '":' .. value)
  end
  return "{" .. table.concat(items, ",") .. "}"
end

function done(summary, latency, _)
  local all = {}
  local accepted = 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      all[status] = (all[status] or 0) + n
    end
    accepted = accepted + thread:get("accepted_events")
  end
  local result = {
    durationUs = summary.duration,
    requests = summary.requests,
    bytes = summary.bytes,
    socketErrors = summary.errors,
    statuses = all,
    acceptedEvents = accepted,
    latencyUs = {
      p50 = latency:percentile(50),
      p90 = latency:percentile(90),
      p99 = latency:percentile(99),
      max = latency.max,
      mean = latency.mean,
    },
  }
  io.write("WRK_RESULT " .. to_json(result) .. "\n")
end

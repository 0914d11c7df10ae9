-- A small JSON encoder and decoder for the bench's wrk scripts (wrk's LuaJIT has none).
--
-- decode(text): objects become tables with string keys, arrays tables with keys 1..n; null
-- becomes nil (an object's key is then absent, as the scripts read them). Raises on bad input.
-- encode(value): a table with keys 1..n (and no others) is an array, any other table an object
-- (so an empty table is {}); numbers that are integers are written without a fraction.

local json = {}

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
                  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function is_array(t)
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

function json.encode(value)
  local kind = type(value)
  if kind == "nil" then
    return "null"
  elseif kind == "boolean" then
    return value and "true" or "false"
  elseif kind == "number" then
    if value ~= value or value == math.huge or value == -math.huge then return "null" end
    if value == math.floor(value) and math.abs(value) < 2^53 then
      return string.format("%d", value)
    end
    return string.format("%.17g", value)
  elseif kind == "string" then
    return encode_string(value)
  elseif kind == "table" then
    local parts = {}
    if is_array(value) then
      for i = 1, #value do parts[i] = json.encode(value[i]) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(value) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for i, k in ipairs(keys) do
      local v = value[k]
      if v == nil then v = value[tonumber(k)] end
      parts[i] = encode_string(k) .. ":" .. json.encode(v)
    end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  error("json.encode: cannot encode a " .. kind)
end

local function fail(text, at, what)
  error(string.format("json.decode: %s at %d", what, at), 0)
end

local function skip(text, at)
  return text:find("[^ \t\r\n]", at) or #text + 1
end

local decode_value

local function decode_string(text, at)
  -- at is just past the opening quote
  local parts = {}
  local i = at
  while true do
    local j = text:find('["\\]', i)
    if not j then fail(text, at, "unterminated string") end
    parts[#parts + 1] = text:sub(i, j - 1)
    if text:sub(j, j) == '"' then
      return table.concat(parts), j + 1
    end
    local c = text:sub(j + 1, j + 1)
    if c == "u" then
      local code = tonumber(text:sub(j + 2, j + 5), 16)
      if not code then fail(text, j, "bad \\u escape") end
      local next_at = j + 6
      if code >= 0xD800 and code <= 0xDBFF and text:sub(next_at, next_at + 1) == "\\u" then
        local low = tonumber(text:sub(next_at + 2, next_at + 5), 16)
        if low and low >= 0xDC00 and low <= 0xDFFF then
          code = 0x10000 + (code - 0xD800) * 0x400 + (low - 0xDC00)
          next_at = next_at + 6
        end
      end
      if code < 0x80 then
        parts[#parts + 1] = string.char(code)
      elseif code < 0x800 then
        parts[#parts + 1] = string.char(0xC0 + math.floor(code / 0x40), 0x80 + code % 0x40)
      elseif code < 0x10000 then
        parts[#parts + 1] = string.char(0xE0 + math.floor(code / 0x1000),
                                        0x80 + math.floor(code / 0x40) % 0x40, 0x80 + code % 0x40)
      else
        parts[#parts + 1] = string.char(0xF0 + math.floor(code / 0x40000),
                                        0x80 + math.floor(code / 0x1000) % 0x40,
                                        0x80 + math.floor(code / 0x40) % 0x40, 0x80 + code % 0x40)
      end
      i = next_at
    else
      local map = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
      parts[#parts + 1] = map[c] or c
      i = j + 2
    end
  end
end

function decode_value(text, at)
  at = skip(text, at)
  local c = text:sub(at, at)
  if c == "{" then
    local object = {}
    at = skip(text, at + 1)
    if text:sub(at, at) == "}" then return object, at + 1 end
    while true do
      if text:sub(at, at) ~= '"' then fail(text, at, "expected a key") end
      local key
      key, at = decode_string(text, at + 1)
      at = skip(text, at)
      if text:sub(at, at) ~= ":" then fail(text, at, "expected ':'") end
      object[key], at = decode_value(text, at + 1)
      at = skip(text, at)
      local d = text:sub(at, at)
      if d == "}" then return object, at + 1 end
      if d ~= "," then fail(text, at, "expected ',' or '}'") end
      at = skip(text, at + 1)
    end
  elseif c == "[" then
    local array, n = {}, 0
    at = skip(text, at + 1)
    if text:sub(at, at) == "]" then return array, at + 1 end
    while true do
      n = n + 1
      array[n], at = decode_value(text, at)
      at = skip(text, at)
      local d = text:sub(at, at)
      if d == "]" then return array, at + 1 end
      if d ~= "," then fail(text, at, "expected ',' or ']'") end
      at = at + 1
    end
  elseif c == '"' then
    return decode_string(text, at + 1)
  elseif text:sub(at, at + 3) == "true" then
    return true, at + 4
  elseif text:sub(at, at + 4) == "false" then
    return false, at + 5
  elseif text:sub(at, at + 3) == "null" then
    return nil, at + 4
  end
  local number = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", at)
  if not number or number == "" or not tonumber(number) then fail(text, at, "unexpected text") end
  return tonumber(number), at + #number
end

function json.decode(text)
  local value, at = decode_value(text, 1)
  at = skip(text, at)
  if at <= #text then fail(text, at, "text after the value") end
  return value
end

return json

-- strings.lua: string processing in Lua for coprof's real workloads (run
-- by workloads/real/luarun): pattern matching, string interning, buffers
-- built with table.concat, string.format and gsub over a text file.
--
--   luarun strings.lua FILE [PASSES]   (default PASSES = 1)
--
-- Prints the word and line counts, the ten most frequent words (ties
-- broken by the word, so the order is deterministic) and a checksum.

local path, passes = arg[1], tonumber(arg[2] or "1")
if not path then error("usage: luarun strings.lua FILE [PASSES]") end
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()

local MOD = 2147483647
local function hash(s, h)
  for i = 1, #s do h = (h * 131 + s:byte(i)) % MOD end
  return h
end

local freq, words, lines, list
for _ = 1, passes do
  freq, words, list = {}, 0, {}
  for w in text:gmatch("%a+") do
    w = w:lower()
    words = words + 1
    local c = freq[w]
    if c then
      freq[w] = c + 1
    else
      freq[w] = 1
      list[#list + 1] = w
    end
  end
  lines = select(2, text:gsub("\n", "\n"))
end
print(string.format("%s: %d bytes, %d lines, %d words, %d distinct", path, #text, lines, words, #list))

table.sort(list, function(a, b)
  if freq[a] ~= freq[b] then return freq[a] > freq[b] end
  return a < b
end)
for i = 1, math.min(10, #list) do print(string.format("%2d %-12s %d", i, list[i], freq[list[i]])) end

-- Rewrite every sentence: capitalise long words, reverse short ones, and
-- collect the result in a buffer.
local out, h = {}, 7
for sentence in text:gmatch("[^.!?]+[.!?]") do
  local s = sentence:gsub("%a+", function(w)
    if #w > 6 then return w:sub(1, 1):upper() .. w:sub(2) end
    if #w < 3 then return w:reverse() end
    return nil
  end)
  out[#out + 1] = string.format("[%d]%s", #s, s:gsub("%s+", " "))
  if #out == 512 then
    h = hash(table.concat(out), h)
    out = {}
  end
end
h = hash(table.concat(out), h)

-- Distinct words by length, with their total frequency.
local bylen = {}
for _, w in ipairs(list) do bylen[#w] = (bylen[#w] or 0) + freq[w] end
local parts = {}
for len = 1, 30 do
  if bylen[len] then parts[#parts + 1] = len .. ":" .. bylen[len] end
end
print("by length " .. table.concat(parts, " "))
print(string.format("checksum %d", hash(table.concat(parts), h)))

-- tables.lua: a table-heavy Lua benchmark for coprof's real workloads
-- (run by workloads/real/luarun). Exercises Lua's array and hash parts,
-- rehashing, table.sort, closures and the garbage collector.
--
--   luarun tables.lua [N]   (default N = 200000)
--
-- Prints one line per phase and a final checksum; every result depends
-- only on N (no pairs() order, no time, no addresses).

local N = tonumber(arg[1] or "200000")
if not N or N < 1 then error("N must be a positive number, got " .. tostring(arg[1])) end
N = math.floor(N)

local MOD = 2147483647
local function mix(h, v) return (h * 31 + v) % MOD end

-- A linear congruential generator, so the data are the same everywhere.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

-- 1. Sieve of Eratosthenes in the array part.
local sieve, primes = {}, 0
for i = 2, N do sieve[i] = true end
for i = 2, N do
  if sieve[i] then
    primes = primes + 1
    for j = i * i, N, i do sieve[j] = false end
  end
end
print(string.format("sieve: %d primes up to %d", primes, N))

-- 2. Hash part: count keys drawn with many repeats, string and integer keys.
local counts, skeys = {}, {}
for _ = 1, N do
  local k = rand(N // 4 + 1)
  counts[k * 7919] = (counts[k * 7919] or 0) + 1
  local s = "k" .. (k % 5000)
  skeys[s] = (skeys[s] or 0) + 1
end
local h, distinct = 0, 0
for k = 0, N // 4 do
  local c = counts[k * 7919]
  if c then
    distinct = distinct + 1
    h = mix(h, c)
  end
end
for k = 0, 4999 do h = mix(h, skeys["k" .. k] or 0) end
print(string.format("hash: %d distinct keys, checksum %d", distinct, h))

-- 3. Sort records by two fields with a comparison closure.
local recs = {}
for i = 1, N // 2 do recs[i] = { key = rand(1000), id = i } end
table.sort(recs, function(a, b)
  if a.key ~= b.key then return a.key < b.key end
  return a.id < b.id
end)
local sh = 0
for i = 1, #recs, 97 do sh = mix(sh, recs[i].id) end
print(string.format("sort: %d records, checksum %d", #recs, sh))

-- 4. Build and walk a binary tree of tables (allocation, GC pressure).
local function make(depth)
  if depth == 0 then return { v = rand(100) } end
  return { l = make(depth - 1), r = make(depth - 1), v = rand(100) }
end
local function sum(t)
  if not t.l then return t.v end
  return t.v + sum(t.l) + sum(t.r)
end
local depth = 1
while (1 << (depth + 1)) < N // 8 do depth = depth + 1 end
local total = 0
for _ = 1, 4 do total = total + sum(make(depth)) end
print(string.format("trees: depth %d, sum %d", depth, total))

print(string.format("checksum %d", mix(mix(mix(primes, h), sh), total)))

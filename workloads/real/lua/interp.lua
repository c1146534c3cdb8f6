-- interp.lua: an interpreter inside the interpreter, for coprof's real
-- workloads (run by workloads/real/luarun). It assembles a small program
-- for a toy stack machine from text, then runs it with a dispatch loop:
-- the shape of a bytecode VM (decode, dispatch, operand stack), one level
-- above Lua's own.
--
--   luarun interp.lua [N]   (default N = 30000)
--
-- The toy program sums the Collatz sequence lengths of 1..N and counts the
-- primes below N by trial division; prints both, the number of toy
-- instructions executed and a checksum.

local N = tonumber(arg[1] or "30000")
if not N or N < 1 then error("N must be a positive number, got " .. tostring(arg[1])) end
N = math.floor(N)

local source = [[
        push 0
        store total
        push 1
        store i
outer:  load i
        load n
        gt
        jnz primes
        load i
        store x
        push 0
        store steps
inner:  load x
        push 1
        eq
        jnz done
        load x
        push 2
        mod
        jz even
        load x
        push 3
        mul
        push 1
        add
        store x
        jmp count
even:   load x
        push 2
        div
        store x
count:  load steps
        push 1
        add
        store steps
        jmp inner
done:   load total
        load steps
        add
        store total
        load i
        push 1
        add
        store i
        jmp outer
primes: push 0
        store count
        push 2
        store p
ploop:  load p
        load n
        lt
        jz end
        push 2
        store d
dloop:  load d
        load d
        mul
        load p
        gt
        jnz isprime
        load p
        load d
        mod
        jz next
        load d
        push 1
        add
        store d
        jmp dloop
isprime: load count
        push 1
        add
        store count
next:   load p
        push 1
        add
        store p
        jmp ploop
end:    load total
        print
        load count
        print
        halt
]]

-- Assembler: two passes, labels to addresses, variable names to slots.
local function assemble(src)
  local code, labels, vars, nvars, fixups = {}, {}, {}, 0, {}
  for line in src:gmatch("[^\n]+") do
    local label, rest = line:match("^%s*([%a_][%w_]*):%s*(.*)$")
    if label then
      labels[label] = #code // 2 + 1
      line = rest
    end
    local op, operand = line:match("^%s*(%a+)%s*([%w_]*)")
    if op then
      local v = 0
      if op == "push" then
        v = tonumber(operand)
      elseif op == "load" or op == "store" then
        if not vars[operand] then
          nvars = nvars + 1
          vars[operand] = nvars
        end
        v = vars[operand]
      elseif op == "jmp" or op == "jz" or op == "jnz" then
        fixups[#code + 2] = operand
      end
      code[#code + 1] = op
      code[#code + 1] = v
    end
  end
  for at, name in pairs(fixups) do
    code[at] = labels[name] or error("undefined label " .. name)
  end
  return code, vars, nvars
end

local function run(code, vars, nvars, out)
  local mem = {}
  for i = 1, nvars do mem[i] = 0 end
  mem[vars.n] = N
  local stack, sp, pc, executed = {}, 0, 1, 0
  while true do
    local op, v = code[2 * pc - 1], code[2 * pc]
    pc = pc + 1
    executed = executed + 1
    if op == "push" then
      sp = sp + 1; stack[sp] = v
    elseif op == "load" then
      sp = sp + 1; stack[sp] = mem[v]
    elseif op == "store" then
      mem[v] = stack[sp]; sp = sp - 1
    elseif op == "add" then
      sp = sp - 1; stack[sp] = stack[sp] + stack[sp + 1]
    elseif op == "mul" then
      sp = sp - 1; stack[sp] = stack[sp] * stack[sp + 1]
    elseif op == "div" then
      sp = sp - 1; stack[sp] = stack[sp] // stack[sp + 1]
    elseif op == "mod" then
      sp = sp - 1; stack[sp] = stack[sp] % stack[sp + 1]
    elseif op == "eq" then
      sp = sp - 1; stack[sp] = (stack[sp] == stack[sp + 1]) and 1 or 0
    elseif op == "lt" then
      sp = sp - 1; stack[sp] = (stack[sp] < stack[sp + 1]) and 1 or 0
    elseif op == "gt" then
      sp = sp - 1; stack[sp] = (stack[sp] > stack[sp + 1]) and 1 or 0
    elseif op == "jmp" then
      pc = v
    elseif op == "jz" then
      if stack[sp] == 0 then pc = v end
      sp = sp - 1
    elseif op == "jnz" then
      if stack[sp] ~= 0 then pc = v end
      sp = sp - 1
    elseif op == "print" then
      out[#out + 1] = stack[sp]; sp = sp - 1
    elseif op == "halt" then
      return executed
    else
      error("bad opcode " .. tostring(op) .. " at " .. (pc - 1))
    end
  end
end

local code, vars, nvars = assemble(source)
local out = {}
local executed = run(code, vars, nvars, out)
print(string.format("collatz steps 1..%d: %d", N, out[1]))
print(string.format("primes below %d: %d", N, out[2]))
print(string.format("toy instructions executed: %d", executed))
print(string.format("checksum %d", (out[1] * 31 + out[2] * 7 + executed) % 2147483647))

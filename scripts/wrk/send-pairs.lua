-- wrk script: POST /v1/messages from a random user to another random user each time (tokens
-- from $BENCH_TOKENS, one a line, user uN on line N+1), so sends spread over every pair's
-- conversation: with U users, U(U-1)/2 conversations, each written now and then, as a chat
-- service's are (send.lua keeps one conversation a thread). Muids and the random pairs start
-- from /dev/urandom each run (LuaJIT's math.random alone repeats from one run to the next).
local tokens = {}
local counter = 0

function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
    local random = assert(io.open("/dev/urandom", "rb"))
    run = random:read(8):gsub(".", function(c) return string.format("%02x", c:byte()) end)
    local seed = 0
    for byte in random:read(4):gmatch(".") do seed = seed * 256 + byte:byte() end
    random:close()
    math.randomseed(seed)
    sent = 0
end

function request()
    sent = sent + 1
    local from = math.random(#tokens)
    local to = math.random(#tokens - 1)
    if to >= from then to = to + 1 end
    local body = string.format('{"muid":"p%s-%d-%d","receiver":"u%d","receiverType":"user","type":"text","category":"message","text":"bench %d"}', run, id, sent, to - 1, sent)
    return wrk.format("POST", "/v1/messages", {["Authorization"] = "Bearer " .. tokens[from], ["Content-Type"] = "application/json"}, body)
end

-- wrk script: POST /v1/messages with a fresh muid each time, as the users in $BENCH_TOKENS (one
-- token per line, user u<N> on line N+1). Each wrk thread sends as its own user to the next
-- user, so sends spread over conversations as a chat service's do. With BENCH_PAIRS=random
-- each send goes from a random user to another random user instead: with U users, U(U-1)/2
-- conversations, each written now and then. A muid starts with 8 bytes from /dev/urandom drawn
-- per thread and run, and the random pairs are seeded from it too: LuaJIT's math.random starts
-- from the same seed in every run, so muids made with it alone repeat from one wrk run to the
-- next against the same chatd, and chatd answers a repeated muid with the original message
-- without writing (a tenth of a send's work).
local tokens = {}
local counter = 0

function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
    local index = ((id - 1) % #tokens) + 1
    token = tokens[index]
    receiver = "u" .. (index % #tokens)
    randomPairs = os.getenv("BENCH_PAIRS") == "random"
    sent = 0
    local random = assert(io.open("/dev/urandom", "rb"))
    local bytes = random:read(8)
    random:close()
    run = bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end)
    local seed = 0
    for byte in bytes:sub(1, 4):gmatch(".") do seed = seed * 256 + byte:byte() end
    math.randomseed(seed)
end

function request()
    sent = sent + 1
    local from, to = token, receiver
    if randomPairs then
        local sender = math.random(#tokens)
        local other = math.random(#tokens - 1)
        if other >= sender then other = other + 1 end
        from, to = tokens[sender], "u" .. (other - 1)
    end
    local body = string.format('{"muid":"w%s-%d-%d","receiver":"%s","receiverType":"user","type":"text","category":"message","text":"bench %d"}', run, id, sent, to, sent)
    return wrk.format("POST", "/v1/messages", {["Authorization"] = "Bearer " .. from, ["Content-Type"] = "application/json"}, body)
end

-- wrk script: POST /v1/messages with a fresh muid each time. Each wrk thread sends as its own
-- user (tokens from $BENCH_TOKENS, one per line) to the next user, so sends spread over
-- conversations as a chat service's do. A muid starts with 8 bytes from /dev/urandom drawn per
-- thread and run: LuaJIT's math.random starts from the same seed in every run, so muids made
-- with it alone repeat from one wrk run to the next against the same chatd, and chatd answers
-- a repeated muid with the original message without writing (a tenth of a send's work).
local tokens = {}
local counter = 0
local threads = {}

function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
    table.insert(threads, thread)
end

function init(args)
    for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
    local index = ((id - 1) % #tokens) + 1
    token = tokens[index]
    receiver = "u" .. (index % #tokens)
    sent = 0
    local random = assert(io.open("/dev/urandom", "rb"))
    run = random:read(8):gsub(".", function(c) return string.format("%02x", c:byte()) end)
    random:close()
end

function request()
    sent = sent + 1
    local body = string.format('{"muid":"w%s-%d-%d","receiver":"%s","receiverType":"user","type":"text","category":"message","text":"bench %d"}', run, id, sent, receiver, sent)
    return wrk.format("POST", "/v1/messages", {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
end


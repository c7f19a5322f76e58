-- wrk script: POST /v1/messages with a fresh muid each time. Each wrk thread sends as its own
-- user (tokens from $BENCH_TOKENS, one per line) to the next user, so sends spread over
-- conversations as a chat service's do.
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
end

function request()
    sent = sent + 1
    local body = string.format('{"muid":"w%d-%d-%d","receiver":"%s","receiverType":"user","type":"text","category":"message","text":"bench %d"}', id, sent, math.random(1, 1e9), receiver, sent)
    return wrk.format("POST", "/v1/messages", {["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json"}, body)
end


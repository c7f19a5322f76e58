-- wrk script: GETs as the users in $BENCH_TOKENS (one token per line, user u<N> on line N+1),
-- one user per wrk thread. $BENCH_READ picks the path:
--   history: the newest 30 messages of the thread's conversation with the next user
--   list:    the thread's conversation list, 30 a page
local counter = 0

function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    local tokens = {}
    for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
    local index = ((id - 1) % #tokens) + 1
    token = tokens[index]
    if os.getenv("BENCH_READ") == "history" then
        local me, peer = "u" .. (index - 1), "u" .. (index % #tokens)
        local first, second = me, peer
        if peer < me then first, second = peer, me end
        path = "/v1/conversations/" .. first .. "~" .. second .. "/messages?limit=30"
    else
        path = "/v1/conversations?limit=30"
    end
end

function request()
    return wrk.format("GET", path, {["Authorization"] = "Bearer " .. token})
end

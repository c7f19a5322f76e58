-- wrk script: GETs as the users in $BENCH_TOKENS (one token per line, user u<N> on line N+1),
-- one user per wrk thread. $BENCH_READ picks the path:
--   history: the newest 30 messages of the thread's conversation with the next user
--   list:    the thread's conversation list, 30 a page
-- The request is the same every time, so it is set once here and no request() is defined:
-- wrk then sends it as built, as it does the health baseline's (its SCRIPTING notes say a
-- request built per call is expensive).
local counter = 0

function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end

function init(args)
    local tokens = {}
    for line in io.lines(os.getenv("BENCH_TOKENS")) do table.insert(tokens, line) end
    local index = ((id - 1) % #tokens) + 1
    if os.getenv("BENCH_READ") == "history" then
        local me, peer = "u" .. (index - 1), "u" .. (index % #tokens)
        local first, second = me, peer
        if peer < me then first, second = peer, me end
        wrk.path = "/v1/conversations/" .. first .. "~" .. second .. "/messages?limit=30"
    else
        wrk.path = "/v1/conversations?limit=30"
    end
    wrk.headers["Authorization"] = "Bearer " .. tokens[index]
end

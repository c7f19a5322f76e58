#!/usr/bin/env python3
"""What a replay costs in the two data models of bench-send-lean.py: per-user positions against
fan-out on read.

Writes SENDS one-to-one changes among 50 users, SHARE of them to or from u0 (so u0 has a
backlog of several pages), into the changelog of each model, then replays u0's changes from the
start in pages of 1,000 through Python's `sqlite3` and prints the best of five replays' time a
page. With positions a page is a range of u0's inbox; fanned out on read it is u0's
conversations' changes after the cursor, which SQLite gathers from each conversation's index and
sorts whole before it can stop at 1,000 (the plan is printed).

    scripts/bench-replay-lean.py [SENDS] [SHARE]
"""
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

sends = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.35
random.seed(1)
users = ["u%d" % index for index in range(50)]


def pair():
    if random.random() >= share:
        return random.sample(users[1:], 2)
    peer = random.choice(users[1:])
    return ("u0", peer) if random.random() < 0.5 else (peer, "u0")


pairs = [pair() for _ in range(sends)]
body = ('{"id":%d,"muid":"m%d","conversationId":"%s","sender":"%s","receiver":"%s","receiverType":"user",'
        '"category":"message","type":"text","text":"hello %d","sentAt":%d,"updatedAt":%d}')
pages_query = {
    "positions": "SELECT i.pts, c.payload FROM inbox i JOIN changes c ON c.id = i.change "
                 "WHERE i.uid = ? AND i.pts > ? ORDER BY i.pts LIMIT 1000",
    "read": "SELECT c.id, c.payload FROM changes c "
            "WHERE c.conversation_id IN (SELECT conversation_id FROM members WHERE uid = ?) AND c.id > ? "
            "ORDER BY c.id LIMIT 1000",
}


def build(db, model):
    """The changelog of `pairs` in `model`, in one transaction."""
    db.executescript("""
        CREATE TABLE changes(id INTEGER PRIMARY KEY, conversation_id TEXT, payload TEXT, at INTEGER);
        CREATE TABLE members(conversation_id TEXT, uid TEXT, PRIMARY KEY(conversation_id, uid)) WITHOUT ROWID;
        CREATE INDEX members_by_user ON members(uid);
    """)
    if model == "positions":
        db.executescript("""
            CREATE TABLE heads(uid TEXT PRIMARY KEY, pts INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE inbox(uid TEXT, pts INTEGER, change INTEGER, PRIMARY KEY(uid, pts)) WITHOUT ROWID;
        """)
    else:
        db.execute("CREATE INDEX changes_by_conversation ON changes(conversation_id, id)")
    db.execute("BEGIN")
    for index, a in enumerate(users):
        if model == "positions":
            db.execute("INSERT INTO heads VALUES (?, 0)", (a,))
        for b in users[index + 1:]:
            db.executemany("INSERT INTO members VALUES (?, ?)", [(a + ":" + b, a), (a + ":" + b, b)])
    for sent, (a, b) in enumerate(pairs, 1):
        conversation = ":".join(sorted([a, b], key=users.index))
        change = db.execute("INSERT INTO changes(conversation_id, payload, at) VALUES (?, ?, ?)",
                            (conversation, body % (sent, sent, conversation, a, b, sent, sent, sent), sent)).lastrowid
        if model == "positions":
            for uid in (a, b):
                db.execute("UPDATE heads SET pts = pts + 1 WHERE uid = ?", (uid,))
                db.execute("INSERT INTO inbox VALUES (?, (SELECT pts FROM heads WHERE uid = ?), ?)", (uid, uid, change))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def replay(db, model):
    """u0's changes from the start in pages of 1,000: (ms a page, pages, changes)."""
    cursor, pages, changes = 0, 0, 0
    begun = time.perf_counter_ns()
    while True:
        rows = db.execute(pages_query[model], ("u0", cursor)).fetchall()
        if not rows:
            break
        pages, changes, cursor = pages + 1, changes + len(rows), rows[-1][0]
        if len(rows) < 1000:
            break
    return (time.perf_counter_ns() - begun) / 1e6 / pages, pages, changes


for model in ("positions", "read"):
    data = tempfile.mkdtemp(prefix="replay-lean.")
    db = sqlite3.connect(os.path.join(data, "lean.sqlite"), isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "cache_size = -32000"):
        db.execute("PRAGMA " + pragma)
    build(db, model)
    best, pages, changes = min(replay(db, model) for _ in range(5))
    plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + pages_query[model], ("u0", 0))]
    print("%-9s u0's %d changes in %d pages: %.2f ms a page (best of 5); plan: %s"
          % (model, changes, pages, best, "; ".join(plan)))
    db.close()
    shutil.rmtree(data)

#!/usr/bin/env python3
"""What a replay costs in the two data models of `lean_models.py`: per-user positions against
fan-out on read.

Writes SENDS one-to-one sends among 50 users, SHARE of them to or from u0 (so u0 has a backlog
of several pages), in each model, then replays u0's changes from the start in pages of 1,000
through Python's `sqlite3` and prints the best of five replays' time a page. With positions a
page is a range of u0's inbox; fanned out on read it is u0's conversations' changes after the
cursor, which SQLite gathers from each conversation's index and sorts whole before it can stop
at 1,000 (the plan is printed).

    scripts/bench-replay-lean.py [SENDS] [SHARE]
"""
import random
import shutil
import sys
import time

from lean_models import MODELS, USERS, create, open_database, send

sends = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.35
random.seed(1)


def pair():
    if random.random() >= share:
        return random.sample(USERS[1:], 2)
    peer = random.choice(USERS[1:])
    return ("u0", peer) if random.random() < 0.5 else (peer, "u0")


pairs = [pair() for _ in range(sends)]
pages_query = {
    "positions": "SELECT i.pts, c.payload FROM inbox i JOIN changes c ON c.id = i.change "
                 "WHERE i.uid = ? AND i.pts > ? ORDER BY i.pts LIMIT 1000",
    "read": "SELECT c.id, c.payload FROM changes c "
            "WHERE c.conversation_id IN (SELECT conversation_id FROM members WHERE uid = ?) AND c.id > ? "
            "ORDER BY c.id LIMIT 1000",
}


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


for model in MODELS:
    db, data = open_database("replay-lean.")
    create(db, model)
    db.execute("BEGIN")
    for sent, (sender, receiver) in enumerate(pairs, 1):
        send(db, model, sent, sender, receiver, "m%d" % sent)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    best, pages, changes = min(replay(db, model) for _ in range(5))
    plan = [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + pages_query[model], ("u0", 0))]
    print("%-9s u0's %d changes in %d pages: %.2f ms a page (best of 5); plan: %s"
          % (model, changes, pages, best, "; ".join(plan)))
    db.close()
    shutil.rmtree(data)

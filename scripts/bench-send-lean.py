#!/usr/bin/env python3
"""The least a send could write and keep what a send promises: a ceiling for two data models
(`lean_models.py`: chatd's per-user positions, or fan-out on read).

`bench-send-sql.py` replays the statements chatd runs for a send. This one runs, through the
same Python `sqlite3`, a send cut to the bone: no user, block or conversation checks, no kept
text apart from the row. SENDS random one-to-one sends among 50 users, in transactions of BATCH,
with a RESTART checkpoint every 4,096 sends (timed in, as one writer).

    scripts/bench-send-lean.py [SENDS] [BATCH] [positions|read]
"""
import random
import shutil
import sys
import time

from lean_models import USERS, create, open_database, send

sends = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 4
model = sys.argv[3] if len(sys.argv) > 3 else "positions"
db, data = open_database("send-lean.", "wal_autocheckpoint = 0")
create(db, model)

frames = 0
begun = time.perf_counter_ns()
for sent in range(1, sends + 1):
    if sent % batch == 1 or batch == 1:
        db.execute("BEGIN IMMEDIATE")
    a, b = sorted(random.sample(USERS, 2), key=USERS.index)
    send(db, model, sent, a, b, "%x" % random.getrandbits(64))
    if sent % batch == 0 or sent == sends:
        db.execute("COMMIT")
    if sent % 4096 == 0:
        frames += db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[1]
total = time.perf_counter_ns() - begun
print("%d lean sends (%s) in transactions of %d: %.0f sends/s, %.1f µs a send, %.1f WAL frames a send "
      "(Python's own time included)" % (sends, model, batch, sends / (total / 1e9), total / 1000 / sends,
                                        frames / (sends - sends % 4096 or 1)))
shutil.rmtree(data)

#!/usr/bin/env python3
"""The least a send could write and keep what a send promises: a ceiling for two data models.

`bench-send-sql.py` replays the statements chatd runs for a send. This one runs, through the
same Python `sqlite3`, a send cut to the bone. Both models write the message (with its JSON, in
one table ordered by conversation), its repeat check (a unique index on sender and muid) and one
changelog row; no user, block or conversation checks, no kept text apart from the row.
- `positions` (chatd's model, per-user gapless positions): the members' unread counts, and for
  each of the two members a head bump and an inbox row.
- `read` (fan-out on read: a reader scans the changelog of their conversations): the changelog
  indexed by conversation too, the conversation's message counter and the sender's read mark
  (unread = counter - read mark). Four statements, no per-user rows.
SENDS random one-to-one sends among 50 users, in transactions of BATCH, with a RESTART
checkpoint every 4,096 sends (timed in, as one writer).

    scripts/bench-send-lean.py [SENDS] [BATCH] [positions|read]
"""
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

sends = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 4
model = sys.argv[3] if len(sys.argv) > 3 else "positions"
assert model in ("positions", "read"), "the model is positions or read"
data = tempfile.mkdtemp(prefix="send-lean.")
db = sqlite3.connect(os.path.join(data, "lean.sqlite"), isolation_level=None, cached_statements=64)
for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "cache_size = -32000", "wal_autocheckpoint = 0"):
    db.execute("PRAGMA " + pragma)
db.executescript("""
    CREATE TABLE messages(conversation_id TEXT, id INTEGER, sender TEXT, muid TEXT, body TEXT,
        PRIMARY KEY(conversation_id, id)) WITHOUT ROWID;
    CREATE UNIQUE INDEX messages_by_muid ON messages(sender, muid);
    CREATE TABLE changes(id INTEGER PRIMARY KEY, conversation_id TEXT, payload TEXT, at INTEGER);
""")
if model == "positions":
    db.executescript("""
        CREATE TABLE members(conversation_id TEXT, uid TEXT, unread INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY(conversation_id, uid)) WITHOUT ROWID;
        CREATE TABLE heads(uid TEXT PRIMARY KEY, pts INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE inbox(uid TEXT, pts INTEGER, change INTEGER, PRIMARY KEY(uid, pts)) WITHOUT ROWID;
    """)
else:
    db.executescript("""
        CREATE INDEX changes_by_conversation ON changes(conversation_id, id);
        CREATE TABLE conversations(id TEXT PRIMARY KEY, last_change INTEGER,
            messages INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
        CREATE TABLE members(conversation_id TEXT, uid TEXT, read_count INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY(conversation_id, uid)) WITHOUT ROWID;
    """)
users = ["u%d" % index for index in range(50)]
db.execute("BEGIN")
for index, a in enumerate(users):
    if model == "positions":
        db.execute("INSERT INTO heads VALUES (?, 0)", (a,))
    for b in users[index + 1:]:
        if model == "read":
            db.execute("INSERT INTO conversations(id) VALUES (?)", (a + ":" + b,))
        db.executemany("INSERT INTO members(conversation_id, uid) VALUES (?, ?)", [(a + ":" + b, a), (a + ":" + b, b)])
db.execute("COMMIT")

body = ('{"id":%d,"muid":"%s","conversationId":"%s","sender":"%s","receiver":"%s","receiverType":"user",'
        '"category":"message","type":"text","text":"hello %d","sentAt":%d,"updatedAt":%d}')
frames = 0
begun = time.perf_counter_ns()
for sent in range(1, sends + 1):
    if sent % batch == 1 or batch == 1:
        db.execute("BEGIN IMMEDIATE")
    a, b = sorted(random.sample(users, 2), key=users.index)
    conversation, muid = a + ":" + b, "%x" % random.getrandbits(64)
    json = body % (sent, muid, conversation, a, b, sent, sent, sent)
    db.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?)", (conversation, sent, a, muid, json))
    change = db.execute("INSERT INTO changes(conversation_id, payload, at) VALUES (?, ?, ?)",
                        (conversation, json, sent)).lastrowid
    if model == "positions":
        db.execute("UPDATE members SET unread = unread + (uid != ?) WHERE conversation_id = ?", (a, conversation))
        for uid in (a, b):
            db.execute("UPDATE heads SET pts = pts + 1 WHERE uid = ?", (uid,))
            db.execute("INSERT INTO inbox VALUES (?, (SELECT pts FROM heads WHERE uid = ?), ?)", (uid, uid, change))
    else:
        db.execute("UPDATE conversations SET last_change = ?, messages = messages + 1 WHERE id = ?",
                   (change, conversation))
        db.execute("UPDATE members SET read_count = (SELECT messages FROM conversations WHERE id = ?1) "
                   "WHERE conversation_id = ?1 AND uid = ?2", (conversation, a))
    if sent % batch == 0 or sent == sends:
        db.execute("COMMIT")
    if sent % 4096 == 0:
        frames += db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[1]
total = time.perf_counter_ns() - begun
print("%d lean sends (%s) in transactions of %d: %.0f sends/s, %.1f µs a send, %.1f WAL frames a send "
      "(Python's own time included)" % (sends, model, batch, sends / (total / 1e9), total / 1000 / sends,
                                        frames / (sends - sends % 4096 or 1)))
shutil.rmtree(data)

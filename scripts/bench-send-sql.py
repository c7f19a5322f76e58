#!/usr/bin/env python3
"""A plain send's SQL with nothing of chatd around it: the floor under POST /v1/messages.

Replays, through Python's sqlite3 (the system's libsqlite3, each statement prepared once), the
statements `Store.send` and `Store.storeChanges` run for a one-to-one message to an existing
conversation, SENDS of them in transactions of BATCH (group commit), on a database whose schema
chatd made. Prints the sends per second and each statement's share. Keep the statements in step
with Store+Messages.swift and Store+Changelog.swift.

    scripts/bench-send-sql.py PATH-TO-CHATD [SENDS] [BATCH]
"""
import collections
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time

chatd, sends, batch = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20000, int(sys.argv[3]) if len(sys.argv) > 3 else 4
users = ["u%d" % i for i in range(16)]
data = tempfile.mkdtemp(prefix="send-sql.")
for uid in users:  # chatd makes the database, so its schema is the one measured
    subprocess.run([chatd, "user", "add", uid, "--data", data], check=True, capture_output=True,
                   env=dict(os.environ, CHATD_ADMIN_KEY="bench-admin-key-of-32-bytes-or-more"))

db = sqlite3.connect(os.path.join(data, "chatd.sqlite"), isolation_level=None, cached_statements=256)
for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON", "cache_size = -32000",
               "wal_autocheckpoint = 0"):  # chatd checkpoints on a thread of its own: timed apart here
    db.execute("PRAGMA " + pragma)
db.create_function("greatest", 2, max, deterministic=True)


def direct(a, b):
    return ":".join(sorted([a, b]))


for index, a in enumerate(users):
    b = users[(index + 1) % len(users)]
    db.execute("INSERT INTO conversations(id, type, updated_at) VALUES (?, 'user', 0)", (direct(a, b),))
    db.execute("INSERT INTO conversation_members(conversation_id, uid, peer) VALUES (?, ?, ?), (?, ?, ?)",
               (direct(a, b), a, b, direct(a, b), b, a))

spent = collections.Counter()


def run(name, sql, arguments=()):
    start = time.perf_counter_ns()
    rows = db.execute(sql, arguments).fetchall()
    spent[name] += time.perf_counter_ns() - start
    return rows


now = int(time.time() * 1000)
sent = 0
begun = time.perf_counter_ns()
for _ in range(sends // batch):
    run("begin", "BEGIN IMMEDIATE")
    changes = []
    for _ in range(batch):
        index = sent % len(users)
        a, b = users[index], users[(index + 1) % len(users)]
        conversation = direct(a, b)
        sent, now = sent + 1, now + 1
        muid = "m%d-%d" % (sent, random.randint(1, 10**9))
        run("checks", "SELECT (SELECT id FROM messages WHERE sender = ?1 AND muid = ?2), "
            "(SELECT count(*) FROM users WHERE uid = ?3), ((SELECT count(*) FROM blocks WHERE "
            "blocker = ?1 AND blocked = ?3) + (SELECT count(*) FROM blocks WHERE blocker = ?3 AND blocked = ?1))",
            (a, muid, b))
        run("lock", "UPDATE conversations SET last_stamp = greatest(last_stamp + 1, ?) WHERE id = ?",
            (now, conversation))
        run("lock", "SELECT last_stamp FROM conversations WHERE id = ? AND changes() > 0", (conversation,))
        run("insert", "INSERT INTO messages(muid, conversation_id, sender, receiver, receiver_type, category, "
            "type, text, attachment, custom_data, metadata, sent_at, updated_at, parent_id, call_status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (muid, conversation, a, b, "user", "message", "text", "hello %d" % sent, None, None, None, now, now,
             None, None))
        run("last", "UPDATE conversations SET last_message_id = last_insert_rowid(), updated_at = ? WHERE id = ?",
            (now, conversation))
        run("counts", "UPDATE conversation_members SET "
            "unread = CASE WHEN uid = ?1 THEN 0 WHEN read_id < last_insert_rowid() THEN unread + 1 ELSE unread END, "
            "read_id = CASE WHEN uid = ?1 THEN greatest(read_id, last_insert_rowid()) ELSE read_id END, "
            "delivered_id = CASE WHEN uid = ?1 THEN greatest(delivered_id, last_insert_rowid()) "
            "ELSE delivered_id END, updated_at = ?3 WHERE conversation_id = ?2", (a, conversation, now))
        members = run("members", "SELECT uid, last_insert_rowid() FROM conversation_members "
                      "WHERE conversation_id = ?", (conversation,))
        body = ('{"id":%d,"muid":"%s","conversationId":"%s","sender":"%s","receiver":"%s","receiverType":"user",'
                '"category":"message","type":"text","text":"hello %d","sentAt":%d,"updatedAt":%d}'
                % (members[0][1], muid, conversation, a, b, sent, now, now))
        run("text", "INSERT INTO message_bodies(conversation_id, id, body) VALUES (?, ?, ?) "
            "ON CONFLICT(conversation_id, id) DO UPDATE SET body = excluded.body", (conversation, members[0][1], body))
        changes.append((conversation, '{"kind":"message.created","message":%s,"at":%d}' % (body, now), now,
                        [uid for uid, _ in members]))
    rows = run("changes", "INSERT INTO changes(conversation_id, payload, at) VALUES %s RETURNING id, at"
               % ", ".join(["(?, ?, ?)"] * len(changes)), [value for change in changes for value in change[:3]])
    ids = {at: id for id, at in rows}
    counts = collections.Counter(uid for change in changes for uid in change[3])
    heads = run("heads", "INSERT INTO user_heads(uid, pts) VALUES %s ON CONFLICT(uid) DO UPDATE SET "
                "pts = user_heads.pts + excluded.pts RETURNING uid, pts" % ", ".join(["(?, ?)"] * len(counts)),
                [value for uid in sorted(counts) for value in (uid, counts[uid])])
    following = {uid: pts - counts[uid] + 1 for uid, pts in heads}
    inbox = []
    for change in changes:
        for uid in sorted(change[3]):
            inbox += [uid, following[uid], ids[change[2]]]
            following[uid] += 1
    run("inbox", "INSERT INTO inbox(uid, pts, change) VALUES %s" % ", ".join(["(?, ?, ?)"] * (len(inbox) // 3)),
        inbox)
    run("commit", "COMMIT")
    if sent % 4096 < batch:
        run("checkpoint", "PRAGMA wal_checkpoint(RESTART)")
total = time.perf_counter_ns() - begun
print("%d sends in transactions of %d: %.0f sends/s, %.1f µs a send (Python's own time included)"
      % (sent, batch, sent / (total / 1e9), total / 1000 / sent))
for name, nanoseconds in spent.most_common():
    print("  %-10s %5.1f µs a send" % (name, nanoseconds / 1000 / sent))
subprocess.run(["rm", "-rf", data], check=True)

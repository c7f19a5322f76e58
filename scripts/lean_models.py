"""The two lean data models that bench-send-lean.py (a send) and bench-replay-lean.py (a replay
page) measure, through Python's `sqlite3`, each cut to what it cannot drop. Both keep the
message (with its JSON, in one table ordered by conversation), its repeat check (a unique index
on sender and muid) and one changelog row:
- `positions` (chatd's model, per-user gapless positions): the members' unread counts, and for
  each of the two members a head bump and an inbox row;
- `read` (fan-out on read: a reader scans the changelog of their conversations): the changelog
  indexed by conversation too, the conversation's message counter and the sender's read mark
  (unread = counter - read mark). Four statements, no per-user rows.
"""
import os
import sqlite3
import tempfile

MODELS = ("positions", "read")
USERS = ["u%d" % index for index in range(50)]
BODY = ('{"id":%d,"muid":"%s","conversationId":"%s","sender":"%s","receiver":"%s","receiverType":"user",'
        '"category":"message","type":"text","text":"hello %d","sentAt":%d,"updatedAt":%d}')


def open_database(prefix, *pragmas):
    """A new database in WAL mode in a temporary directory: (connection, directory)."""
    directory = tempfile.mkdtemp(prefix=prefix)
    db = sqlite3.connect(os.path.join(directory, "lean.sqlite"), isolation_level=None, cached_statements=64)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "cache_size = -32000") + pragmas:
        db.execute("PRAGMA " + pragma)
    return db, directory


def create(db, model):
    """`model`'s tables, with every pair of `USERS` in a one-to-one conversation."""
    assert model in MODELS, "the model is positions or read"
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
    db.execute("CREATE INDEX members_by_user ON members(uid)")  # a user's conversations, as chatd has
    db.execute("BEGIN")
    for index, a in enumerate(USERS):
        if model == "positions":
            db.execute("INSERT INTO heads VALUES (?, 0)", (a,))
        for b in USERS[index + 1:]:
            if model == "read":
                db.execute("INSERT INTO conversations(id) VALUES (?)", (a + ":" + b,))
            db.executemany("INSERT INTO members(conversation_id, uid) VALUES (?, ?)",
                           [(a + ":" + b, a), (a + ":" + b, b)])
    db.execute("COMMIT")


def send(db, model, sent, sender, receiver, muid):
    """Writes the `sent`-th message, from `sender` to `receiver`, as `model` does (inside the
    caller's transaction)."""
    conversation = ":".join(sorted([sender, receiver], key=USERS.index))
    json = BODY % (sent, muid, conversation, sender, receiver, sent, sent, sent)
    db.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?)", (conversation, sent, sender, muid, json))
    change = db.execute("INSERT INTO changes(conversation_id, payload, at) VALUES (?, ?, ?)",
                        (conversation, json, sent)).lastrowid
    if model == "positions":
        db.execute("UPDATE members SET unread = unread + (uid != ?) WHERE conversation_id = ?",
                   (sender, conversation))
        for uid in (sender, receiver):
            db.execute("UPDATE heads SET pts = pts + 1 WHERE uid = ?", (uid,))
            db.execute("INSERT INTO inbox VALUES (?, (SELECT pts FROM heads WHERE uid = ?), ?)", (uid, uid, change))
    else:
        db.execute("UPDATE conversations SET last_change = ?, messages = messages + 1 WHERE id = ?",
                   (change, conversation))
        db.execute("UPDATE members SET read_count = (SELECT messages FROM conversations WHERE id = ?1) "
                   "WHERE conversation_id = ?1 AND uid = ?2", (conversation, sender))

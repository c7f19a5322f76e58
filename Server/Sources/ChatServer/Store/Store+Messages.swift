import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    /// The columns a message is read from, in the order `message(from:)` reads them.
    static let messageColumns = """
        id, muid, conversation_id, sender, receiver, receiver_type, category, type, text, attachment,
        custom_data, metadata, sent_at, updated_at, edited_at, deleted_at, parent_id, reply_count, call_status, action
        """

    /// A row that starts with `messageColumns`, read by position (a lookup by name costs a
    /// string comparison per column passed: a fifth of the conversation list's time).
    static func message(from row: Row) throws -> MessagePayload {
        MessagePayload(
            id: try row.get(0), muid: try row.get(1), conversationId: try row.get(2),
            sender: try row.get(3), receiver: try row.get(4),
            receiverType: ReceiverType(rawValue: try row.get(5)) ?? .user,
            category: MessageCategory(rawValue: try row.get(6)) ?? .message,
            type: try row.get(7), text: try row.get(8),
            attachment: try decodeJSON(Attachment.self, try row.get(9)),
            customData: try decodeJSON(JSONValue.self, try row.get(10)),
            metadata: try decodeJSON([String: JSONValue].self, try row.get(11)),
            sentAt: try row.get(12), updatedAt: try row.get(13),
            editedAt: try row.get(14), deletedAt: try row.get(15),
            parentMessageId: try row.get(16), replyCount: try row.get(17, as: Int.self).nonZero,
            callStatus: (try row.get(18, as: String?.self)).flatMap(CallStatus.init(rawValue:)),
            action: try decodeJSON(MemberActionPayload.self, try row.get(19)))
    }

    static func loadMessage(_ db: any SQLDatabase, id: Int64) throws -> MessagePayload? {
        try db.queryFirst("SELECT \(messageColumns) FROM messages WHERE id = ?", [id]).map { try message(from: $0, db) }
    }

    /// The messages with these ids (those that exist), with their reaction counts: two queries.
    static func loadMessages(_ db: any SQLDatabase, ids: [Int64]) throws -> [Int64: MessagePayload] {
        guard !ids.isEmpty else { return [:] }
        let rows = try db.query(
            "SELECT \(messageColumns) FROM messages WHERE id IN (SELECT CAST(value AS BIGINT) FROM json_each(?))",
            [try json(ids) ?? "[]"])
        return Dictionary(uniqueKeysWithValues: try withReactions(try rows.map(message(from:)), db).map { ($0.id, $0) })
    }

    /// A message row with its reaction counts.
    static func message(from row: Row, _ db: any SQLDatabase) throws -> MessagePayload {
        try withReactions([try message(from: row)], db)[0]
    }

    /// `messages` with their reaction counts, read in one query.
    static func withReactions(_ messages: [MessagePayload], _ db: any SQLDatabase) throws -> [MessagePayload] {
        guard !messages.isEmpty else { return [] }
        let rows = try db.query(
            """
            SELECT message_id, reaction, count(*) FROM reactions
            WHERE message_id IN (SELECT CAST(value AS BIGINT) FROM json_each(?))
            GROUP BY message_id, reaction ORDER BY message_id, reaction
            """, [try json(messages.map(\.id)) ?? "[]"])
        var counts: [Int64: [ReactionCount]] = [:]
        for row in rows {
            counts[try row.get(0), default: []].append(ReactionCount(reaction: try row.get(1), count: try row.get(2)))
        }
        return messages.map { message in
            var message = message
            message.reactions = counts[message.id]
            return message
        }
    }

    /// Which of `uids` are members of the conversation (one indexed read each, none for none).
    static func members(_ db: any SQLDatabase, of conversationId: String, among uids: [String]) throws -> [String] {
        guard !uids.isEmpty else { return [] }
        return try db.query(
            """
            SELECT uid FROM conversation_members
            WHERE conversation_id = ? AND uid IN (SELECT value FROM json_each(?))
            """, [conversationId, try json(uids) ?? "[]"]
        ).map { try $0.get(0) }
    }

    static func members(_ db: any SQLDatabase, of conversationId: String) throws -> [String] {
        try db.query("SELECT uid FROM conversation_members WHERE conversation_id = ?", [conversationId]).map {
            try $0.get(0)
        }
    }

    /// A sent message, and its JSON as the answer carries it.
    public struct Sent: Sendable {
        public let message: MessagePayload
        /// False for a repeat of one already stored (the original, nothing changed).
        public let created: Bool
        /// A new message's text as its change and its kept text were made of; nil for a repeat,
        /// encoded by `json()` after the write, off the writer.
        let encoded: [UInt8]?

        /// `message` as `CompactJSONEncoder` writes it.
        public func json() throws -> EncodedJSON {
            EncodedJSON(bytes: try encoded ?? CompactJSONEncoder().encode(message))
        }
    }

    /// Sends a validated message. Idempotent on (sender, muid): a repeat returns the original
    /// with `created == false` and changes nothing.
    public func send(
        from sender: String, _ request: SendMessageRequest
    ) throws -> (message: MessagePayload, created: Bool) {
        let sent = try sendEncoded(from: sender, request)
        return (sent.message, sent.created)
    }

    /// `send`, with the message's JSON: a new message is encoded once, for its change, its kept
    /// text and the answer.
    public func sendEncoded(from sender: String, _ request: SendMessageRequest) throws -> Sent {
        // A plain message locks only its conversation: it commits together with others (group
        // commit). A reply (the parent's row), a mention (the mentioned user's feed) or an
        // attachment (its upload) would lock more, so those commit alone.
        let plain =
            request.parentMessageId == nil && request.attachment == nil
            && FeedItemPayload.mentions(in: request.text ?? "").isEmpty
        guard plain else { return try write { db, changes in try sendBody(db, from: sender, request, into: &changes) } }
        let conversation =
            request.receiverType == .group
            ? ConversationPayload.groupID(request.receiver)
            : ConversationPayload.directID(sender, request.receiver)
        return try writeTogether(conversation: conversation) { db, changes in
            try self.sendBody(db, from: sender, request, into: &changes)
        }
    }

    /// `send`'s transaction.
    func sendBody(
        _ db: any SQLDatabase, from sender: String, _ request: SendMessageRequest,
        into changes: inout [PublishedChange]
    ) throws -> Sent {
        let (conversationId, now): (String, Int64)
        switch try prepareConversation(db, from: sender, request) {
        case .repeated(let id):
            guard let original = try Self.loadMessage(db, id: id) else {
                throw StoreError.broken("message \(id) vanished")
            }
            return Sent(message: original, created: false, encoded: nil)
        case .ready(let id, let time): (conversationId, now) = (id, time)
        }
        var parent: MessagePayload?
        if let parentId = request.parentMessageId {
            parent = try Self.loadMessage(db, id: parentId)
            guard let parent, parent.conversationId == conversationId else {
                throw StoreError.validation("`parentMessageId` \(parentId) is not a message of this conversation")
            }
            guard parent.parentMessageId == nil else {
                throw StoreError.validation(
                    "message \(parentId) is itself a reply; reply to its parent \(parent.parentMessageId!)")
            }
            guard parent.deletedAt == nil else { throw StoreError.conflict("message \(parentId) is deleted") }
        }
        // The message, the conversation's last message, the counts (a group's: only the
        // sender's read point) and the members go in one round trip: the updates name the new message as the connection's last insert,
        // and the members' rows bring back its id. The message itself is built from what was
        // inserted (JSON fields decoded from the stored text, as a read does): a row read back
        // through RETURNING cost SQLite a temporary table, a seventh of the send's statements.
        let (attachment, customData, metadata) = (
            try Self.json(request.attachment), try Self.json(request.customData), try Self.json(request.metadata)
        )
        let callStatus = request.category == .call ? (request.callStatus ?? .initiated) : nil
        let group = Self.isGroup(conversationId)
        let answers = try db.queries([
            (
                """
                INSERT INTO messages(muid, conversation_id, sender, receiver, receiver_type, category, type, text,
                                     attachment, custom_data, metadata, sent_at, updated_at, parent_id, call_status)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    request.muid, conversationId, sender, request.receiver, request.receiverType.rawValue,
                    request.category.rawValue, request.type, request.text, attachment, customData, metadata, now, now,
                    request.parentMessageId, callStatus?.rawValue
                ]
            ),
            (
                "UPDATE conversations SET last_message_id = last_insert_rowid(), updated_at = ? WHERE id = ?",
                [now, conversationId]
            ),
            group
                ? (Self.markSentToGroup, [sender, conversationId])
                : (Self.countSentMessage, [sender, conversationId, now]),
            group ? (Self.sentToGroupBy, [conversationId, sender]) : (Self.sentMessageAudience, [conversationId])
        ])
        guard let id = try answers[3].first?.get(1, as: Int64.self) else {
            throw StoreError.broken("a message went to a conversation without members")
        }
        let message = MessagePayload(
            id: id, muid: request.muid, conversationId: conversationId, sender: sender, receiver: request.receiver,
            receiverType: request.receiverType, category: request.category, type: request.type, text: request.text,
            attachment: try Self.decodeJSON(Attachment.self, attachment),
            customData: try Self.decodeJSON(JSONValue.self, customData),
            metadata: try Self.decodeJSON([String: JSONValue].self, metadata), sentAt: now, updatedAt: now,
            editedAt: nil, deletedAt: nil, parentMessageId: request.parentMessageId, callStatus: callStatus)
        try Self.linkUpload(db, request.attachment, to: message.id, sender: sender)
        let json = try CompactJSONEncoder().encode(message)
        // A group's message goes into its log alone; a direct one to both members.
        let members: [String] = group ? [] : try answers[3].map { try $0.get(0) }
        try record(
            db, .messageCreated, conversationId: conversationId, message: message, messageJSON: json,
            audience: members, groupLog: group, into: &changes)
        if let parentId = request.parentMessageId { try recountReplies(db, parentId, at: now, into: &changes) }
        let mentioned = FeedItemPayload.mentions(in: message.text ?? "")
        try notifyAbout(
            message, parent: parent,
            members: group ? try Self.members(db, of: conversationId, among: mentioned) : members, db, into: &changes)
        return Sent(message: message, created: true, encoded: json)
    }

    /// Where a send goes: a repeat of one already stored (its id), or a conversation the sender
    /// may post to, locked (`lockConversation`), with the new message's time.
    enum SendTarget {
        case repeated(Int64)
        case ready(conversationId: String, now: Int64)
    }

    /// The message `sender` already sent with this `muid` (`?1`, `?2`): a repeat changes nothing.
    static let originalQuery = "SELECT id FROM messages WHERE sender = ?1 AND muid = ?2"

    /// The send's target: a repeat, or the conversation locked after checking the sender may
    /// post there: a group they are a member of, or a user with no block between them (the
    /// one-to-one conversation is created on first use). A one-to-one send asks whether it is
    /// a repeat, whether the receiver exists and whether a block stands in one query.
    func prepareConversation(
        _ db: any SQLDatabase, from sender: String, _ request: SendMessageRequest
    ) throws -> SendTarget {
        if request.receiverType == .group {
            if let id: Int64 = try db.scalar(Self.originalQuery, [sender, request.muid]) { return .repeated(id) }
            let conversationId = ConversationPayload.groupID(request.receiver)
            let now = try lockConversation(db, conversationId)
            _ = try Self.memberScope(db, request.receiver, sender)
            return .ready(conversationId: conversationId, now: now)
        }
        let (a, b) = (sender, request.receiver)
        let conversationId = ConversationPayload.directID(a, b)
        // A one-to-one conversation never loses its two members: once its row exists, lock it
        // and go. The lock goes with the checks (one round trip on PostgreSQL): a refused send
        // rolls it back, and a repeat keeps only a later `last_stamp`, which promises nothing more.
        let answers = try db.queries(
            [
                (Self.sendChecksQuery, [a, request.muid, b])
            ] + lockConversationStatements(conversationId))
        guard let checks = answers[0].first else { throw StoreError.broken("the send's checks returned no row") }
        if let id = try checks.get(0, as: Int64?.self) { return .repeated(id) }
        guard try checks.get(1, as: Int.self) > 0 else { throw StoreError.notFound("no user \(b)") }
        guard try checks.get(2, as: Int.self) == 0 else {
            throw StoreError(.blocked, "\(a) and \(b) have a block between them; unblock to send")
        }
        if let now = try Self.lockedStamp(answers.dropFirst()) {
            return .ready(conversationId: conversationId, now: now)
        }
        try db.run(
            "INSERT INTO conversations(id, type, updated_at) VALUES (?, 'user', ?) ON CONFLICT DO NOTHING",
            [conversationId, stamp()])
        let now = try lockConversation(db, conversationId)
        // The members come in at the send's time, which its update of their rows writes again:
        // their minute stays, so PostgreSQL rewrites them in place (`recency(of:)`).
        try db.insertRows(
            "INSERT INTO conversation_members(conversation_id, uid, peer, updated_at)",
            [[conversationId, a, b, now], [conversationId, b, a, now]], "ON CONFLICT DO NOTHING")
        return .ready(conversationId: conversationId, now: now)
    }

    /// A one-to-one send's checks in one row: the message an earlier send with its muid made
    /// (a repeat), whether the receiver exists, the blocks between the two. Parameters: the
    /// sender, the muid, the receiver.
    static let sendChecksQuery = """
        SELECT (\(originalQuery)), (SELECT count(*) FROM users WHERE uid = ?3), \(blocksBetween("?1", "?3"))
        """

    /// A message the caller may read; 404 when missing, 403 when in someone else's conversation.
    public func message(_ id: Int64, for uid: String) throws -> MessagePayload {
        try read { try Self.readableMessage($0, id: id, uid: uid) }
    }

    /// Replaces text, custom data or metadata of the caller's own message.
    public func edit(_ id: Int64, by uid: String, _ request: EditMessageRequest) throws -> MessagePayload {
        try write { db, changes in
            let now = try lockConversation(db, ofMessage: id)
            if let status = request.callStatus {
                return try moveCall(db, id: id, by: uid, to: status, at: now, into: &changes)
            }
            let message = try Self.ownMessage(db, id: id, uid: uid)
            guard message.deletedAt == nil else { throw StoreError.conflict("message \(id) is deleted") }
            try Self.requireNoBlock(db, uid, message)  // a block stops edits of old messages too
            if request.text != nil && message.text == nil {
                throw StoreError.validation("message \(id) has no text to edit")
            }
            try db.run(
                """
                UPDATE messages SET text = coalesce(?, text), custom_data = coalesce(?, custom_data),
                    metadata = coalesce(?, metadata), edited_at = ?, updated_at = ? WHERE id = ?
                """, [request.text, try Self.json(request.customData), try Self.json(request.metadata), now, now, id])
            return try publishUpdate(db, id: id, into: &changes)
        }
    }

    /// Moves a call along `CallStatus.next`: either participant of a one-to-one call; in a
    /// group, the caller or a moderator and up.
    func moveCall(
        _ db: any SQLDatabase, id: Int64, by uid: String, to status: CallStatus, at now: Int64,
        into changes: inout [PublishedChange]
    ) throws -> MessagePayload {
        let message = try Self.readableMessage(db, id: id, uid: uid)
        guard message.category == .call, let current = message.callStatus else {
            throw StoreError.validation("message \(id) is not a call")
        }
        guard message.deletedAt == nil else { throw StoreError.conflict("message \(id) is deleted") }
        try Self.requireNoBlock(db, uid, message)
        if message.receiverType == .group && message.sender != uid {
            guard try Self.memberScope(db, message.receiver, uid).may(.deleteOthersMessages) else {
                throw StoreError.forbidden("in a group, only the caller or a moderator moves call \(id)")
            }
        }
        guard current.next.contains(status) else {
            throw StoreError.conflict("a call cannot go from \(current.rawValue) to \(status.rawValue)")
        }
        try db.run("UPDATE messages SET call_status = ?, updated_at = ? WHERE id = ?", [status.rawValue, now, id])
        return try publishUpdate(db, id: id, into: &changes)
    }

    /// Soft-deletes a message: content cleared, `deletedAt` set. The sender may delete their
    /// own; in a group, moderators and up may delete anyone's. Repeats are no-ops.
    public func delete(_ id: Int64, by uid: String) throws -> MessagePayload {
        try write { db, changes in
            let now = try lockConversation(db, ofMessage: id)
            let message = try Self.readableMessage(db, id: id, uid: uid)
            guard message.category != .action else { throw StoreError.conflict("action messages cannot be deleted") }
            if message.sender != uid {
                guard message.receiverType == .group,
                    try Self.memberScope(db, message.receiver, uid).may(.deleteOthersMessages)
                else {
                    throw StoreError.forbidden("only the sender (or, in a group, a moderator) may delete message \(id)")
                }
            }
            guard message.deletedAt == nil else { return message }
            try db.run(
                """
                UPDATE messages SET text = NULL, attachment = NULL, custom_data = NULL, metadata = NULL,
                    deleted_at = ?, updated_at = ? WHERE id = ?
                """, [now, now, id])
            try db.run("DELETE FROM upload_refs WHERE message_id = ?", [id])  // its file may go (sweepUploads)
            try Self.uncountDeletedMessage(db, message.conversationId, id: id, sender: message.sender)
            let deleted = try publishUpdate(db, id: id, into: &changes)
            if let parentId = message.parentMessageId { try recountReplies(db, parentId, at: now, into: &changes) }
            return deleted
        }
    }

    func publishUpdate(
        _ db: any SQLDatabase, id: Int64, kind: ChangeKind = .messageUpdated, reaction: ReactionPayload? = nil,
        into changes: inout [PublishedChange]
    ) throws -> MessagePayload {
        guard let updated = try Self.loadMessage(db, id: id) else { throw StoreError.broken("message vanished") }
        let group = Self.isGroup(updated.conversationId)
        try record(
            db, kind, conversationId: updated.conversationId, message: updated, reaction: reaction,
            audience: group ? [] : try Self.members(db, of: updated.conversationId), groupLog: group, into: &changes)
        return updated
    }

    /// Recomputes a parent's live reply count (inside the write transaction, so concurrent
    /// replies and deletions cannot lose an update) and records the parent's update.
    func recountReplies(
        _ db: any SQLDatabase, _ parentId: Int64, at now: Int64, into changes: inout [PublishedChange]
    ) throws {
        try db.run(
            """
            UPDATE messages SET reply_count = (SELECT count(*) FROM messages WHERE parent_id = ?1 AND deleted_at IS NULL),
                updated_at = ?2 WHERE id = ?1
            """, [parentId, now])
        _ = try publishUpdate(db, id: parentId, into: &changes)
    }

    static func ownMessage(_ db: any SQLDatabase, id: Int64, uid: String) throws -> MessagePayload {
        let message = try readableMessage(db, id: id, uid: uid)
        guard message.sender == uid else { throw StoreError.forbidden("only the sender may change message \(id)") }
        guard message.category != .action else { throw StoreError.conflict("action messages cannot be changed") }
        return message
    }

    /// Keeps `message`'s JSON (`message_bodies`), as a page of messages answers it. Every
    /// change of a message records it (`record`), so the text is current when the write commits.
    static func keepBody(_ json: [UInt8], of message: MessagePayload, _ db: any SQLDatabase) throws {
        try db.runLater(
            """
            INSERT INTO message_bodies(conversation_id, id, body) VALUES (?, ?, ?)
            ON CONFLICT(conversation_id, id) DO UPDATE SET body = excluded.body
            """, [message.conversationId, message.id, String(decoding: json, as: UTF8.self)])
    }

    /// A conversation's page by its anchors alone: the kept texts in conversation order.
    static let keptPage = "SELECT id, body FROM message_bodies"
    /// Any other page: the messages' rows, each with its kept text.
    static let keptRows = """
        SELECT id, (SELECT body FROM message_bodies b WHERE b.conversation_id = messages.conversation_id
                                                      AND b.id = messages.id)
        FROM messages
        """

    /// Messages matching `query` that `uid` may read, oldest first, as a JSON array of
    /// `MessagePayload`: the `limit` newest before the anchor, or the `limit` oldest after it
    /// (`query.direction`). Each message is its kept text (`keepBody`), spliced unparsed; a
    /// message stored before bodies were kept is built from its columns.
    ///
    /// Most pages are one statement, read with no transaction around it. A page that needs
    /// another (an empty page's membership check, a thread's parent, a message with no kept
    /// text) is read again in one transaction (`readInOneStatementIfItCan`).
    public func messages(_ query: MessageQuery, for uid: String) throws -> EncodedJSON {
        try readInOneStatementIfItCan { try Self.messages($0, query, for: uid, inOneStatement: $1) }
    }

    /// `messages(query, uid)` read with `db`; nil when `inOneStatement` and the page needs more
    /// than one statement.
    static func messages(
        _ db: any SQLDatabase, _ query: MessageQuery, for uid: String, inOneStatement: Bool
    ) throws -> EncodedJSON? {
        let clause = try query.whereClause()
        // The statement's text in one string with room for it all (no copy a piece).
        var sql = String()
        sql.reserveCapacity(512)
        sql += clause.onlyAnchors ? keptPage : keptRows
        sql += " WHERE "
        sql += clause.clause
        var arguments = clause.arguments
        switch query.scope {
        case .conversation(let id):
            // A member's row is what lets them read (a ban or a group's deletion removes
            // it), so the page asks for it: a page with messages needs no other check, and
            // an empty one asks `requireMember` below whether it is a 404, a 403 or empty.
            sql += " AND EXISTS (SELECT 1 FROM conversation_members WHERE conversation_id = ? AND uid = ?)"
            arguments += [id, uid]
        case .thread(let parentId):
            if inOneStatement { return nil }
            _ = try readableMessage(db, id: parentId, uid: uid)
        }
        sql += query.newestFirst ? " ORDER BY id DESC LIMIT ?" : " ORDER BY id ASC LIMIT ?"
        arguments.append(query.limit)
        // The texts are copied out of SQLite once, into `kept`; each row notes where its
        // text is (nil: none kept), so a newest-first page can be answered oldest first.
        var kept: [UInt8] = []
        kept.reserveCapacity(16_384)
        var rows: [(id: Int64, text: Range<Int>?)] = []
        rows.reserveCapacity(query.limit)
        try db.forEachText(sql, arguments) { id, body in
            guard let body else { return rows.append((id, nil)) }
            kept.append(contentsOf: body)
            rows.append((id, kept.count - body.count..<kept.count))
        }
        if inOneStatement && (rows.isEmpty || rows.contains { $0.text == nil }) { return nil }
        if rows.isEmpty, case .conversation(let id) = query.scope { try requireMember(db, uid, id) }
        if query.newestFirst { rows.reverse() }
        let built = try loadMessages(db, ids: rows.compactMap { $0.text == nil ? $0.id : nil })
        var array = EncodedJSON.Array(capacity: kept.count + rows.count)
        for row in rows {
            if let text = row.text {
                array.append(kept[text])
            } else if let message = built[row.id] {
                array.append(try CompactJSONEncoder().encode(message))
            }
        }
        return array.closed()
    }
}

extension Int {
    /// nil for zero, so counts that are zero stay off the wire.
    var nonZero: Int? { self == 0 ? nil : self }
}

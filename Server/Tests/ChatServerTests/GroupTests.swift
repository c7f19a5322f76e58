import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket
import Testing

@Suite struct GroupTests {
    @Test func creatingAGroupMakesTheCallerItsOwnerWithAGroupConversation() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let created = try await server.group("team", tags: ["work"], name: "The team", by: alice)
        #expect(created.owner == "alice" && created.scope == .owner && created.hasJoined && created.membersCount == 1)
        #expect(created.tags == ["work"] && created.name == "The team")

        let list = try await server.request("GET", Endpoints.conversations, token: alice).decode(
            Page<ConversationPayload>.self)
        #expect(list.items.map(\.conversationId) == [ConversationPayload.groupID("team")])
        #expect(
            list.items.first?.conversationType == .group && list.items.first?.conversationWith.group?.guid == "team")

        let again = try await server.request(
            "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "team", name: "x"))
        #expect(again.status == 409 && again.error?.code == .conflict)
        let noPassword = try await server.request(
            "POST", Endpoints.groups, token: alice,
            json: CreateGroupRequest(guid: "locked", name: "x", type: .password))
        #expect(noPassword.status == 422)
        let strayPassword = try await server.request(
            "POST", Endpoints.groups, token: alice,
            json: CreateGroupRequest(guid: "open", name: "x", password: "pw"))
        #expect(strayPassword.status == 422)
        let badGuid = try await server.request(
            "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "a~b", name: "x"))
        #expect(badGuid.status == 422)
    }

    @Test func joiningFollowsTheGroupType() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        try await server.group("open", by: owner)
        try await server.group("locked", .password, password: "s3cret", by: owner)
        try await server.group("secret", .private, by: owner)

        let join = { (guid: String, password: String?) in
            try await server.request(
                "POST", "\(Endpoints.groups)/\(guid)/join", token: bob, json: JoinGroupRequest(password: password))
        }
        #expect(
            try await server.request(
                "GET", "\(Endpoints.conversations)/\(ConversationPayload.groupID("secret"))/messages",
                token: bob
            ).status == 404, "a private group's conversation is as invisible as the group")
        #expect(try await join("open", nil).status == 201)
        #expect(try await join("open", nil).status == 200, "joining again changes nothing")
        #expect(try await join("locked", nil).status == 403)
        #expect(try await join("locked", "wrong").status == 403)
        let joined = try await join("locked", "s3cret")
        let joinedGroup = try joined.decode(GroupPayload.self)
        #expect(joined.status == 201 && joinedGroup.scope == .participant)
        #expect(try await join("locked", nil).status == 200, "a member joining again needs no password")

        // A private group is invisible to outsiders and cannot be joined.
        #expect(try await join("secret", nil).status == 404)
        #expect(try await server.request("GET", "\(Endpoints.groups)/secret", token: bob).status == 404)
        let visible = try await server.request("GET", Endpoints.groups, token: bob).decode(Page<GroupPayload>.self)
        #expect(visible.items.map(\.guid) == ["locked", "open"])
        #expect(try await server.addMember("bob", to: "secret", by: owner) == 201)
        let detail = try await server.request("GET", "\(Endpoints.groups)/secret", token: bob).decode(GroupPayload.self)
        #expect(detail.hasJoined && detail.membersCount == 2)

        // A new password locks out nobody already in, and applies to the next joiner.
        let carol = try await server.user("carol")
        _ = try await server.request(
            "PATCH", "\(Endpoints.groups)/locked", token: owner, json: EditGroupRequest(password: "new"))
        #expect(
            try await server.request(
                "POST", "\(Endpoints.groups)/locked/join", token: carol, json: JoinGroupRequest(password: "s3cret")
            ).status == 403)
        #expect(
            try await server.request(
                "POST", "\(Endpoints.groups)/locked/join", token: carol, json: JoinGroupRequest(password: "new")
            ).status == 201)
    }

    @Test func everyMembershipChangeAddsAnActionMessage() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        _ = try await server.user("dave")
        try await server.group("g", by: owner)
        _ = try await server.request("POST", "\(Endpoints.groups)/g/join", token: bob)
        try await server.addMember("carol", to: "g", by: owner)
        _ = try await server.request(
            "PATCH", "\(Endpoints.groups)/g/members/carol", token: owner, json: ChangeScopeRequest(scope: .moderator))
        try await server.addMember("dave", to: "g", by: owner)
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/members/dave", token: carol)
        _ = try await server.request("PUT", "\(Endpoints.groups)/g/bans/dave", token: carol)
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/bans/dave", token: carol)
        _ = try await server.request(
            "POST", "\(Endpoints.groups)/g/owner", token: owner, json: TransferOwnershipRequest(uid: "bob"))
        _ = try await server.request("POST", "\(Endpoints.groups)/g/leave", token: owner)

        let messages = try await server.groupMessages("g", token: bob).decode([MessagePayload].self)
        let actions = messages.compactMap(\.action)
        #expect(messages.allSatisfy { $0.category == .action && $0.type == "groupMember" && $0.receiverType == .group })
        #expect(
            actions.map(\.action) == [
                .joined, .added, .scopeChanged, .added, .kicked, .banned, .unbanned, .ownershipTransferred, .left
            ])
        #expect(actions.map(\.actor) == ["bob", "owner", "owner", "owner", "carol", "carol", "carol", "owner", "owner"])
        #expect(actions.map(\.target) == ["bob", "carol", "carol", "dave", "dave", "dave", "dave", "bob", "owner"])
        #expect(actions[2].oldScope == .participant && actions[2].newScope == .moderator)
        #expect(
            messages.map(\.text) == [
                "bob joined", "owner added carol", "owner made carol moderator", "owner added dave",
                "carol kicked dave", "carol banned dave", "carol unbanned dave", "owner made bob the owner",
                "owner left"
            ])

        let group = try await server.request("GET", "\(Endpoints.groups)/g", token: bob).decode(GroupPayload.self)
        #expect(group.owner == "bob" && group.scope == .owner && group.membersCount == 2)

        // Action messages are chatd's: nobody edits or deletes them, nobody sends them.
        let action = messages[0]
        #expect(try await server.request("DELETE", "\(Endpoints.messages)/\(action.id)", token: bob).status == 409)
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.messages)/\(action.id)", token: bob, json: EditMessageRequest(text: "x")
            ).status == 409)
    }

    @Test func aRemovedOrBannedMemberLosesReadAccessAtOnce() async throws {
        let server = try LiveServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        try await server.group("g", by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        try await server.addMember("carol", to: "g", by: owner)
        let early = try await server.sendToGroup("before", from: carol, to: "g").decode(MessagePayload.self)
        let (bobSocket, _) = try server.realtime(bob)

        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g/members/bob", token: owner).status == 204)
        // The kick itself reaches bob, so his client learns why the group went away…
        var seen = try bobSocket.nextEnvelope()
        #expect(seen.change?.kind == .groupMember && seen.change?.message?.action?.action == .kicked)
        // …and nothing after it does: carol's next message is not delivered, only the fence is.
        #expect(try await server.sendToGroup("after", from: carol, to: "g").status == 201)
        try await server.send("fence", from: carol, to: "bob")
        seen = try bobSocket.nextEnvelope()
        #expect(seen.change?.message?.text == "fence")

        #expect(try await server.groupMessages("g", token: bob).status == 403)
        #expect(try await server.request("GET", "\(Endpoints.messages)/\(early.id)", token: bob).status == 403)
        #expect(try await server.request("GET", "\(Endpoints.groups)/g/members", token: bob).status == 403)
        #expect(try await server.sendToGroup("let me in", from: bob, to: "g").status == 403)
        let conversations = try await server.request("GET", Endpoints.conversations, token: bob).decode(
            Page<ConversationPayload>.self)
        #expect(!conversations.items.map(\.conversationId).contains(ConversationPayload.groupID("g")))
        #expect(
            try await server.request(
                "POST", "\(Endpoints.messages)/\(early.id)/reactions", token: bob,
                json: AddReactionRequest(reaction: "👍")
            ).status == 403)

        // A banned member is out the same way, and stays out until unbanned.
        #expect(try await server.request("PUT", "\(Endpoints.groups)/g/bans/carol", token: owner).status == 200)
        let banned = try await server.sendToGroup("hello?", from: carol, to: "g")
        #expect(banned.status == 403 && banned.error?.code == .banned)
        #expect(try await server.groupMessages("g", token: carol).error?.code == .banned)
        #expect(
            try await server.request("GET", "\(Endpoints.messages)/\(early.id)", token: carol).error?.code == .banned)
        let rejoin = try await server.request("POST", "\(Endpoints.groups)/g/join", token: carol)
        #expect(rejoin.status == 403 && rejoin.error?.code == .banned)
        #expect(try await server.addMember("carol", to: "g", by: owner) == 409)
        let bans = try await server.request("GET", "\(Endpoints.groups)/g/bans", token: owner).decode(
            Page<GroupBanPayload>.self)
        #expect(bans.items.map(\.user.uid) == ["carol"] && bans.items.first?.bannedBy == "owner")
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/bans/carol", token: owner)
        #expect(try await server.request("POST", "\(Endpoints.groups)/g/join", token: carol).status == 201)
        let history = try await server.groupMessages("g", token: carol).decode([MessagePayload].self)
        #expect(history.contains { $0.text == "before" }, "a member who comes back reads the group's history")

        // Banning and unbanning an outsider tells the outsider nothing about the group.
        let dave = try await server.user("dave")
        let daveHead = try await server.request("GET", Endpoints.changes, token: dave).decode(ChangelogPage.self).cursor
        #expect(try await server.request("PUT", "\(Endpoints.groups)/g/bans/dave", token: owner).status == 200)
        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g/bans/dave", token: owner).status == 204)
        let daveChanges = try await server.request("GET", "\(Endpoints.changes)?cursor=\(daveHead)", token: dave)
            .decode(ChangelogPage.self)
        #expect(daveChanges.changes.isEmpty)
    }

    @Test func deletingAGroupTakesItFromEveryMember() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        try await server.group("g", by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g", token: bob).status == 403)
        let head = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.groups)/g", token: owner,
                json: EditGroupRequest(name: "Renamed", tags: ["x"])
            ).status == 200)
        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g", token: owner).status == 204)
        let changes = try await server.request("GET", "\(Endpoints.changes)?cursor=\(head)", token: bob).decode(
            ChangelogPage.self
        ).changes
        #expect(changes.map(\.kind) == [.groupUpdated, .groupDeleted])
        #expect(
            changes.first?.group?.name == "Renamed" && changes.first?.group?.tags == ["x"]
                && changes.last?.group?.guid == "g")
        #expect(try await server.request("GET", "\(Endpoints.groups)/g", token: owner).status == 404)
        #expect(try await server.groupMessages("g", token: bob).status == 404)
        let conversations = try await server.request("GET", Endpoints.conversations, token: owner).decode(
            Page<ConversationPayload>.self)
        #expect(conversations.items.isEmpty)
        #expect(
            try await server.request(
                "POST", Endpoints.groups, token: owner, json: CreateGroupRequest(guid: "g", name: "again")
            ).status == 409)
    }

    @Test func moderatorsDeleteOthersMessagesParticipantsDoNot() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let moderator = try await server.user("mod")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        try await server.group("g", by: owner)
        try await server.addMember("mod", to: "g", scope: .moderator, by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        try await server.addMember("carol", to: "g", by: owner)
        let ownerMessage = try await server.sendToGroup("from the owner", from: owner, to: "g").decode(
            MessagePayload.self)
        let bobMessage = try await server.sendToGroup("from bob", from: bob, to: "g").decode(MessagePayload.self)

        #expect(
            try await server.request("DELETE", "\(Endpoints.messages)/\(bobMessage.id)", token: carol).status == 403)
        let deleted = try await server.request("DELETE", "\(Endpoints.messages)/\(bobMessage.id)", token: moderator)
        let deletedMessage = try deleted.decode(MessagePayload.self)
        #expect(deleted.status == 200 && deletedMessage.deletedAt != nil)
        #expect(
            try await server.request("DELETE", "\(Endpoints.messages)/\(ownerMessage.id)", token: moderator).status
                == 200)
        // Moving someone else's call needs a moderator too.
        let call = try await server.request(
            "POST", Endpoints.messages, token: bob,
            json: SendMessageRequest(muid: "call", receiver: "g", receiverType: .group, category: .call, type: "audio")
        )
        .decode(MessagePayload.self)
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.messages)/\(call.id)", token: carol,
                json: EditMessageRequest(callStatus: .ongoing)
            ).status == 403)
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.messages)/\(call.id)", token: moderator,
                json: EditMessageRequest(callStatus: .ongoing)
            ).status == 200)
        // Editing stays with the sender.
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.messages)/\(ownerMessage.id)", token: moderator,
                json: EditMessageRequest(text: "x")
            ).status == 403)
    }

    @Test func groupMessagesReachMembersAndThreadsAndMentionsWork() async throws {
        let server = try InProcessServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        let outsider = try await server.user("outsider")
        try await server.group("g", by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        let head = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        let parent = try await server.sendToGroup("hi <@uid:bob> and <@uid:outsider>", from: owner, to: "g").decode(
            MessagePayload.self)
        #expect(
            parent.receiverType == .group && parent.receiver == "g"
                && parent.conversationId == ConversationPayload.groupID("g"))
        let reply = try await server.request(
            "POST", Endpoints.messages, token: bob,
            json: SendMessageRequest(
                muid: "r1", receiver: "g", receiverType: .group, text: "yes",
                parentMessageId: parent.id))
        #expect(reply.status == 201)
        let changes = try await server.request("GET", "\(Endpoints.changes)?cursor=\(head)", token: bob).decode(
            ChangelogPage.self
        ).changes
        // bob's own log (the mention) first, then the group's.
        #expect(changes.map(\.kind) == [.notificationCreated, .messageCreated, .messageCreated, .messageUpdated])
        #expect(changes[3].message?.replyCount == 1)
        let outsiderFeed = try await server.request("GET", Endpoints.notifications, token: outsider).decode(
            [FeedItemPayload].self)
        #expect(outsiderFeed.isEmpty, "mentioning a non-member notifies nobody")
        // Bob read the owner's message by replying; the owner has bob's reply unread.
        let conversation = try await server.request(
            "GET", "\(Endpoints.conversations)/\(ConversationPayload.groupID("g"))", token: owner
        )
        .decode(ConversationPayload.self)
        #expect(conversation.unreadMessageCount == 1 && conversation.lastMessage?.text == "yes")
        let bobs = try await server.request(
            "GET", "\(Endpoints.conversations)/\(ConversationPayload.groupID("g"))", token: bob
        )
        .decode(ConversationPayload.self)
        #expect(bobs.unreadMessageCount == 0)
        #expect(conversation.peerReadMessageId == nil)
    }

    @Test func typingInAGroupReachesItsMembersOnly() async throws {
        let server = try LiveServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        try await server.group("g", by: owner)
        try await server.addMember("bob", to: "g", by: owner)
        let (ownerSocket, _) = try server.realtime(owner)
        let (bobSocket, _) = try server.realtime(bob)
        let (carolSocket, _) = try server.realtime(carol)
        func typing(_ receiver: String, _ type: ReceiverType) throws -> String {
            String(
                decoding: try JSONEncoder().encode(
                    RealtimeEnvelope(
                        type: .typing,
                        typing: TypingPayload(
                            receiver: receiver, receiverType: type,
                            isTyping: true))), as: UTF8.self)
        }
        // Carol is no member: her group typing is dropped, and her direct typing to bob
        // (the same socket, so processed after it) is the first thing bob sees.
        try carolSocket.send(text: try typing("g", .group))
        try carolSocket.send(text: try typing("bob", .user))
        var seen = try bobSocket.nextEnvelope()
        #expect(seen.typing?.sender == "carol" && seen.typing?.receiverType == .user)
        try ownerSocket.send(text: try typing("g", .group))
        seen = try bobSocket.nextEnvelope()
        #expect(seen.typing?.sender == "owner" && seen.typing?.receiverType == .group && seen.typing?.receiver == "g")

        // Once bob is kicked, the owner's group typing no longer reaches him.
        #expect(try await server.request("DELETE", "\(Endpoints.groups)/g/members/bob", token: owner).status == 204)
        #expect(try bobSocket.nextEnvelope().change?.message?.action?.action == .kicked)
        try ownerSocket.send(text: try typing("g", .group))
        try ownerSocket.send(text: try typing("bob", .user))
        seen = try bobSocket.nextEnvelope()
        #expect(seen.typing?.receiverType == .user)
    }

    /// A group larger than 1,000 members relays no typing: a keystroke would be a frame to
    /// each of thousands of sockets. Its messages still arrive.
    @Test func aLargeGroupRelaysNoTyping() async throws {
        let server = try LiveServer()
        let owner = try await server.user("owner")
        let bob = try await server.user("bob")
        try await server.group("big", by: owner)
        try await server.addMember("bob", to: "big", by: owner)
        for chunk in 0..<2 {
            let members = (0..<500).map { AddMemberRequest(uid: "m\(chunk)-\($0)") }
            for member in members {
                _ = try await server.request(
                    "POST", Endpoints.adminUsers, admin: true, json: CreateUserRequest(uid: member.uid))
            }
            let added = try await server.request(
                "POST", "\(Endpoints.groups)/big/members", token: owner, json: AddMembersRequest(members: members))
            #expect(added.status == 200)
        }
        let (ownerSocket, _) = try server.realtime(owner)
        let (bobSocket, _) = try server.realtime(bob)
        let typing = RealtimeEnvelope(
            type: .typing, typing: TypingPayload(receiver: "big", receiverType: .group, isTyping: true))
        try ownerSocket.send(text: String(decoding: try JSONEncoder().encode(typing), as: UTF8.self))
        #expect(try await server.sendToGroup("after the typing", from: owner, to: "big").status == 201)
        let next = try bobSocket.nextEnvelope()
        #expect(next.type == .change && next.change?.message?.text == "after the typing", "no typing frame first")
    }
}

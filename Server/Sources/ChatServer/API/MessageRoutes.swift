import Foundation
import OfflineChatProtocol

/// `/v1/messages`: sends, edits, deletions, reactions, threads and message lists.
extension Routes {
    func messageID(_ context: RouteContext) throws -> Int64 {
        guard let id = Int64(context.parameter("id")), id > 0 else {
            throw HTTPError.notFound("no message \(context.parameter("id"))")
        }
        return id
    }

    func addMessages(to router: inout Router) {
        signedIn(&router, "POST", Endpoints.messages) { context, uid in
            let request = try context.decode(SendMessageRequest.self, commonShape: PlainSendBody.read)
            try Validate.send(request, from: uid, httpsMedia: allowHTTPSMedia)
            let sent = try store.sendEncoded(from: uid, request)
            return .json(try sent.json(), status: sent.created ? 201 : 200)
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}") { context, uid in
            return .json(try store.message(try messageID(context), for: uid))
        }
        signedIn(&router, "PATCH", Endpoints.messages + "/{id}") { context, uid in
            let request = try context.decode(EditMessageRequest.self)
            guard
                request.text != nil || request.customData != nil || request.metadata != nil || request.callStatus != nil
            else {
                throw HTTPError.validation("send at least one of `text`, `customData`, `metadata`, `callStatus`")
            }
            guard
                request.callStatus == nil
                    || (request.text == nil && request.customData == nil && request.metadata == nil)
            else {
                throw HTTPError.validation("change `callStatus` on its own")
            }
            try Validate.text(request.text, field: "text", max: 64 << 10, required: request.text != nil)
            try Validate.json(request.customData, field: "customData")
            try Validate.metadata(request.metadata)
            return .json(try store.edit(try messageID(context), by: uid, request))
        }
        signedIn(&router, "DELETE", Endpoints.messages + "/{id}") { context, uid in
            return .json(try store.delete(try messageID(context), by: uid))
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}/thread") { context, uid in
            return .json(
                try store.messages(
                    try messageQuery(context, scope: .thread(parentId: try messageID(context))), for: uid))
        }
        signedIn(&router, "POST", Endpoints.messages + "/{id}/reactions") { context, uid in
            let request = try context.decode(AddReactionRequest.self)
            try Validate.text(request.reaction, field: "reaction", max: 64, required: true)
            guard !request.reaction.contains("/") else { throw HTTPError.validation("`reaction` must not contain /") }
            let (message, added) = try store.react(request.reaction, to: try messageID(context), by: uid)
            return .json(message, status: added ? 201 : 200)
        }
        signedIn(&router, "DELETE", Endpoints.messages + "/{id}/reactions/{reaction}") { context, uid in
            return .json(try store.unreact(context.parameter("reaction"), from: try messageID(context), by: uid))
        }
        signedIn(&router, "GET", Endpoints.messages + "/{id}/reactions") { context, uid in
            let limit = try limit(context)
            let after = try context.intQuery("after", in: 0...Int64.max)
            let before = try context.intQuery("before", in: 1...Int64.max)
            guard before == nil || after == nil else {
                throw HTTPError.badParameter("give `before` or `after`, not both")
            }
            let reaction = context.request.query["reaction"].flatMap { $0.isEmpty ? nil : $0 }
            return .json(
                try store.reactions(
                    on: try messageID(context), for: uid, reaction: reaction,
                    after: after, before: before, limit: limit))
        }
    }

    /// The message list's query arguments (the `MessagesRequest` builder's filters).
    func messageQuery(_ context: RouteContext, scope: MessageQuery.Scope) throws -> MessageQuery {
        var query = MessageQuery(scope: scope)
        query.limit = try limit(context)
        query.beforeId = try context.intQuery("before", in: 1...Int64.max)
        query.afterId = try context.intQuery("after", in: 0...Int64.max)
        query.sentBefore = try context.intQuery("sentBefore", in: 1...Int64.max)
        query.sentAfter = try context.intQuery("sentAfter", in: 0...Int64.max)
        query.updatedAfter = try context.intQuery("updatedAfter", in: 0...Int64.max)
        let anchoredForward = query.afterId != nil || query.sentAfter != nil || query.updatedAfter != nil
        guard !(anchoredForward && (query.beforeId != nil || query.sentBefore != nil)) else {
            throw HTTPError.badParameter(
                "page one way: give `before`/`sentBefore` or `after`/`sentAfter`/`updatedAfter`, not both")
        }
        query.categories = try Self.list(context.request.query["categories"], name: "categories")
        query.types = try Self.list(context.request.query["types"], name: "types")
        query.hideReplies = try context.boolQuery("hideReplies")
        query.hideDeleted = try context.boolQuery("hideDeleted")
        query.hasLinks = try context.boolQuery("hasLinks")
        query.updatesOnly = try context.boolQuery("updatesOnly")
        guard !query.updatesOnly || query.updatedAfter != nil else {
            throw HTTPError.badParameter("`updatesOnly` needs `updatedAfter`")
        }
        query.searchKeyword = keyword(context)
        // `uid` (the `MessagesRequest` builder's name, one sender in a group) or `sender`.
        let senders = Set(["uid", "sender"].compactMap { context.request.query[$0] }.filter { !$0.isEmpty })
        guard senders.count <= 1 else { throw HTTPError.badParameter("`uid` and `sender` name different senders") }
        query.sender = senders.first
        return query
    }
}

import Foundation
import OfflineChatProtocol

/// `/v1/conversations`: the conversation list, one conversation, its messages, receipts.
extension Routes {
    func addConversations(to router: inout Router) {
        signedIn(&router, "GET", Endpoints.conversations) { context, uid in
            return .json(
                try store.conversations(for: uid, cursor: context.request.query["cursor"], limit: try limit(context)))
        }
        signedIn(&router, "GET", Endpoints.conversations + "/{id}") { context, uid in
            return .json(try store.conversation(context.parameter("id"), for: uid))
        }
        signedIn(&router, "GET", Endpoints.conversations + "/{id}/messages") { context, uid in
            return .json(
                try store.messages(try messageQuery(context, scope: .conversation(context.parameter("id"))), for: uid))
        }
        for kind in [ReceiptPayload.Kind.delivered, .read] {
            signedIn(&router, "POST", Endpoints.conversations + "/{id}/\(kind.rawValue)") { context, uid in
                let request = try context.decode(ReceiptRequest.self)
                return .json(try store.receipt(kind, by: uid, in: context.parameter("id"), upTo: request.messageId))
            }
        }
    }
}

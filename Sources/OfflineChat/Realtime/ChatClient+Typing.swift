extension ChatClient {
    /// Tells `receiverId` (a user, or a group's members) that the logged-in user is typing.
    /// Best effort over the realtime connection: nothing happens offline.
    public func startTyping(receiverId: String, receiverType: ReceiverType = .user) {
        sendTyping(receiverId, receiverType, isTyping: true)
    }

    /// Ends `startTyping`.
    public func endTyping(receiverId: String, receiverType: ReceiverType = .user) {
        sendTyping(receiverId, receiverType, isTyping: false)
    }

    private func sendTyping(_ receiver: String, _ type: ReceiverType, isTyping: Bool) {
        guard let current = session.current else { return }
        let envelope = RealtimeEnvelope(
            type: .typing, typing: TypingPayload(receiver: receiver, receiverType: type, isTyping: isTyping))
        guard let data = try? APIClient.encoder.encode(envelope) else { return }
        current.realtime.send(String(decoding: data, as: UTF8.self))
    }
}

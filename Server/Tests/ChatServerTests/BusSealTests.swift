import Testing

@testable import ChatServer

/// Frames on the bus are sealed with the cluster's secret: they open on a node with the same
/// secret and on no other, and a frame changed in any byte does not open at all.
@Suite struct BusSealTests {
    static let secret = Array("a secret the cluster's nodes share, 32+ bytes".utf8)

    func open(_ seal: BusSeal, _ bytes: [UInt8]) -> [UInt8]? { bytes.withUnsafeBufferPointer { seal.open($0) } }

    @Test func aFrameOpensUnderTheSameSecretOnly() throws {
        let (sender, receiver) = (try BusSeal(secret: Self.secret), try BusSeal(secret: Self.secret))
        let message = Array("c\n7\nbob\n0\n{\"text\":\"the secret plan\"}".utf8)
        let sealed = sender.seal(message)
        #expect(open(receiver, sealed) == message)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("secret plan"), "nothing readable on the wire")
        #expect(!String(decoding: sealed, as: UTF8.self).contains("bob"))
        #expect(open(try BusSeal(secret: Array("another cluster's secret, also 32+ bytes".utf8)), sealed) == nil)
        #expect(open(receiver, message) == nil, "a frame in the clear is refused")
        for index in [0, 1, BusSeal.headerSize - 1, BusSeal.headerSize, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 1
            #expect(open(receiver, tampered) == nil, "byte \(index) changed")
        }
        #expect(open(receiver, Array(sealed.dropLast())) == nil)
        #expect(open(receiver, []) == nil)
    }

    /// Each frame of a sender has a nonce of its own (the counter), and two senders never share
    /// a key (each its own salt): the same text sealed twice differs.
    @Test func noTwoFramesShareANonce() throws {
        let (first, second) = (try BusSeal(secret: Self.secret), try BusSeal(secret: Self.secret))
        let frames = (0..<3).map { _ in first.seal(Array("typing".utf8)) } + [second.seal(Array("typing".utf8))]
        #expect(Set(frames).count == 4)
        let nonces = frames.map { Array($0[1..<BusSeal.headerSize]) }
        #expect(Set(nonces).count == 4)
    }

    @Test func aShortSecretIsRefused() {
        #expect(throws: StoreError.self) { try BusSeal(secret: Array("too short".utf8)) }
    }

    /// Each kind of frame reads back as written, typing frames with newlines of their own.
    @Test func everyKindOfMessageReadsBackAsWritten() {
        let messages: [BusMessage] = [
            .change(
                Position(uid: "bob", pts: 7), body: "{\"a\":\"x\\ny\"}", group: nil, publishedAt: 1_700_000_000_000),
            .change(
                Position(uid: "bob", pts: 8), body: "{\"b\":\"\\n\"}",
                group: GroupPlace(conversationId: "group_g.x", pts: 3, span: .closes("bob")), publishedAt: 1),
            .change(
                Position(uid: "bob", pts: 9), body: "{}",
                group: GroupPlace(conversationId: "group_g", pts: 4, span: nil),
                publishedAt: 2),
            .change(
                Position(uid: "bob", pts: 10), body: "{}",
                group: GroupPlace(conversationId: "group_g", pts: 5, span: .closesAll), publishedAt: 3),
            .typing(uid: "bob", frame: Array("line\none".utf8)),
            .groupTyping(guid: "crowd", sender: "alice", frame: Array("a\nb\nc".utf8)),
            .revoke(tokenHash: "abc123")
        ]
        for message in messages {
            #expect(message.encoded.withUnsafeBufferPointer(BusMessage.init) == message)
        }
    }
}

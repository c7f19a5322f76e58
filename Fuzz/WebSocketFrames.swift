// libFuzzer target: RFC 6455 frames and messages from untrusted bytes (compiled with the
// WebSocket module's sources by scripts/fuzz.sh). The first byte picks the role (a server
// reads masked frames, a client unmasked ones) and where the rest is split in two, so frames
// cut across reads are exercised too. Any crash, hang or memory error is a finding; a thrown
// WebSocketError is the parser doing its job.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    let rest = bytes.dropFirst()
    var parser = WebSocketParser(role: control & 1 == 0 ? .server : .client, maxMessageSize: 1 << 16)
    let split = rest.isEmpty ? 0 : Int(control >> 1) % (rest.count + 1)
    for part in [rest.prefix(split), rest.dropFirst(split)] {
        parser.append(part)
        while true {
            do {
                guard let message = try parser.next() else { break }
                if case .close = message { return 0 }
            } catch {
                return 0
            }
        }
    }
    _ = Handshake.isValidKey(String(decoding: rest, as: UTF8.self))
    return 0
}

import OfflineChatProtocol

/// JSON text already written (kept message bodies, stored changes), answered as it is.
public struct EncodedJSON: Sendable, Equatable {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }

    /// `[a,b,…]` from element texts, each appended unparsed.
    struct Array {
        private var bytes: [UInt8] = []
        private var empty = true

        /// Room for `capacity` bytes of elements and their commas before the array grows.
        init(capacity: Int = 16_384) {
            bytes.reserveCapacity(capacity + 2)
            bytes.append(UInt8(ascii: "["))
        }

        mutating func append(_ element: some Sequence<UInt8>) {
            if !empty { bytes.append(UInt8(ascii: ",")) }
            empty = false
            bytes.append(contentsOf: element)
        }

        consuming func closed() -> EncodedJSON {
            bytes.append(UInt8(ascii: "]"))
            return EncodedJSON(bytes: bytes)
        }
    }

    /// A `Page` of `items`: `{"items":[…],"next":…}`, `next` left out on the last page.
    static func page(_ items: Array, next: String?) throws -> EncodedJSON {
        var bytes = Swift.Array(#"{"items":"#.utf8) + items.closed().bytes
        if let next { bytes += Swift.Array(#","next":"#.utf8) + (try CompactJSONEncoder().encode(next)) }
        return EncodedJSON(bytes: bytes + [UInt8(ascii: "}")])
    }
}

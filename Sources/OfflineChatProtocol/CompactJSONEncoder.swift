import Foundation

/// Encodes `Encodable` values as compact JSON straight into bytes, several times faster than
/// Foundation's `JSONEncoder`, which builds a tree of every value first (chatd's profile of the
/// conversation list: 61% of the request in `JSONEncoder`).
///
/// Keys come in the order the type encodes them (declaration order for synthesized
/// conformances; a dictionary's own order), `/` is not escaped, `nil` optionals are left out
/// as `encodeIfPresent` does. Anything outside that shape (nested or super encoders, a
/// non-finite number, `Date`/`Data`) is handed whole to `JSONEncoder`, so every value encodes,
/// and the two decode the same (`CompactJSONEncoderTests`).
public struct CompactJSONEncoder: Sendable {
    /// Messages, conversations, users and groups by their hand-written writers
    /// (`MessagePayload.writeJSON`, …); off only in the tests that compare them with the
    /// `Encodable` path.
    let handWritten: Bool

    /// Creates an encoder.
    public init() { handWritten = true }

    init(handWritten: Bool) { self.handWritten = handWritten }

    /// `value` as compact JSON bytes (through `JSONEncoder` when this encoder cannot write it).
    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try JSONByteWriter.written(
            handWritten: handWritten, { try $0.encodeValue(value) },
            orElse: {
                let fallback = JSONEncoder()
                fallback.outputFormatting = [.withoutEscapingSlashes]
                return Array(try fallback.encode(value))
            })
    }
}

/// The encoder behind `CompactJSONEncoder`: containers are written as they open, and closed
/// when the value that opened them has finished encoding.
final class JSONByteWriter: Encoder {
    struct Unsupported: Error {}

    // Only this writer's one encoding touches its state, never two accesses at once: the
    // run-time exclusivity checks (a fifth of the writer's time) are left out.
    @exclusivity(unchecked) var bytes: [UInt8] = []
    /// Set when the value asked for what this writer does not write (a nested or super
    /// encoder, handed out as a throwaway writer): the bytes are not to be used.
    var unsupported = false
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// Open containers, innermost last: whether each is an object, and whether it holds a value yet.
    @exclusivity(unchecked) private var open: [(object: Bool, filled: Bool)] = []
    /// How many containers were open when the value being encoded began.
    private var valueStart = 0

    /// Whether messages, conversations, users and groups go through their hand-written writers.
    let handWritten: Bool

    init(handWritten: Bool = true) {
        self.handWritten = handWritten
        bytes.reserveCapacity(1024)
    }

    /// What `write` writes on a fresh writer, or `fallback()`'s bytes when a value asked for
    /// what this writer does not write.
    static func written(
        handWritten: Bool = true, _ write: (JSONByteWriter) throws -> Void, orElse fallback: () throws -> [UInt8]
    ) throws -> [UInt8] {
        let writer = JSONByteWriter(handWritten: handWritten)
        do {
            try write(writer)
            if !writer.unsupported { return writer.bytes }
        } catch is Unsupported {}
        return try fallback()
    }

    /// Writes `value`, closing whatever containers it opened.
    func encodeValue<T: Encodable>(_ value: T) throws {
        // Types compared, not values cast: a cast per value costs more than writing most of them.
        if T.self == String.self { return writeString(unsafeBitCast(value, to: String.self)) }
        if T.self == URL.self { return writeString(unsafeBitCast(value, to: URL.self).absoluteString) }
        if T.self == Date.self || T.self == Data.self { throw Unsupported() }  // JSONEncoder's strategies decide those
        if handWritten {
            if T.self == MessagePayload.self {
                return try unsafeBitCast(value, to: MessagePayload.self).writeJSON(to: self)
            }
            if T.self == ConversationPayload.self {
                return try unsafeBitCast(value, to: ConversationPayload.self).writeJSON(to: self)
            }
            if T.self == UserPayload.self { return try unsafeBitCast(value, to: UserPayload.self).writeJSON(to: self) }
            if T.self == GroupPayload.self {
                return try unsafeBitCast(value, to: GroupPayload.self).writeJSON(to: self)
            }
            // A history page and a list page: their arrays too (the generic container costs
            // a third of writing the messages themselves).
            if T.self == [MessagePayload].self {
                return try writeArray(unsafeBitCast(value, to: [MessagePayload].self)) { try $0.writeJSON(to: self) }
            }
            if T.self == [ConversationPayload].self {
                return try writeArray(unsafeBitCast(value, to: [ConversationPayload].self)) {
                    try $0.writeJSON(to: self)
                }
            }
        }
        let (outer, written) = (valueStart, bytes.count)
        valueStart = open.count
        defer { valueStart = outer }
        try value.encode(to: self)
        while open.count > valueStart { close() }
        if bytes.count == written { unsupported = true }  // it encoded nothing (JSONEncoder writes `{}`)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if open.count == valueStart { openContainer(object: true) }
        return KeyedEncodingContainer(Keyed<Key>(writer: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if open.count == valueStart { openContainer(object: false) }
        return Unkeyed(writer: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(writer: self) }

    private func openContainer(object: Bool) {
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        open.append((object, false))
    }

    private func close() {
        bytes.append(open.removeLast().object ? UInt8(ascii: "}") : UInt8(ascii: "]"))
    }

    /// A comma before every value of a container but its first.
    func separate() {
        guard !open.isEmpty else { return }
        if open[open.count - 1].filled { bytes.append(UInt8(ascii: ",")) } else { open[open.count - 1].filled = true }
    }

    func writeKey(_ key: any CodingKey) {
        separate()
        writeString(key.stringValue)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `string` quoted, `"`, `\` and control characters escaped; the stretches between
    /// escapes are copied whole.
    func writeString(_ string: String) {
        var string = string
        bytes.append(UInt8(ascii: "\""))
        string.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                writeEscaped(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private func writeEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
        case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        }
    }

    /// The decimal digits, written in place (no `String` made per number).
    func writeInteger<I: BinaryInteger>(_ value: I) {
        guard let wide = Int64(exactly: value) else {
            bytes += String(value).utf8
            return
        }
        if wide < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = wide.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, filled from the end
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[24 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }

    func writeNumber(_ value: Double) throws {
        guard value.isFinite else { throw Unsupported() }
        bytes += String(value).utf8
    }

    func writeBool(_ value: Bool) { bytes += (value ? "true" : "false").utf8 }

    func writeNull() { bytes += "null".utf8 }

    /// A writer whose bytes go nowhere, for the shapes this one does not write.
    func elsewhere() -> JSONByteWriter {
        unsupported = true
        return JSONByteWriter()
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let writer: JSONByteWriter
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeNull()
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeBool(value)
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeString(value)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            writer.writeKey(key)
            try writer.writeNumber(value)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            writer.writeKey(key)
            try writer.writeNumber(Double(value))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            writer.writeKey(key)
            writer.writeInteger(value)
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            writer.writeKey(key)
            try writer.encodeValue(value)
        }
        // Optionals written here rather than through the protocol's generic default (which
        // looked up `Optional<T>`'s metadata for every field).
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            guard let value else { return }
            writer.writeKey(key)
            try writer.encodeValue(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type,
            forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            writer.elsewhere().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            writer.elsewhere().unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder { writer.elsewhere() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { writer.elsewhere() }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let writer: JSONByteWriter
        var codingPath: [any CodingKey] { [] }
        private(set) var count = 0

        init(writer: JSONByteWriter) { self.writer = writer }

        mutating func encodeNil() throws {
            next()
            writer.writeNull()
        }
        mutating func encode(_ value: Bool) throws {
            next()
            writer.writeBool(value)
        }
        mutating func encode(_ value: String) throws {
            next()
            writer.writeString(value)
        }
        mutating func encode(_ value: Double) throws {
            next()
            try writer.writeNumber(value)
        }
        mutating func encode(_ value: Int) throws {
            next()
            writer.writeInteger(value)
        }
        mutating func encode(_ value: Int64) throws {
            next()
            writer.writeInteger(value)
        }
        mutating func encode<T: Encodable>(_ value: T) throws {
            next()
            try writer.encodeValue(value)
        }

        private mutating func next() {
            writer.separate()
            count += 1
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            writer.elsewhere().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { writer.elsewhere().unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { writer.elsewhere() }
    }

    private struct Single: SingleValueEncodingContainer {
        let writer: JSONByteWriter
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { writer.writeNull() }
        mutating func encode(_ value: Bool) throws { writer.writeBool(value) }
        mutating func encode(_ value: String) throws { writer.writeString(value) }
        mutating func encode(_ value: Double) throws { try writer.writeNumber(value) }
        mutating func encode(_ value: Float) throws { try writer.writeNumber(Double(value)) }
        mutating func encode(_ value: Int) throws { writer.writeInteger(value) }
        mutating func encode(_ value: Int8) throws { writer.writeInteger(value) }
        mutating func encode(_ value: Int16) throws { writer.writeInteger(value) }
        mutating func encode(_ value: Int32) throws { writer.writeInteger(value) }
        mutating func encode(_ value: Int64) throws { writer.writeInteger(value) }
        mutating func encode(_ value: UInt) throws { writer.writeInteger(value) }
        mutating func encode(_ value: UInt8) throws { writer.writeInteger(value) }
        mutating func encode(_ value: UInt16) throws { writer.writeInteger(value) }
        mutating func encode(_ value: UInt32) throws { writer.writeInteger(value) }
        mutating func encode(_ value: UInt64) throws { writer.writeInteger(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try writer.encodeValue(value) }
    }
}

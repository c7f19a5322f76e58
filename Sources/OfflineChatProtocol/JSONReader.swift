import Foundation

/// A forward-only reader of one JSON text (RFC 8259) for the hot decoding paths: the caller
/// walks the document it expects (objects key by key, arrays element by element) and reads
/// each value as the type it wants, so nothing is built that is not kept. Linear in the input;
/// nesting deeper than `maxDepth` is refused before it is descended into.
///
/// Invalid UTF-8 inside strings is repaired with U+FFFD, as `String(decoding:as:)` does.
/// Values a caller has no fast path for are handed to `JSONDecoder` as their own bytes
/// (`decode(_:using:)`), and keys it does not know are skipped, as a `Decodable` would.
public struct JSONReader {
    /// Why a text could not be read, and where.
    public struct Failure: Error, CustomStringConvertible {
        /// The byte offset in the text where reading failed (0 or -1 when no single byte is at fault).
        public var offset: Int
        /// What was wrong, in words.
        public var reason: String
        /// The text nests deeper than `maxDepth` (it may be valid JSON all the same).
        public var tooDeep = false
        /// The offset and the reason, for error messages.
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }

        /// Creates a failure with every field.
        public init(offset: Int, reason: String, tooDeep: Bool = false) {
            self.offset = offset
            self.reason = reason
            self.tooDeep = tooDeep
        }
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// The most levels of objects and arrays the reader descends into.
    public let maxDepth: Int

    /// A reader of `bytes` that refuses nesting deeper than `maxDepth` levels.
    public init(_ bytes: some Sequence<UInt8>, maxDepth: Int = 64) {
        self.bytes = Array(bytes)
        self.maxDepth = maxDepth
    }

    // MARK: - Structure

    /// Reads an object, calling `body` with each key; `body` must read (or `skip`) its value.
    public mutating func object(_ body: (String, inout JSONReader) throws -> Void) throws {
        try elements(between: UInt8(ascii: "{"), and: UInt8(ascii: "}"), of: "an object") { reader in
            let key = try reader.string()
            try reader.expect(UInt8(ascii: ":"))
            try body(key, &reader)
        }
    }

    /// Reads an array, calling `body` once per element; `body` must read (or `skip`) it.
    public mutating func array(_ body: (inout JSONReader) throws -> Void) throws {
        try elements(between: UInt8(ascii: "["), and: UInt8(ascii: "]"), of: "an array", body)
    }

    /// `open`, then `element`s separated by commas, then `close`; one level deeper meanwhile.
    private mutating func elements(
        between open: UInt8, and close: UInt8, of what: String,
        _ element: (inout JSONReader) throws -> Void
    ) throws {
        try expect(open)
        try descend()
        defer { depth -= 1 }
        if try peek() == close {
            index += 1
            return
        }
        while true {
            try element(&self)
            switch try next() {
            case UInt8(ascii: ","): continue
            case close: return
            default: throw failure(at: index - 1, "expected , or \(Character(Unicode.Scalar(close))) in \(what)")
            }
        }
    }

    /// Nothing but whitespace is left.
    public mutating func end() throws {
        skipWhitespace()
        guard index == bytes.count else { throw failure(at: index, "unexpected data after the value") }
    }

    /// `nil` for a JSON `null` (consumed), else what `read` makes of the value.
    public mutating func optional<T>(_ read: (inout JSONReader) throws -> T) throws -> T? {
        if try peek() == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try read(&self)
    }

    // MARK: - Scalars

    /// Reads a string, unescaped.
    public mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // The common case: no escapes, so the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw failure(at: index, "a control character in a string") }
            index += 1
        }
        throw failure(at: start, "an unterminated string")
    }

    /// Reads a number that is an integer fitting 64 bits (`1.0` and `1e3` count).
    public mutating func int64() throws -> Int64 {
        skipWhitespace()
        let (start, integral) = try number()
        if integral, let value = exactInteger(bytes[start..<index]) { return value }
        // 1.0 or 1e3 still name an integer; anything else does not fit.
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)),
            value.rounded() == value, let exact = Int64(exactly: value)
        else {
            throw failure(at: start, "not an integer that fits 64 bits")
        }
        return exact
    }

    /// Reads a number.
    public mutating func double() throws -> Double {
        skipWhitespace()
        let (start, _) = try number()
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw failure(at: start, "not a number")
        }
        return value
    }

    /// Reads `true` or `false`.
    public mutating func bool() throws -> Bool {
        if try peek() == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    // MARK: - Whole values

    /// Any value, as a tree.
    public mutating func value() throws -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"):
            var members: [String: JSONValue] = [:]
            try object { key, reader in members[key] = try reader.value() }
            return .object(members)
        case UInt8(ascii: "["):
            var elements: [JSONValue] = []
            try array { reader in elements.append(try reader.value()) }
            return .array(elements)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool(try bool())
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default: return .number(try double())
        }
    }

    /// Passes over one value (checking it all the same).
    public mutating func skip() throws {
        switch try peek() {
        case UInt8(ascii: "{"): try object { _, reader in try reader.skip() }
        case UInt8(ascii: "["): try array { reader in try reader.skip() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try double()
        }
    }

    /// The next value through `Decodable` (for the rarer shapes a caller has no fast path
    /// for): its own bytes are handed to `decoder`.
    public mutating func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder) throws -> T {
        skipWhitespace()
        let start = index
        try skip()
        return try decoder.decode(T.self, from: Data(bytes[start..<index]))
    }

    // MARK: - Internals

    private mutating func escapedString(from start: Int) throws -> String {
        var text = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"): text.append(contentsOf: String(try unicodeEscape()).utf8)
                default: throw failure(at: index - 1, "an unknown escape")
                }
            case 0..<0x20: throw failure(at: index - 1, "a control character in a string")
            default: text.append(byte)
            }
        }
        throw failure(at: start, "an unterminated string")
    }

    /// After `\u`: one scalar, joining a surrogate pair; a lone surrogate becomes U+FFFD.
    private mutating func unicodeEscape() throws -> Character {
        let first = try hex4()
        if (0xD800..<0xDC00).contains(first), index + 1 < bytes.count,
            bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
        {
            let save = index
            index += 2
            let second = try hex4()
            if (0xDC00..<0xE000).contains(second) {
                return Character(Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!)
            }
            index = save
        }
        return Character(Unicode.Scalar(first) ?? "\u{FFFD}")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure(at: index, "a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8 =
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
                default: throw failure(at: index, "not a hex digit")
                }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Scans `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`; says whether it had neither a
    /// fraction nor an exponent.
    private mutating func number() throws -> (start: Int, integral: Bool) {
        let start = index
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure(at: start, "expected a value") }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else { skipDigits() }
        var integral = true
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure(at: index, "a digit must follow the point")
            }
            skipDigits()
            integral = false
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure(at: index, "a digit must follow the exponent")
            }
            skipDigits()
            integral = false
        }
        return (start, integral)
    }

    /// A scanned integer's digits (with an optional minus), or nil when it does not fit.
    private func exactInteger(_ digits: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        let negative = digits.first == UInt8(ascii: "-")
        for byte in digits.dropFirst(negative ? 1 : 0) {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (next, overflow2) =
                negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow || overflow2 { return nil }
            value = next
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count && isDigit(bytes[index]) { index += 1 }
    }

    private mutating func literal(_ word: StaticString) throws {
        skipWhitespace()
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
            word.withUTF8Buffer({ $0.elementsEqual(bytes[index..<(index + count)]) })
        else {
            throw failure(at: index, "expected \(word)")
        }
        index += count
    }

    private mutating func descend() throws {
        depth += 1
        guard depth <= maxDepth else {
            throw Failure(offset: index, reason: "nested deeper than \(maxDepth) levels", tooDeep: true)
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The next significant byte, not consumed.
    private mutating func peek() throws -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw failure(at: index, "unexpected end of input") }
        return bytes[index]
    }

    private mutating func next() throws -> UInt8 {
        let byte = try peek()
        index += 1
        return byte
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try next() == byte else { throw failure(at: index - 1, "expected \(Character(Unicode.Scalar(byte)))") }
    }

    private func failure(at offset: Int, _ reason: String) -> Failure {
        Failure(offset: offset, reason: reason)
    }
}

/// Free-form JSON (user metadata, custom message data), kept as a typed tree.
public enum JSONValue: Codable, Sendable, Hashable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; every JSON number is kept as a `Double`.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its members by key (their order is not kept).
    case object([String: JSONValue])

    /// Linear in the input: each value is asked for its kind once, containers first (asking a
    /// nested array whether it is a number, a string, … at every level cost far more).
    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .number(try container.decode(Double.self))
            }
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes the JSON the value stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A `.number`.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A `.number`.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// An `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An `.object`; of repeated keys, the last wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
}

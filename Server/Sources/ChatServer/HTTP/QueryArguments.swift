/// A request's decoded query arguments, in the order sent; for a repeated name the last value
/// wins.
///
/// A request carries few arguments and a route asks for up to 17 names that are mostly absent
/// (a message list's filters), so a name is found by comparing it with each argument's: a
/// dictionary hashed every one of those names, a twentieth of a history read. Adding never
/// searches, so a request with hundreds of arguments costs one pass to build and one a name
/// asked for.
public struct QueryArguments: Sendable, ExpressibleByDictionaryLiteral {
    private var arguments: [(name: String, value: String)] = []

    /// No arguments.
    public init() {}

    /// `arguments` as sent, name then value.
    public init(_ arguments: some Sequence<(String, String)>) {
        for (name, value) in arguments { add(name, value) }
    }

    /// One argument a name, in no particular order.
    public init(_ arguments: [String: String]) { self.init(arguments.map { ($0.key, $0.value) }) }

    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The value of `name`'s last argument, nil when there is none.
    public subscript(name: String) -> String? {
        arguments.last { $0.name == name }?.value
    }

    /// Whether the request sent none.
    public var isEmpty: Bool { arguments.isEmpty }

    /// Every argument in the order sent, repeats included.
    public var all: [(name: String, value: String)] { arguments }

    /// One more argument, after the others (it wins over an earlier one of its name).
    public mutating func add(_ name: String, _ value: String) { arguments.append((name, value)) }
}

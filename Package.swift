// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

/// Apple platforms: SQLite comes from Apple's SDK (`SQLite3`), SQLCipher from its official
/// Swift package.
let apple: [Platform] = [.macOS, .iOS, .macCatalyst, .tvOS, .watchOS, .visionOS]
/// Everywhere else both come from the system's packages (Debian's `-dev` packages here).
let systemLibraries: [Platform] = [.linux, .android, .windows, .openbsd]

// The manifest runs on the build host: only a Mac (building for a Mac or for iOS) fetches the
// SQLCipher package. Linux builds (CI, chatd, this repository's tests) resolve nothing.
#if os(Linux)
let sqlcipherPackage: [Package.Dependency] = []
let appleSQLCipher: [Target.Dependency] = []
#else
let sqlcipherPackage: [Package.Dependency] = [
    .package(url: "https://github.com/sqlcipher/SQLCipher.swift.git", from: "4.10.0"),
]
let appleSQLCipher: [Target.Dependency] = [
    .product(name: "SQLCipher", package: "SQLCipher.swift", condition: .when(platforms: apple, traits: ["SQLCipher"])),
]
#endif

let package = Package(
    name: "OfflineChat",
    platforms: [.macOS(.v13), .iOS(.v16), .macCatalyst(.v16), .visionOS(.v1)],
    products: [
        .library(name: "ChatProtocol", targets: ["ChatProtocol"]),
        .library(name: "Locking", targets: ["Locking"]),
        .library(name: "SQLiteKit", targets: ["SQLiteKit"]),
        .library(name: "WebSocket", targets: ["WebSocket"]),
        .library(name: "OfflineChat", targets: ["OfflineChat"]),
        .library(name: "ChatTesting", targets: ["ChatTesting"]),
        .library(name: "ServerProcess", targets: ["ServerProcess"]),
        .executable(name: "chat", targets: ["chat"]),
    ],
    traits: [
        .default(enabledTraits: ["SQLCipher"]),
        .trait(
            name: "SQLCipher",
            description: "Encryption at rest: SQLCipher.swift on Apple platforms, the system's libsqlcipher elsewhere."),
        .trait(
            name: "SystemSQLite",
            description: "The platform's plain SQLite (Apple's SQLite3, the system's libsqlite3); no encryption."),
    ],
    dependencies: sqlcipherPackage,
    targets: [
        .systemLibrary(name: "CSQLCipher", path: "Sources/CSQLCipher", pkgConfig: "sqlcipher",
                       providers: [.apt(["libsqlcipher-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "Locking", swiftSettings: swiftSettings),
        .target(
            name: "SQLiteKit",
            dependencies: [
                "Locking",
                .target(name: "CSQLCipher", condition: .when(platforms: systemLibraries, traits: ["SQLCipher"])),
                .target(name: "CSQLite", condition: .when(platforms: systemLibraries, traits: ["SystemSQLite"])),
            ] + appleSQLCipher,
            swiftSettings: swiftSettings),
        .target(name: "ChatProtocol", swiftSettings: swiftSettings),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // TLS for the Linux transports (Apple platforms use URLSession's).
        .target(name: "WebSocket", dependencies: ["Locking", .target(name: "COpenSSL", condition: .when(platforms: [.linux]))],
                swiftSettings: swiftSettings),
        .target(name: "ChatCache", dependencies: ["ChatProtocol", "SQLiteKit", "Locking"], swiftSettings: swiftSettings),
        .target(name: "OfflineChat", dependencies: ["ChatProtocol", "SQLiteKit", "WebSocket", "ChatCache", "Locking"], swiftSettings: swiftSettings),
        .executableTarget(name: "cache-bench", dependencies: ["ChatCache", "ChatProtocol", "SQLiteKit", "ChatTesting"], swiftSettings: swiftSettings),
        .executableTarget(name: "chat", dependencies: ["OfflineChat", "Locking"], swiftSettings: swiftSettings),
        .executableTarget(name: "outbox-bench", dependencies: ["OfflineChat", "ChatTesting", "ChatCache", "SQLiteKit"], swiftSettings: swiftSettings),
        .executableTarget(name: "cluster-bench", dependencies: ["OfflineChat", "ChatTesting", "ChatProtocol", "WebSocket"],
                          swiftSettings: swiftSettings),
        .executableTarget(name: "sync-bench", dependencies: ["OfflineChat", "ChatTesting", "ChatCache", "SQLiteKit", "Locking"], swiftSettings: swiftSettings),
        .executableTarget(name: "lock-bench", dependencies: ["Locking"], swiftSettings: swiftSettings),
        .executableTarget(name: "json-bench", dependencies: ["ChatProtocol"], swiftSettings: swiftSettings),
        .executableTarget(name: "outbox-crash-probe", dependencies: ["OfflineChat", "ChatTesting"], swiftSettings: swiftSettings),
        .target(name: "ServerProcess", swiftSettings: swiftSettings),
        .target(name: "ChatTesting", dependencies: ["OfflineChat", "ChatCache", "ServerProcess", "Locking", "WebSocket"], swiftSettings: swiftSettings),
        .testTarget(name: "ChatCacheTests", dependencies: ["ChatCache"], swiftSettings: swiftSettings),
        .testTarget(name: "OfflineChatTests", dependencies: ["OfflineChat", "ChatTesting", "WebSocket", "Locking", "ServerProcess"], swiftSettings: swiftSettings),
        // An app's own tests, as an app would write them: public API and ChatTesting only.
        .testTarget(name: "ExampleAppTests", dependencies: ["OfflineChat", "ChatTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "SQLiteKitTests", dependencies: ["SQLiteKit"], swiftSettings: swiftSettings),
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "ServerProcess"], exclude: ["Interop"], swiftSettings: swiftSettings),
        .testTarget(name: "ChatProtocolTests", dependencies: ["ChatProtocol"], swiftSettings: swiftSettings),
        .testTarget(name: "ServerProcessTests", dependencies: ["ServerProcess"], swiftSettings: swiftSettings),
    ]
)

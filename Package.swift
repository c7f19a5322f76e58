// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "OfflineChat",
    // Synchronization's Mutex and Atomic need these on Apple platforms.
    platforms: [.macOS(.v15), .iOS(.v18)],
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
        .trait(name: "SQLCipher", description: "Link Debian's SQLCipher (encryption at rest)."),
        .trait(name: "SystemSQLite", description: "Link the system's plain SQLite; no encryption."),
    ],
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
                .target(name: "CSQLCipher", condition: .when(traits: ["SQLCipher"])),
                .target(name: "CSQLite", condition: .when(traits: ["SystemSQLite"])),
            ],
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
        .target(name: "ChatTesting", dependencies: ["OfflineChat", "ChatCache", "ServerProcess", "Locking"], swiftSettings: swiftSettings),
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

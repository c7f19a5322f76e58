// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
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
    .package(url: "https://github.com/sqlcipher/SQLCipher.swift.git", from: "4.10.0")
]
let appleSQLCipher: [Target.Dependency] = [
    .product(name: "SQLCipher", package: "SQLCipher.swift", condition: .when(platforms: apple, traits: ["SQLCipher"]))
]
#endif

let package = Package(
    name: "OfflineChat",
    platforms: [.macOS(.v13), .iOS(.v16), .macCatalyst(.v16), .visionOS(.v1)],
    products: [
        .library(name: "OfflineChat", targets: ["OfflineChat"]),
        .library(name: "ChatTesting", targets: ["ChatTesting"]),
        // The modules chatd (Server/) and the CLI and benchmarks (Tools/) share with the SDK. Not
        // API: an app imports OfflineChat (and ChatTesting in its tests), nothing else.
        .library(
            name: "_OfflineChatInternals",
            targets: [
                "OfflineChatProtocol", "OfflineChatLocking", "OfflineChatSQLite", "OfflineChatWebSocket",
                "OfflineChatCache",
                "OfflineChatServerProcess"
            ])
    ],
    traits: [
        .default(enabledTraits: ["SQLCipher"]),
        .trait(
            name: "SQLCipher",
            description: "Encryption at rest: SQLCipher.swift on Apple platforms, the system's libsqlcipher elsewhere."),
        .trait(
            name: "SystemSQLite",
            description: "The platform's plain SQLite (Apple's SQLite3, the system's libsqlite3); no encryption.")
    ],
    dependencies: sqlcipherPackage,
    targets: [
        .systemLibrary(name: "COfflineChatSQLCipher", pkgConfig: "sqlcipher", providers: [.apt(["libsqlcipher-dev"])]),
        .systemLibrary(name: "COfflineChatSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COfflineChatOpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "OfflineChatLocking", swiftSettings: swiftSettings),
        .target(
            name: "OfflineChatSQLite",
            dependencies: [
                "OfflineChatLocking",
                .target(
                    name: "COfflineChatSQLCipher", condition: .when(platforms: systemLibraries, traits: ["SQLCipher"])),
                .target(
                    name: "COfflineChatSQLite", condition: .when(platforms: systemLibraries, traits: ["SystemSQLite"]))
            ] + appleSQLCipher,
            swiftSettings: swiftSettings),
        .target(name: "OfflineChatProtocol", swiftSettings: swiftSettings),
        // TLS for the Linux transports (Apple platforms use URLSession's).
        .target(
            name: "OfflineChatWebSocket",
            dependencies: [
                "OfflineChatLocking", .target(name: "COfflineChatOpenSSL", condition: .when(platforms: [.linux]))
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "OfflineChatCache", dependencies: ["OfflineChatProtocol", "OfflineChatSQLite", "OfflineChatLocking"],
            swiftSettings: swiftSettings),
        .target(
            name: "OfflineChat",
            dependencies: [
                "OfflineChatProtocol", "OfflineChatSQLite", "OfflineChatWebSocket", "OfflineChatCache",
                "OfflineChatLocking"
            ],
            swiftSettings: swiftSettings),
        .target(name: "OfflineChatServerProcess", swiftSettings: swiftSettings),
        .target(
            name: "ChatTesting",
            dependencies: [
                "OfflineChat", "OfflineChatCache", "OfflineChatServerProcess", "OfflineChatLocking",
                "OfflineChatWebSocket"
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "OfflineChatCacheTests", dependencies: ["OfflineChatCache"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OfflineChatTests",
            dependencies: [
                "OfflineChat", "ChatTesting", "OfflineChatWebSocket", "OfflineChatLocking", "OfflineChatServerProcess"
            ],
            swiftSettings: swiftSettings),
        // An app's own tests, as an app would write them: public API and ChatTesting only.
        .testTarget(
            name: "ExampleAppTests", dependencies: ["OfflineChat", "ChatTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "OfflineChatSQLiteTests", dependencies: ["OfflineChatSQLite"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OfflineChatWebSocketTests", dependencies: ["OfflineChatWebSocket", "OfflineChatServerProcess"],
            exclude: ["Interop"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "OfflineChatProtocolTests", dependencies: ["OfflineChatProtocol"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OfflineChatServerProcessTests", dependencies: ["OfflineChatServerProcess"],
            swiftSettings: swiftSettings)
    ]
)

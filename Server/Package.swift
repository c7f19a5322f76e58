// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

/// The root package (the SDK repository), with modern system SQLite instead of SQLCipher.
let root = "OfflineChat"
/// The modules chatd shares with the SDK: wire types, SQLite, WebSocket frames, locks, and the
/// child-process helpers its tests use.
let internals: Target.Dependency = .product(name: "_OfflineChatInternals", package: root)

let package = Package(
    name: "chatd",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "chatd", targets: ["chatd"]),
    ],
    dependencies: [
        .package(name: root, path: "..", traits: ["SystemSQLite"]),
    ],
    targets: [
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CNats", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(name: "CEpoll"),
        .target(
            name: "ChatServer",
            dependencies: [
                "CMicroHTTPD",
                "CCrypto",
                "CLibPQ",
                "CNats",
                "CMalloc",
                "CEpoll",
                internals,
            ],
            resources: [.copy("Console")],
            swiftSettings: swiftSettings),
        .executableTarget(name: "chatd", dependencies: ["ChatServer"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "chatd-bench",
            dependencies: [
"ChatServer", "CEpoll", internals],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ChatServerTests",
            dependencies: [
"ChatServer", internals],
            exclude: ["Python"],
            swiftSettings: swiftSettings),
    ]
)

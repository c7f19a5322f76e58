// swift-tools-version:6.1
import PackageDescription

/// One settings list for every target: Swift 6 language mode (strict concurrency).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

/// The SDK package (this repository's root), with its default trait: the CLI's cache is encrypted.
let root = "OfflineChat"
let sdk: Target.Dependency = .product(name: "OfflineChat", package: root)
let testing: Target.Dependency = .product(name: "ChatTesting", package: root)
/// The SDK's internal modules (its cache, SQLite, locks, wire types), for the benchmarks.
let internals: Target.Dependency = .product(name: "_OfflineChatInternals", package: root)

/// The `chat` command-line client, the benchmarks `make bench` runs, and the crash probe the
/// crash tests kill: kept out of the SDK package, whose scheme must build for iOS.
let package = Package(
    name: "OfflineChatTools",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "chat", targets: ["chat"])
    ],
    dependencies: [
        .package(name: root, path: "..")
    ],
    targets: [
        .executableTarget(name: "chat", dependencies: [sdk, internals], swiftSettings: swiftSettings),
        .executableTarget(name: "outbox-crash-probe", dependencies: [sdk, testing], swiftSettings: swiftSettings),
        .executableTarget(name: "cache-bench", dependencies: [testing, internals], swiftSettings: swiftSettings),
        .executableTarget(name: "outbox-bench", dependencies: [sdk, testing, internals], swiftSettings: swiftSettings),
        .executableTarget(name: "sync-bench", dependencies: [sdk, testing, internals], swiftSettings: swiftSettings),
        .executableTarget(name: "cluster-bench", dependencies: [sdk, testing, internals], swiftSettings: swiftSettings),
        .executableTarget(name: "lock-bench", dependencies: [internals], swiftSettings: swiftSettings),
        .executableTarget(name: "json-bench", dependencies: [internals], swiftSettings: swiftSettings),
        // The CLI and the crash probe run as the separate processes they are.
        .testTarget(
            name: "ToolsTests", dependencies: [sdk, testing, internals, "chat", "outbox-crash-probe"],
            swiftSettings: swiftSettings)
    ]
)

#!/bin/sh
# What only a Mac can check (docs/APPLE.md): run it from the repository's root on a Mac with
# Xcode 16.3 or later (Swift 6.1 tools: package traits). Each step prints what it checks;
# the script stops at the first failure. Nothing here runs on Linux or in CI.
set -eu

step() { printf '\n==> %s\n' "$*"; }

[ "$(uname)" = Darwin ] || { echo "apple-check.sh: run this on a Mac (it drives xcodebuild)"; exit 2; }
simulator=${IOS_SIMULATOR:-iPhone 16}

step "the SDK builds for macOS with the default trait (SQLCipher.swift resolved from GitHub)"
swift build --target OfflineChat

step "the SDK's tests pass on macOS (SQLCipher at rest, the Keychain key store, URLSession transports)"
swift test --filter 'OfflineChatTests|OfflineChatCacheTests|OfflineChatSQLiteTests|ExampleAppTests'

step "the SystemSQLite trait builds against Apple's SQLite3"
swift build --target OfflineChat --disable-default-traits --traits SystemSQLite --scratch-path .build/apple-system

step "both SQLite traits at once are refused at compile time"
if swift build --target OfflineChatSQLite --traits SQLCipher,SystemSQLite --scratch-path .build/apple-both >/dev/null 2>&1; then
    echo "both traits built: they must not"; exit 1
fi

step "the OfflineChat library builds for the iOS Simulator, a device, Mac Catalyst and visionOS"
for destination in "generic/platform=iOS Simulator" "generic/platform=iOS" \
    "generic/platform=macOS,variant=Mac Catalyst" "generic/platform=visionOS Simulator"; do
    xcodebuild -quiet -scheme OfflineChat -destination "$destination" build
done

step "the whole package scheme (OfflineChat, ChatTesting, the internal modules) builds for iOS"
xcodebuild -quiet -scheme OfflineChat-Package -destination "generic/platform=iOS Simulator" build

step "an app's own tests (ExampleAppTests: public API and FakeChatd) pass in the iOS Simulator"
xcodebuild -quiet -scheme OfflineChat-Package -destination "platform=iOS Simulator,name=$simulator" \
    -only-testing:ExampleAppTests test

printf '\nAll Apple checks passed.\n'

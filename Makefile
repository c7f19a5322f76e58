# The two commands that matter: `make demo` and `make test`. See README.md.
SWIFT ?= swift
STRICT = -Xswiftc -warnings-as-errors
SYSTEM_SQLITE = --disable-default-traits --traits SystemSQLite --scratch-path .build/system-sqlite

.PHONY: deps build server format lint docs test test-sdk test-sdk-system test-tools test-console test-cluster test-server test-server-postgres test-fuzz fuzz demo demo-cluster console bench clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(STRICT)
	cd Server && $(SWIFT) build $(STRICT)
	cd Tools && $(SWIFT) build $(STRICT)

## chatd (debug): the SDK's live tests run against it.
server:
	cd Server && $(SWIFT) build $(STRICT)

## swift-format with the repository's .swift-format: `make format` rewrites the sources,
## `make lint` (the first step of `make test`) fails on any file it would change.
FORMATTED = Sources Tests Tools/Sources Tools/Tests Server/Sources Server/Tests Fuzz

format:
	swift-format format --in-place --recursive --parallel $(FORMATTED)

lint:
	swift-format lint --strict --recursive --parallel $(FORMATTED)

## The SDK's documentation (Sources/OfflineChat/OfflineChat.docc and the doc comments) as static
## HTML in .build/docs/site, built by the toolchain's docc; a public symbol without a doc comment
## (scripts/undocumented.py) or a broken symbol link fails it.
DOCS = $(CURDIR)/.build/docs

docs:
	rm -rf $(DOCS)/sdk $(DOCS)/graphs && mkdir -p $(DOCS)/sdk $(DOCS)/graphs
	@# Built with the default trait, then each module's public symbols extracted
	@# (`swift package dump-symbol-graph` would enable every trait: both SQLites, refused).
	$(SWIFT) build --scratch-path $(DOCS)/build --target ChatTesting > $(DOCS)/symbol-graphs.log 2>&1
	for module in OfflineChat OfflineChatProtocol ChatTesting; do \
		$(SWIFT) symbolgraph-extract -module-name $$module -minimum-access-level public \
			-I $(DOCS)/build/debug/Modules -I Sources/COfflineChatSQLCipher -I Sources/COfflineChatOpenSSL \
			-target $(shell uname -m)-unknown-linux-gnu -output-dir $(DOCS)/graphs || exit 1; \
	done
	cp $(DOCS)/graphs/OfflineChat.symbols.json $(DOCS)/sdk/
	@# The SDK, the wire types it re-exports and the test doubles apps use: all documented.
	python3 scripts/undocumented.py $(DOCS)/sdk/OfflineChat.symbols.json \
		$(DOCS)/graphs/OfflineChatProtocol.symbols.json $(DOCS)/graphs/ChatTesting.symbols.json
	python3 scripts/doc-snippets.py Sources/OfflineChat/OfflineChat.docc/*.md
	docc convert Sources/OfflineChat/OfflineChat.docc --additional-symbol-graph-dir $(DOCS)/sdk \
		--fallback-display-name OfflineChat --fallback-bundle-identifier dev.offlinechat.OfflineChat \
		--transform-for-static-hosting --warnings-as-errors --output-path $(DOCS)/site

## Every test: the SDK packages on both SQLite flavours, the CLI and crash probes (Tools/), the
## operator console in a real browser, SDK clients against a chatd cluster that
## loses nodes, then chatd (unit, live-server, interop, schemathesis)
## on SQLite and again on PostgreSQL, then a short run of each fuzz target (a crash fails the run).
test: deps lint docs server test-sdk test-sdk-system test-tools test-console test-cluster test-server test-server-postgres test-fuzz

# A hung test fails the run (after 15 minutes, $$TEST_TIME_LIMIT seconds) and names the tests
# that never finished, instead of stalling CI; a hung run is run once more (never a failed one).
SWIFT_TEST = SWIFT=$(SWIFT) $(CURDIR)/scripts/swift-test.sh

test-sdk: server
	$(SWIFT_TEST) $(STRICT)

test-sdk-system: server
	$(SWIFT_TEST) $(STRICT) $(SYSTEM_SQLITE)
	@# Both SQLite traits at once must not build (the cache would silently lose its encryption).
	@if $(SWIFT) build --traits SQLCipher,SystemSQLite --scratch-path .build/both-traits --target OfflineChatSQLite \
		> .build/both-traits.log 2>&1; then echo "both SQLite traits built: they must not"; exit 1; fi
	@grep -q "not both" .build/both-traits.log && echo "both SQLite traits at once: refused at compile time, as it must be"

## The `chat` CLI and the crash probes (Tools/, a package of its own) as separate processes.
test-tools: server
	cd Tools && $(SWIFT_TEST) $(STRICT)

## The operator console (/admin) in headless chromium through Selenium, against a real chatd.
test-console: server
	SWIFT=$(SWIFT) scripts/console-test.sh

## SDK clients through HAProxy while chatd nodes (PostgreSQL + NATS) are killed at random moments.
test-cluster: server
	scripts/with-postgres.sh env SWIFT=$(SWIFT) $(CURDIR)/scripts/swift-test.sh $(STRICT) --filter ClusterFailoverTests

test-server: server
	cd Server && $(SWIFT_TEST) $(STRICT)
	scripts/schemathesis.sh

## The same live-server suite and schemathesis with every chatd on PostgreSQL (a throwaway cluster).
test-server-postgres: server
	scripts/with-postgres.sh sh -c 'cd Server && $(SWIFT_TEST) $(STRICT) && cd .. && scripts/schemathesis.sh'

## libFuzzer targets (Fuzz/): 15 seconds each in `make test`, three minutes each here.
test-fuzz:
	scripts/fuzz.sh 15

fuzz: deps
	scripts/fuzz.sh $${FUZZ_SECONDS:-180}

demo: deps
	@scripts/demo.sh

## Three chatd nodes on PostgreSQL with NATS and HAProxy on loopback; one node is killed mid-way.
demo-cluster: deps
	@scripts/demo-cluster.sh

## chatd with demo data and a light load, and the operator console's address and admin key (until Ctrl-C).
console: deps
	@scripts/console.sh

bench: deps
	@scripts/bench.sh

clean:
	rm -rf .build Server/.build Tools/.build

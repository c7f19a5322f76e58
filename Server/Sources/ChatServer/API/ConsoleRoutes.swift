import Foundation

/// The operator console's files: plain HTML, CSS and JavaScript modules, read once at start.
/// The console is a page of the admin API's, nothing more: it keeps the key the operator
/// types in, and chatd checks every request it makes as any other.
struct ConsoleFiles: Sendable {
    struct File: Sendable {
        let type: String
        let bytes: [UInt8]
    }

    /// By name (`index.html`, `app.js`…): the console is one flat directory.
    let files: [String: File]

    static let types = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml"
    ]

    /// The files of `directory` with a known type; nil when it has no `index.html`.
    static func load(_ directory: URL) -> ConsoleFiles? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var files: [String: File] = [:]
        for name in names {
            guard let type = types[(name as NSString).pathExtension],
                let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
            else { continue }
            files[name] = File(type: type, bytes: Array(data))
        }
        return files["index.html"] == nil ? nil : ConsoleFiles(files: files)
    }

    /// Where SwiftPM puts the console (the `Console` resource of this module) beside the
    /// executable, or beside the test bundle: `chatd_ChatServer.resources` on Linux, a
    /// `.bundle` on Apple platforms. Deploy that directory with chatd, or pass `--console-dir`.
    static func installed() -> URL? {
        let beside = Bundle.main.bundleURL
        let candidates = [
            beside.appendingPathComponent("chatd_ChatServer.resources/Console"),
            beside.appendingPathComponent("chatd_ChatServer.bundle/Contents/Resources/Console"),
            beside.appendingPathComponent("chatd_ChatServer.bundle/Console")
        ]
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("index.html").path) }
    }

    /// What every console answer carries: no script but the console's own files, nothing
    /// loaded from elsewhere, no page may frame it, no type guessed, no referrer sent on.
    static let headers = [
        (
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
                + " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"), ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache")
    ]

    func response(_ name: String) -> HTTPResponse {
        guard let file = files[name] else {
            var missing = HTTPResponse.error(.notFound("the console has no file \(name)"))
            missing.headers += Self.headers
            return missing
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", file.type)] + Self.headers, body: file.bytes)
    }
}

extension Routes {
    /// `GET /admin` (the console's page; `/admin/` is the same path) and `GET /admin/{file}`.
    /// Without the console's files: 404 saying where they go.
    func addConsole(to router: inout Router) {
        router.add("GET", "/admin") { _ in
            guard let console else { throw Self.noConsole }
            return console.response("index.html")
        }
        router.add("GET", "/admin/{file}") { context in
            guard let console else { throw Self.noConsole }
            return console.response(context.parameter("file"))
        }
    }

    static let noConsole = HTTPError.notFound(
        "the console's files are not installed: deploy chatd_ChatServer.resources beside chatd, or start it with"
            + " --console-dir DIR")
}

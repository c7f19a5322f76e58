import Foundation
import OfflineChatLocking
import OfflineChatProtocol
import Synchronization

extension Routes {
    /// `POST /v1/media?name=` (raw bytes, `Content-Type` as sent) answers the `Attachment` to
    /// put in a media message; `GET /v1/media/{id}` serves the bytes to the uploader and to
    /// whoever can read a message naming them, with the content type of that upload.
    func addMedia(to router: inout Router) {
        signedIn(&router, "POST", Endpoints.media, bucket: .upload) { context, uid in
            let request = context.request
            if request.bodyTooLarge {
                throw HTTPError(413, .payloadTooLarge, "the file is larger than this server accepts")
            }
            guard !request.body.isEmpty else {
                throw HTTPError.validation("the upload is empty: send the file's bytes as the body")
            }
            let name = request.query["name"].flatMap { $0.isEmpty ? nil : $0 } ?? "file"
            guard name.utf8.count <= Validate.maxFileNameBytes, !name.contains("/") else {
                throw HTTPError.badParameter(
                    "`name` is a file name of at most \(Validate.maxFileNameBytes) bytes (UTF-8) without `/`")
            }
            let contentType = request.header("content-type")?.trimmingCharacters(in: .whitespaces) ?? ""
            let mimeType = contentType.isEmpty ? "application/octet-stream" : contentType
            guard Validate.isMediaType(mimeType) else {
                throw HTTPError.badParameter("`Content-Type` must be a media type such as image/jpeg")
            }
            let file = MediaStore.sha256Hex(request.body)
            let id = try store.recordUpload(
                file: file, by: uid, contentType: mimeType, size: Int64(request.body.count), quota: mediaQuota)
            try media.store(request.body, as: file)
            mediaSweep.runIfDue(store: store, media: media)
            let ext = (name as NSString).pathExtension
            return .json(
                Attachment(
                    url: Endpoints.media + "/" + id, name: name, size: Int64(request.body.count),
                    mimeType: mimeType, extension: Validate.fitting(ext, bytes: Validate.maxExtensionBytes)),
                status: 201)
        }
        signedIn(&router, "GET", Endpoints.media + "/{id}") { context, uid in
            let id = context.parameter("id")
            guard Endpoints.isMediaID(id), let upload = try store.readableUpload(id, by: uid) else {
                throw HTTPError.notFound("no media \(id) you can read")
            }
            let release = try downloads.take(uid)
            guard let (fd, size) = media.openForReading(upload.file) else {
                release()
                throw HTTPError.notFound("no media \(id) you can read")
            }
            var response = HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", upload.contentType),
                    ("X-Content-Type-Options", "nosniff"),
                    ("Content-Security-Policy", "default-src 'none'; sandbox"),
                    ("Cache-Control", "private, max-age=31536000, immutable")
                ])
            response.file = ResponseFile(fd: fd, size: size, onClose: release)
            return response
        }
    }
}

/// Downloads each user has in flight, at most `perUser` (each holds a connection and a file
/// while the client reads at its own pace); one more is 429 until one ends.
final class DownloadSlots: Sendable {
    let perUser: Int
    private let inFlight = Locked<[String: Int]>([:])

    init(perUser: Int) { self.perUser = perUser }

    /// Takes one of `uid`'s slots, or throws 429; call what it returns once the download ends.
    func take(_ uid: String) throws -> @Sendable () -> Void {
        let taken = inFlight.withLock { inFlight in
            guard inFlight[uid, default: 0] < perUser else { return false }
            inFlight[uid, default: 0] += 1
            return true
        }
        guard taken else {
            throw HTTPError.rateLimited(
                retryAfterMilliseconds: 1000, "\(perUser) downloads at once at most: finish one first")
        }
        return { [self] in
            inFlight.withLock { inFlight in
                inFlight[uid, default: 1] -= 1
                if inFlight[uid] == 0 { inFlight[uid] = nil }
            }
        }
    }
}

/// Forgets uploads no message names once they are older than `grace`, and the files no
/// upload uses any more: on start, and at most once a minute of chatd's clock as uploads come in.
final class MediaSweep: Sendable {
    /// Milliseconds an upload may wait for the message that names it.
    let grace: Int64
    private let last = Atomic<Int64>(.min)

    init(graceSeconds: Int64) { grace = graceSeconds * 1000 }

    func runIfDue(store: Store, media: MediaStore) {
        let now = store.clock.now()
        let previous = last.load(ordering: .relaxed)
        guard previous == .min || now - previous >= 60_000,
            last.compareExchange(expected: previous, desired: now, ordering: .relaxed).exchanged
        else { return }
        _ = try? store.sweepUploads(createdBefore: now - grace) { media.remove($0) }
    }
}

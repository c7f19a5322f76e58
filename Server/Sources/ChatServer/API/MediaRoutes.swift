import ChatProtocol
import Foundation

extension Routes {
    /// `POST /v1/media?name=` (raw bytes, `Content-Type` as sent) answers the `Attachment` to
    /// put in a media message; `GET /v1/media/{id}` serves the bytes to any signed-in user.
    func addMedia(to router: inout Router) {
        router.add("POST", Endpoints.media) { context in
            _ = try authenticate(context)
            let request = context.request
            if request.bodyTooLarge { throw HTTPError(413, .payloadTooLarge, "the file is larger than this server accepts") }
            guard !request.body.isEmpty else { throw HTTPError.validation("the upload is empty: send the file's bytes as the body") }
            let name = request.query["name"].flatMap { $0.isEmpty ? nil : $0 } ?? "file"
            guard name.count <= 255, !name.contains("/") else {
                throw HTTPError.badParameter("`name` is a file name of at most 255 characters without `/`")
            }
            let contentType = request.header("content-type")?.trimmingCharacters(in: .whitespaces) ?? ""
            let mimeType = contentType.isEmpty ? "application/octet-stream" : contentType
            guard mimeType.count <= 255, mimeType.contains("/") else {
                throw HTTPError.badParameter("`Content-Type` must be a media type such as image/jpeg")
            }
            let id = try media.store(request.body, contentType: mimeType)
            let ext = (name as NSString).pathExtension
            return .json(Attachment(url: Endpoints.media + "/" + id, name: name, size: Int64(request.body.count),
                                    mimeType: mimeType, extension: String(ext.prefix(32))), status: 201)
        }
        router.add("GET", Endpoints.media + "/{id}") { context in
            _ = try authenticate(context)
            guard let file = media.load(context.parameter("id")) else { throw HTTPError.notFound("no media \(context.parameter("id"))") }
            return HTTPResponse(status: 200, headers: [("Content-Type", file.contentType),
                                                       ("Cache-Control", "private, max-age=31536000, immutable")],
                                body: Array(file.bytes))
        }
    }
}

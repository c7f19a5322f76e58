import Foundation
import OfflineChatCache

extension ChatClient {
    /// Sends a media message: `fileurl` names a local file (a path or a `file://` URL). With
    /// offline support on, the file is first copied into the cache's media folder and the
    /// message queued (`onMessagePending`, the pending message's `localPath` is the copy);
    /// the copy is uploaded and the message sent when the connection allows, as for
    /// `sendTextMessage`. A copy that fails gets `ERROR_OFFLINE_MEDIA_COPY_FAILED`, a file
    /// larger than `maxStorageSize` `ERROR_OFFLINE_MEDIA_TOO_LARGE`; nothing is queued then.
    ///
    /// A message with an `attachment` already hosted elsewhere and an empty `fileurl` is sent
    /// as it is.
    public func sendMediaMessage(
        message: MediaMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil,
        onMessageSent: @escaping @Sendable (BaseMessage) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        if message.fileurl.isEmpty, message.attachment != nil {
            send(message, onMessagePending: onMessagePending, onMessageSent: onMessageSent, onError: onError)
            return
        }
        guard let file = Self.localFile(message.fileurl) else {
            config.callbackQueue.async {
                onError(.invalid("`fileurl` must name a local file, not \"\(message.fileurl)\""))
            }
            return
        }
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int64,
            FileManager.default.isReadableFile(atPath: file.path)
        else {
            config.callbackQueue.async { onError(.invalid("cannot read the file to send: \(file.path)")) }
            return
        }
        let name = file.lastPathComponent
        message.attachment = Attachment(
            url: file.absoluteString, name: name, size: size,
            mimeType: message.attachment?.mimeType ?? MediaType.guess(extension: file.pathExtension),
            extension: file.pathExtension)
        send(message, media: file, onMessagePending: onMessagePending, onMessageSent: onMessageSent, onError: onError)
    }

    static func localFile(_ fileurl: String) -> URL? {
        if fileurl.hasPrefix("file:") { return URL(string: fileurl).flatMap { $0.isFileURL ? $0 : nil } }
        return fileurl.isEmpty || fileurl.contains("://") ? nil : URL(fileURLWithPath: fileurl)
    }
}

/// Media types by file extension, for uploads whose message does not name one.
enum MediaType {
    static func guess(extension ext: String) -> String {
        switch ext.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "heic": "image/heic"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "mp3": "audio/mpeg"
        case "m4a": "audio/mp4"
        case "wav": "audio/wav"
        case "ogg": "audio/ogg"
        case "pdf": "application/pdf"
        case "txt": "text/plain"
        case "json": "application/json"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}

import Glibc

/// A socket's unsent frames, in order. Frames (or the parts of one) are kept as the arrays
/// they were made as: a change broadcast to a hundred readers queues its stored bytes a
/// hundred times, not a hundred copies (only each reader's header and position differ), and
/// sending never moves the bytes that remain (a sent part is dropped whole).
struct OutputQueue {
    private var frames: [[UInt8]] = []
    /// Frames before this index are sent (compacted now and then).
    private var head = 0
    /// Bytes of the first unsent frame already sent.
    private var offset = 0
    /// Unsent bytes.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ frame: [UInt8]) {
        guard !frame.isEmpty else { return }
        frames.append(frame)
        count += frame.count
    }

    /// Sends what the socket takes now. False when the socket failed.
    mutating func send(to fd: Int32) -> Bool {
        while head < frames.count {
            let frame = frames[head]
            let written = frame.withUnsafeBytes { bytes in
                Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
            count -= written
            offset += written
            guard offset == frame.count else { return true }  // the socket is full for now
            offset = 0
            head += 1
        }
        frames.removeAll(keepingCapacity: frames.capacity < 1_024)
        head = 0
        return true
    }
}

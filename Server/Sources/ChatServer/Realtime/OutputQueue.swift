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

    /// Sends what the socket takes now, in one system call for as many queued parts as fit in
    /// `batch` bytes (copied into `scratch`, the loop's one buffer): a frame is kept as three
    /// parts, and a call a part made three TCP segments, each woken for on the other end. A part
    /// of `batch` bytes or more goes out from where it lies. False when the socket failed.
    mutating func send(to fd: Int32, through scratch: inout [UInt8]) -> Bool {
        while head < frames.count {
            let written: Int
            if frames[head].count - offset >= Self.batch {
                written = frames[head].withUnsafeBytes { bytes in
                    Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                }
            } else {
                scratch.removeAll(keepingCapacity: true)
                var index = head
                var skip = offset
                while index < frames.count, scratch.count + frames[index].count - skip <= Self.batch {
                    scratch.append(contentsOf: frames[index][skip...])
                    skip = 0
                    index += 1
                }
                written = scratch.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            if written < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
            count -= written
            var left = written
            while left > 0 {
                let rest = frames[head].count - offset
                guard left >= rest else {
                    offset += left
                    return true  // the socket is full for now
                }
                left -= rest
                offset = 0
                head += 1
            }
            if written == 0 { return true }
        }
        frames.removeAll(keepingCapacity: frames.capacity < 1_024)
        head = 0
        return true
    }

    /// The most bytes gathered for one system call.
    static let batch = 64 << 10
}

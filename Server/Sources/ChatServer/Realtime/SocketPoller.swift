import CEpoll
import Glibc

/// Linux `epoll` over the realtime thread's descriptors, each registered once under a key: a
/// wait costs the descriptors that are ready, not every one watched (`poll` over 10,000 idle
/// sockets cost the loop a pass over all of them at each wake).
final class SocketPoller {
    struct Event {
        let key: UInt64
        /// Bytes (or the end of the stream, or an error) to read.
        let readable: Bool
        /// Room to write (watched only for descriptors that asked, `writes: true`).
        let writable: Bool
    }

    private let descriptor: Int32
    private var events = [epoll_event](repeating: epoll_event(), count: 1_024)

    init() {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(descriptor >= 0, "epoll_create1 failed: \(errno)")
    }

    deinit { Glibc.close(descriptor) }

    /// Starts watching `fd` for reads. False if the kernel refused.
    @discardableResult
    func watch(_ fd: Int32, key: UInt64) -> Bool { control(EPOLL_CTL_ADD, fd, key: key, writes: false) }

    /// Watches `fd` for writes as well, or no longer.
    func change(_ fd: Int32, key: UInt64, writes: Bool) { control(EPOLL_CTL_MOD, fd, key: key, writes: writes) }

    /// Stops watching `fd` (before it is closed: a closed descriptor leaves the set by itself
    /// only once no other copy of it is open).
    func forget(_ fd: Int32) {
        var unused = epoll_event()
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, &unused)
    }

    /// Waits up to `milliseconds` for descriptors to be ready; the ready ones.
    func wait(milliseconds: Int32) -> [Event] {
        let count = epoll_wait(descriptor, &events, Int32(events.count), milliseconds)
        guard count > 0 else { return [] }
        let inbound = EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue
        return events.prefix(Int(count)).map { event in
            Event(
                key: event.data.u64, readable: event.events & inbound != 0,
                writable: event.events & EPOLLOUT.rawValue != 0)
        }
    }

    @discardableResult
    private func control(_ operation: Int32, _ fd: Int32, key: UInt64, writes: Bool) -> Bool {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | (writes ? EPOLLOUT.rawValue : 0)
        event.data.u64 = key
        return epoll_ctl(descriptor, operation, fd, &event) == 0
    }
}

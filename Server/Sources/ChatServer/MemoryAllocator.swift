#if canImport(Glibc)
import CMalloc
#endif

/// The process's memory allocator, set for a long-running server.
public enum MemoryAllocator {
    /// Freed memory up to this size stays with the process instead of going back to the kernel.
    public static let keptFreeBytes: Int32 = 64 << 20
    /// Blocks up to this size come from the heap, not a mapping of their own.
    public static let largestHeapBlock: Int32 = 4 << 20

    /// Keeps freed memory for reuse (glibc; elsewhere nothing to do). glibc hands the top of its
    /// heap back to the kernel whenever more than about 128 KiB of it is free, and SQLite frees
    /// that much after each `RETURNING` statement (the rows wait in a temporary table with its
    /// own page cache): a send then grew and shrank the heap several times, and touched fresh
    /// pages each time (`brk`, page faults and unmapping were a fifth of a send's CPU).
    /// Call once, at start, before the threads do.
    public static func keepFreedMemory() {
        #if canImport(Glibc)
        _ = mallopt(M_TRIM_THRESHOLD, keptFreeBytes)
        _ = mallopt(M_MMAP_THRESHOLD, largestHeapBlock)
        #endif
    }
}

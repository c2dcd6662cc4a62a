import Foundation

/// Writes bytes to a file through a large buffer, so output costs one system call per megabyte
/// rather than one per line; lines are formatted straight into the buffer. The thin I/O edge of
/// the simulator.
public final class BufferedFileWriter {
    private let handle: FileHandle
    private let path: String
    private let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private var count = 0
    public private(set) var bytesWritten = 0
    /// Bytes callers append directly (then call `flushIfFull()`); they are written in call order
    /// with what `write(maxBytes:_:)` formats.
    public var buffer: [UInt8] = []

    /// Creates or truncates the file at `path` (opened in place: see `OutputFile`).
    public init(path: String, capacity: Int = 1 << 20) throws(OutputError) {
        self.handle = try OutputFile.open(path)
        self.path = path
        self.capacity = capacity
        self.storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// Lets `body` write at most `maxBytes` bytes at the returned pointer; `body` returns how
    /// many it wrote.
    @inline(__always)
    public func write(maxBytes: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) throws(OutputError) {
        precondition(maxBytes <= capacity)
        if !buffer.isEmpty { try drain() }
        if count + maxBytes > capacity { try flush() }
        count += body(storage + count)
    }

    /// Flushes when the buffered bytes reach the capacity.
    @inline(__always)
    public func flushIfFull() throws(OutputError) {
        if count + buffer.count >= capacity { try flush() }
    }

    /// Moves `buffer` into the storage behind what is already there.
    private func drain() throws(OutputError) {
        var offset = 0
        while offset < buffer.count {
            if count == capacity { try writeStorage() }
            let n = min(capacity - count, buffer.count - offset)
            buffer.withUnsafeBufferPointer { (storage + count).update(from: $0.baseAddress! + offset, count: n) }
            count += n
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    public func append(_ bytes: [UInt8]) throws(OutputError) {
        try write(maxBytes: bytes.count) { p in
            bytes.withUnsafeBufferPointer { p.update(from: $0.baseAddress!, count: $0.count) }
            return bytes.count
        }
    }

    public func flush() throws(OutputError) {
        try drain()
        try writeStorage()
    }

    private func writeStorage() throws(OutputError) {
        guard count > 0 else { return }
        do {
            try handle.write(contentsOf: Data(bytesNoCopy: storage, count: count, deallocator: .none))
        } catch {
            throw OutputError(path: path, reason: "write failed: \(error.localizedDescription)")
        }
        bytesWritten += count
        count = 0
    }

    /// Flushes and closes; the writer must not be used afterwards.
    public func close() throws(OutputError) {
        try flush()
        do { try handle.close() } catch { throw OutputError(path: path, reason: "close failed: \(error.localizedDescription)") }
    }
}

/// An output file could not be written.
public struct OutputError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

import Foundation

/// Writes bytes to a file through a large in-memory buffer, so output costs one system call per
/// megabyte rather than one per line. The thin I/O edge of the simulator and the evaluator.
public final class BufferedFileWriter {
    private let handle: FileHandle
    private let path: String
    /// Bytes not yet written; callers append to it directly and then call `flushIfFull()`.
    public var buffer: [UInt8] = []
    private let capacity: Int
    public private(set) var bytesWritten = 0

    /// Creates or truncates the file at `path`.
    public init(path: String, capacity: Int = 1 << 20) throws(OutputError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let h = FileHandle(forWritingAtPath: path) else {
            throw OutputError(path: path, reason: "cannot create the file; check that the directory exists and is writable")
        }
        self.handle = h
        self.path = path
        self.capacity = capacity
        buffer.reserveCapacity(capacity + 4096)
    }

    @inline(__always)
    public func flushIfFull() throws(OutputError) {
        if buffer.count >= capacity { try flush() }
    }

    public func flush() throws(OutputError) {
        guard !buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw OutputError(path: path, reason: "write failed: \(error.localizedDescription)")
        }
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
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

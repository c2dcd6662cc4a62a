import Foundation

/// Reads a file line by line in large chunks and hands each line's bytes (without the newline)
/// to a closure with its 1-based line number. The I/O edge of the evaluator.
public enum JSONLinesFile {
    public static func forEachLine(
        path: String, chunkSize: Int = 4 << 20,
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw EvaluationInputError(path: path, line: nil, reason: "cannot open the file; check the path")
        }
        defer { try? handle.close() }
        var carry: [UInt8] = []
        var lineNumber = 0
        while true {
            let data = try handle.read(upToCount: chunkSize) ?? Data()
            if data.isEmpty { break }
            carry.append(contentsOf: data)
            var consumed = 0
            try carry.withUnsafeBufferPointer { buf in
                var start = 0
                for i in 0..<buf.count where buf[i] == 0x0A {
                    lineNumber += 1
                    try body(UnsafeBufferPointer(rebasing: buf[start..<i]), lineNumber)
                    start = i + 1
                }
                consumed = start
            }
            carry.removeFirst(consumed)
        }
        if !carry.isEmpty {
            lineNumber += 1
            try carry.withUnsafeBufferPointer { try body($0, lineNumber) }
        }
    }
}

/// An input file or line that cannot be used, with what to do about it.
public struct EvaluationInputError: Error, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var reason: String
    public init(path: String, line: Int?, reason: String) { self.path = path; self.line = line; self.reason = reason }
    public var description: String { line.map { "\(path):\($0): \(reason)" } ?? "\(path): \(reason)" }
}

import Foundation
import Testing
@testable import WaymarkSimulation

/// Issue 21: output paths are opened in place, never replaced (a rename over `/dev/null`, run as
/// root, turned the system's null device into a regular file).
@Suite struct OutputFileTests {
    func kind(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    @Test func aCharacterDeviceStaysOne() throws {
        #expect(kind("/dev/null") == S_IFCHR)
        let writer = try BufferedFileWriter(path: "/dev/null")
        try writer.write(maxBytes: 5) { p in
            for (i, b) in "hello".utf8.enumerated() { p[i] = b }
            return 5
        }
        try writer.close()
        #expect(kind("/dev/null") == S_IFCHR)
    }

    @Test func aFIFOIsWrittenToNotReplaced() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-fifo-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/out"
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader on another thread, as `waymark simulate --sightings FIFO | consumer` would have.
        let received = ReceivedBytes()
        let reader = Thread {
            if let h = FileHandle(forReadingAtPath: fifo) { received.set(h.readDataToEndOfFile()) }
        }
        reader.start()
        let writer = try BufferedFileWriter(path: fifo)
        try writer.write(maxBytes: 6) { p in
            for (i, b) in "line\n\n".utf8.enumerated() { p[i] = b }
            return 6
        }
        try writer.close()
        for _ in 0..<200 where received.get() == nil { Thread.sleep(forTimeInterval: 0.01) }
        #expect(received.get() == Data("line\n\n".utf8))
        #expect(kind(fifo) == S_IFIFO)
    }

    @Test func aRegularFileIsTruncatedAndADirectoryRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-out-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try OutputFile.write("a much longer first version\n", to: path)
        try OutputFile.write("short\n", to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "short\n")
        let error = #expect(throws: OutputError.self) { try OutputFile.open(FileManager.default.temporaryDirectory.path) }
        #expect(error?.reason.contains("is a directory") == true)
    }
}

final class ReceivedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    func get() -> Data? { lock.lock(); defer { lock.unlock() }; return data }
}

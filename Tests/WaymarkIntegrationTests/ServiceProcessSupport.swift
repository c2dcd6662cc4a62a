import Foundation
import Testing

/// `waymark bridge` / `waymark homeassistant` as child processes for the integration tests: their
/// output in a log file, stopped with SIGTERM like systemd does.
final class WaymarkServiceProcess {
    let child: AggregatorChild
    let log: String

    init(_ arguments: [String], name: String) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(name)-\(UUID().uuidString.prefix(8)).log").path
        let waymark = try DemoTests.binary("waymark", repo: DeployEnvironment.repositoryRoot)
        child = try AggregatorChild.spawn([waymark] + arguments, output: log)
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Waits until the log contains `text` (or the process ended, or `timeout` passed).
    @discardableResult
    func waitForLog(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if output.contains(text) { return true }
            if !child.isRunning { return output.contains(text) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// The port of `metrics at http://HOST:PORT/metrics` in the log.
    var metricsPort: Int? {
        guard let r = output.range(of: "/metrics") else { return nil }
        let before = output[..<r.lowerBound]
        guard let colon = before.lastIndex(of: ":") else { return nil }
        return Int(before[before.index(after: colon)...])
    }

    /// SIGTERM, then the exit status (nil when it did not end within `timeout`).
    func stop(timeout: Double = 20) -> Int32? {
        child.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while child.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if child.isRunning {
            child.signal(SIGKILL)
            child.wait()
            return nil
        }
        return child.wait()
    }
}

/// A minimal HTTP GET over a socket (the metrics endpoints speak HTTP/1.0-style, one request per
/// connection).
enum HTTPGet {
    static func text(port: Int, path: String = "/metrics") throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(rc == 0, "cannot connect to 127.0.0.1:\(port)")
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one sample line (`name{labels} value`) in Prometheus text, or nil.
    static func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Plain TCP clients for testing our HTTP servers the way hostile or careless peers use them:
/// connections that say nothing, requests sent a byte at a time, and ordinary one-shot GETs with
/// a hard deadline. Blocking sockets with timeouts, so a stuck server fails the test, never hangs it.
public enum RawHTTPClient {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Opens a TCP connection to 127.0.0.1:`port` and returns its descriptor.
    public static func connect(port: Int, timeout: Double = 2) throws -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure("socket(): \(String(cString: strerror(errno)))") }
        setTimeouts(fd, seconds: timeout)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure("connect to 127.0.0.1:\(port): \(reason)")
        }
        return fd
    }

    /// Send and receive timeouts on a socket.
    public static func setTimeouts(_ fd: Int32, seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`; false when the peer closed or the send timed out.
    @discardableResult
    public static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Reads until the peer closes (or the receive timeout); nil on a timeout before any end.
    public static func readToEnd(_ fd: Int32) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += buffer[0..<n]
        }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: String
        public var body: String
        /// Wall-clock seconds from connect to the end of the response.
        public var seconds: Double
    }

    /// One `GET path` with `Connection: close`, all within `timeout` seconds.
    public static func get(port: Int, path: String, headers: [String] = [], timeout: Double = 1) throws -> Response {
        let started = Date()
        let fd = try connect(port: port, timeout: timeout)
        defer { close(fd) }
        let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: close"] + headers + ["", ""]).joined(separator: "\r\n")
        guard send(fd, Array(request.utf8)) else { throw Failure("GET \(path): the request could not be sent") }
        guard let bytes = readToEnd(fd) else {
            throw Failure(String(format: "GET \(path): no complete response within %.1f s", timeout))
        }
        let elapsed = Date().timeIntervalSince(started)
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure("GET \(path): not an HTTP response: \(text.prefix(200))") }
        let head = String(text[..<split.lowerBound])
        let statusLine = head.prefix { $0 != "\r" }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure("GET \(path): bad status line \(statusLine)") }
        return Response(status: status, headers: head, body: String(text[split.upperBound...]), seconds: elapsed)
    }

    /// Connections that misbehave while a test scrapes: `idle` that connect and say nothing, and
    /// `slow` that send a request a byte every `slowInterval` seconds from a thread of their own.
    public final class Crowd: @unchecked Sendable {
        // @unchecked Sendable: `fds` is written in init only; `stopped` is guarded by `lock`.
        public let fds: [Int32]
        private let lock = NSLock()
        private var stopped = false
        private var threads: [Thread] = []

        public init(port: Int, idle: Int, slow: Int, slowInterval: Double = 0.2) throws {
            var fds: [Int32] = []
            for _ in 0..<(idle + slow) { fds.append(try RawHTTPClient.connect(port: port)) }
            self.fds = fds
            let request = Array("GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Padding: \(String(repeating: "x", count: 64))\r\n\r\n".utf8)
            for fd in fds.suffix(slow) {
                let t = Thread { [self] in
                    var i = 0
                    while !isStopped, i < request.count {
                        if !RawHTTPClient.send(fd, [request[i]]) { return }
                        i += 1
                        Thread.sleep(forTimeInterval: slowInterval)
                    }
                }
                threads.append(t)
                t.start()
            }
        }

        private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

        /// How many of the idle connections the server has closed (a read returns end of file).
        public func closedByServer() -> Int {
            var closed = 0
            for fd in fds {
                var byte: UInt8 = 0
                let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
                if n == 0 { closed += 1 }
            }
            return closed
        }

        public func close() {
            lock.lock(); stopped = true; lock.unlock()
            for fd in fds { Glibc.close(fd) }
        }
    }
}

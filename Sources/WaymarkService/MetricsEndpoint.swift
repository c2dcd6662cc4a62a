#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Prometheus
import Foundation

/// Serves the Prometheus text format on `http://HOST:PORT/metrics` from a dedicated thread.
///
/// Deliberately minimal: one blocking accept loop, one request per connection, `GET` only. Scrapes
/// are rare (every few seconds) and tiny, so a thread is cheaper than an event loop dependency.
///
/// `@unchecked Sendable`: `fd` and `thread` are set once in `start()` before the thread runs and
/// only read afterwards; `stop()` closes the socket, which ends the accept loop.
public final class MetricsEndpoint: @unchecked Sendable {
    public let registry: PrometheusCollectorRegistry
    public private(set) var port: Int
    private let host: String
    private var fd: Int32 = -1
    private var thread: Thread?

    public init(registry: PrometheusCollectorRegistry, host: String = "127.0.0.1", port: Int) {
        self.registry = registry
        self.host = host
        self.port = port
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds and starts serving. Port 0 picks a free port (read `port` afterwards).
    public func start() throws {
        #if canImport(Glibc)
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let sock = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard sock >= 0 else { throw StartError(description: "metrics: socket() failed: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &addr.sin_addr) == 1 else {
            close(sock)
            throw StartError(description: "metrics: '\(host)' is not an IPv4 address; set the metrics host to e.g. 127.0.0.1 or 0.0.0.0")
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(sock, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(sock)
            throw StartError(description: "metrics: cannot listen on \(host):\(port): \(reason); choose another metrics port or 0 to disable")
        }
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock, $0, &len) }
        }
        port = Int(UInt16(bigEndian: actual.sin_port))
        fd = sock
        let thread = Thread { [self] in serve(sock) }
        thread.name = "waymark-metrics"
        self.thread = thread
        thread.start()
    }

    public func stop() {
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            fd = -1
        }
    }

    private func serve(_ sock: Int32) {
        while true {
            let client = accept(sock, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // closed by stop()
            }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var request = [UInt8](repeating: 0, count: 2048)
        let n = read(client, &request, request.count)
        guard n > 0 else { return }
        let line = String(decoding: request[0..<n], as: UTF8.self).prefix { $0 != "\r" && $0 != "\n" }
        let response: [UInt8]
        if line.hasPrefix("GET /metrics") {
            var body: [UInt8] = []
            registry.emit(into: &body)
            response = Array("HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        } else {
            let body = "try GET /metrics\n"
            response = Array("HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        }
        var offset = 0
        while offset < response.count {
            let w = response[offset...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            if w <= 0 { if errno == EINTR { continue }; return }
            offset += w
        }
    }
}

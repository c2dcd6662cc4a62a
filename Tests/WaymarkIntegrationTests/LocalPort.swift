import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// TCP ports on 127.0.0.1 for the private servers and endpoints the integration tests start.
enum LocalPort {
    /// A port that was free a moment ago: the kernel's choice for a socket bound to port 0. It
    /// comes from the ephemeral range, so another test's outgoing connection may take it before a
    /// server binds it; a server that restarts mid-test wants `AggregatorPrivateCluster.stablePort()`.
    static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0, "no socket: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        try #require(bound, "no free port on 127.0.0.1: \(String(cString: strerror(errno)))")
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether a listener could bind 127.0.0.1:`port` right now.
    static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        let len = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } } == 0
    }
}

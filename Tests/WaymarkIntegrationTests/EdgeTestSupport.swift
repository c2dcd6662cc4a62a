import Foundation
import Testing
import WaymarkMQTT

/// The broker that scripts/test.sh started (WAYMARK_MQTT_URL), or nil when the tests run without
/// it. With WAYMARK_TEST_REQUIRE_SERVICES=1 a missing broker is a test failure, never a skip.
enum EdgeTestEnvironment {
    static var brokerURL: String? {
        let env = ProcessInfo.processInfo.environment
        if let url = env["WAYMARK_MQTT_URL"], !url.isEmpty { return url }
        if env["WAYMARK_TEST_REQUIRE_SERVICES"] == "1" {
            Issue.record("WAYMARK_MQTT_URL is not set but WAYMARK_TEST_REQUIRE_SERVICES=1: run the tests with scripts/test.sh")
        }
        return nil
    }

    /// True when the suite should run (the broker is there).
    static var hasBroker: Bool {
        let env = ProcessInfo.processInfo.environment
        return env["WAYMARK_MQTT_URL"] != nil || env["WAYMARK_TEST_REQUIRE_SERVICES"] == "1"
    }

    /// A topic prefix no other test run uses.
    static func uniquePrefix(_ name: String) -> String {
        "waymark-test/\(name)/\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The package root (for shared data: CI clones the repo with shared/ beside it).
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func sharedData(_ relative: String) -> URL {
        let beside = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data").appendingPathComponent(relative)
        return beside
    }
}

/// A private Mosquitto on a free loopback port that a test can stop and start again (to simulate
/// a broker outage). Always `stop()` it (the tests do so in `defer`).
final class PrivateBroker: @unchecked Sendable {
    let port: Int
    let directory: URL
    private var process: Process?

    init() throws {
        port = try Self.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let conf = """
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence false
        max_queued_messages 100000
        log_dest file \(directory.path)/mosquitto.log

        """
        try conf.write(to: directory.appendingPathComponent("mosquitto.conf"), atomically: true, encoding: .utf8)
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.mosquittoPath)
        p.arguments = ["-c", directory.appendingPathComponent("mosquitto.conf").path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        for _ in 0..<100 {
            if Self.canConnect(port) { return }
            usleep(50_000)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "mosquitto did not listen on \(port)"])
    }

    func stop() {
        guard let p = process else { return }
        p.terminate()
        p.waitUntilExit()
        process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    static var mosquittoPath: String {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        } ?? "/usr/sbin/mosquitto"
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func canConnect(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// Collects what a subscriber receives, for assertions.
final class MessageInbox: @unchecked Sendable {
    private let condition = NSCondition()
    private var messages: [MQTTMessage] = []

    func append(_ m: MQTTMessage) {
        condition.lock(); messages.append(m); condition.broadcast(); condition.unlock()
    }

    var all: [MQTTMessage] { condition.lock(); defer { condition.unlock() }; return messages }

    /// Waits until `predicate` holds for the messages received so far, or `timeout` seconds pass.
    @discardableResult
    func wait(timeout: Double, until predicate: ([MQTTMessage]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock(); defer { condition.unlock() }
        while !predicate(messages) {
            if !condition.wait(until: deadline) { return predicate(messages) }
        }
        return true
    }
}

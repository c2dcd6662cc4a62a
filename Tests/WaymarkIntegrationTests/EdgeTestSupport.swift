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
    private var pid: pid_t = 0

    init() throws {
        port = try LocalPort.free()
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
        // Run as root, mosquitto drops privileges to `mosquitto` before it opens its log.
        let log = directory.appendingPathComponent("mosquitto.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        if getuid() == 0 { try? FileManager.default.setAttributes([.ownerAccountName: "mosquitto"], ofItemAtPath: log) }
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts mosquitto as a child process (posix_spawn; Foundation's Process proved unreliable to
    /// stop from a test) and waits until it accepts connections.
    func start() throws {
        let path = Self.mosquittoPath
        let conf = directory.appendingPathComponent("mosquitto.conf").path
        var child: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("-c"), strdup(conf), nil]
        defer { for a in argv { free(a) } }
        // The test runner's threads block signals; the child must not inherit that mask, or it
        // would ignore SIGTERM.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let rc = posix_spawn(&child, path, nil, &attr, argv, environ)
        guard rc == 0 else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot start \(path): \(String(cString: strerror(rc)))"])
        }
        pid = child
        for _ in 0..<100 {
            if Self.canConnect(port) { return }
            usleep(50_000)
        }
        stop()
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "mosquitto did not listen on \(port)"])
    }

    /// SIGTERM, then SIGKILL after 3 s; reaps the child.
    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<300 {
            if waitpid(pid, &status, WNOHANG) == pid { pid = 0; return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        pid = 0
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

import Foundation
import Testing
import WaymarkCore
import WaymarkPostgres

/// Starts and stops programs for the aggregator's crash and outage tests.
enum AggregatorProcesses {
    /// The built `waymark-aggregator` next to the test bundle (`swift build` puts them together).
    static func aggregatorBinary() throws -> String {
        var candidates: [String] = []
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(bundleDir.appendingPathComponent("waymark-aggregator").path)
        for b in Bundle.allBundles { candidates.append(b.bundleURL.deletingLastPathComponent().appendingPathComponent("waymark-aggregator").path) }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(repo.appendingPathComponent(".build/debug/waymark-aggregator").path)
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "waymark-aggregator not built (looked in \(candidates)); run `swift build` first")
    }

    /// Launches the aggregator with `arguments`; its output is appended to `log`.
    static func launchAggregator(_ arguments: [String], log: String) throws -> AggregatorChild {
        try AggregatorChild.spawn([try aggregatorBinary()] + arguments, output: log)
    }

    /// Runs a command to completion (as the `postgres` user when `asPostgres` and we are root).
    /// Output goes through a file, not a pipe: `pg_ctl start` leaves the server holding its
    /// standard output, so a pipe would never reach end-of-file.
    @discardableResult
    static func run(_ command: [String], asPostgres: Bool = false) throws -> (status: Int32, output: String) {
        var full = command
        if asPostgres && getuid() == 0 { full = ["runuser", "-u", "postgres", "--"] + command }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-cmd-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let child = try AggregatorChild.spawn(full, output: out)
        let status = child.wait()
        return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }
}

/// A child process started with posix_spawn and reaped with waitpid (Foundation's `Process`
/// waits on a run loop, which test threads do not run).
final class AggregatorChild {
    let pid: pid_t
    private var exitStatus: Int32?

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `argv` (looked up on PATH) with standard output and error appended to `output`.
    /// With `cleanSignals` the child starts with no signal blocked and SIGTERM, SIGINT and SIGHUP
    /// at their defaults: a program that only installs handlers (Mosquitto) would otherwise
    /// inherit the test process's blocked signals and never see a SIGTERM.
    static func spawn(_ argv: [String], output: String, cleanSignals: Bool = false) throws -> AggregatorChild {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if cleanSignals {
            var none = sigset_t(), defaults = sigset_t()
            sigemptyset(&none)
            sigemptyset(&defaults)
            for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, s) }
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let rc = posix_spawnp(&pid, argv[0], &actions, &attributes, cArgs, environ)
        try #require(rc == 0, "cannot start \(argv[0]): \(String(cString: strerror(rc)))")
        return AggregatorChild(pid: pid)
    }

    /// Waits for the child; returns its exit status, or 128 + signal when a signal ended it.
    @discardableResult
    func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let low = status & 0x7F
        let code = low == 0 ? (status >> 8) & 0xFF : 128 + low
        exitStatus = code
        return code
    }

    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid {
            let low = status & 0x7F
            exitStatus = low == 0 ? (status >> 8) & 0xFF : 128 + low
            return false
        }
        return r == 0
    }

    func signal(_ number: Int32) { kill(pid, number) }
}

/// A private PostgreSQL cluster that a test can stop and start (the shared one must stay up).
final class AggregatorPrivateCluster {
    let dir: String
    let port: Int
    let bin: String

    init() throws {
        bin = try #require(ProcessInfo.processInfo.environment["WAYMARK_PG_BIN"], "WAYMARK_PG_BIN is not set: run the tests with scripts/test.sh")
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if getuid() == 0 {
            try AggregatorProcesses.run(["chown", "postgres", dir])
        }
        port = Self.stablePort()
        let initdb = try AggregatorProcesses.run(["\(bin)/initdb", "-D", "\(dir)/data", "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"], asPostgres: true)
        try #require(initdb.status == 0, "initdb failed: \(initdb.output)")
        try start()
    }

    var url: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    /// A free port below Linux's ephemeral range (32768–60999), so that while the server is
    /// stopped mid-test no client socket or port-0 listener of a concurrent test can be handed
    /// the same port by the kernel and make the restart fail.
    static func stablePort() -> Int {
        for _ in 0..<200 {
            let candidate = Int.random(in: 20_000..<32_000)
            if LocalPort.canBind(candidate) { return candidate }
        }
        return Int.random(in: 20_000..<32_000)
    }

    func start() throws {
        let r = try AggregatorProcesses.run(["\(bin)/pg_ctl", "-D", "\(dir)/data", "-l", "\(dir)/postgres.log", "-w", "-t", "60",
                                             "-o", "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c fsync=off", "start"], asPostgres: true)
        try #require(r.status == 0, "pg_ctl start failed: \(r.output)")
    }

    func stop() throws {
        let r = try AggregatorProcesses.run(["\(bin)/pg_ctl", "-D", "\(dir)/data", "-m", "fast", "-w", "stop"], asPostgres: true)
        try #require(r.status == 0, "pg_ctl stop failed: \(r.output)")
    }

    /// Stops the server (if running) and removes its files.
    func destroy() {
        _ = try? AggregatorProcesses.run(["\(bin)/pg_ctl", "-D", "\(dir)/data", "-m", "immediate", "-w", "stop"], asPostgres: true)
        try? FileManager.default.removeItem(atPath: dir)
    }
}

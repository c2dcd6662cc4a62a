import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the deploy tests need from the machine: the Debian tools they drive (mosquitto,
/// mosquitto_pub/sub, openssl, psql, python3 with PyYAML) and the deploy/ scripts of this checkout.
///
/// The suites run when the tools are there, or when `WAYMARK_TEST_REQUIRE_SERVICES=1` (set by
/// scripts/test.sh and CI): then a missing tool is a failure that says what to install, never a skip.
enum DeployEnvironment {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var servicesRequired: Bool { environment["WAYMARK_TEST_REQUIRE_SERVICES"] == "1" }

    /// The checkout this test file belongs to.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func script(_ relative: String) -> String { repositoryRoot.appendingPathComponent(relative).path }

    /// The executable `name` from PATH or the sbin directories (mosquitto lives in /usr/sbin).
    static func tool(_ name: String) -> String? {
        let path = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for dir in path + ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin"] {
            let candidate = dir + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static let brokerTools = ["mosquitto", "mosquitto_pub", "mosquitto_sub", "mosquitto_passwd", "openssl", "python3"]
    static let databaseTools = ["psql", "python3"]

    static func missing(_ tools: [String]) -> [String] { tools.filter { tool($0) == nil } }

    /// For `.enabled(if:)`.
    static var brokerSuiteRuns: Bool { missing(brokerTools).isEmpty || servicesRequired }
    static var databaseSuiteRuns: Bool {
        (missing(databaseTools).isEmpty && environment["WAYMARK_DATABASE_URL"] != nil) || servicesRequired
    }

    /// Fails the test, naming the Debian packages to install, when a tool is missing.
    static func requireTools(_ tools: [String]) throws {
        let absent = missing(tools)
        try #require(absent.isEmpty, "missing \(absent.joined(separator: ", ")): run scripts/setup.sh (Debian packages mosquitto, mosquitto-clients, openssl, postgresql-client, python3-yaml)")
    }

    /// A fresh directory under the system temporary directory, readable by the `mosquitto` user
    /// (the broker drops privileges to it when started as root).
    static func temporaryDirectory(_ label: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        return dir
    }

}

/// The outcome of one command run by `DeployCommand.run`.
struct DeployCommandResult: CustomStringConvertible {
    var command: String
    var status: Int32
    var stdout: String
    var stderr: String
    var timedOut: Bool

    /// Standard output split into lines, without empty ones.
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    var description: String { "`\(command)` exited \(status)\(timedOut ? " (timed out)" : ""); stderr: \(stderr)" }
}

/// Runs a command to completion with a time limit; output goes through temporary files so that a
/// chatty command can never block on a full pipe.
enum DeployCommand {
    static func run(_ executable: String, _ arguments: [String], stdin: String? = nil,
                    timeout: TimeInterval = 30) throws -> DeployCommandResult {
        let path = executable.contains("/") ? executable : (DeployEnvironment.tool(executable) ?? executable)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-cmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        defer { try? out.close(); try? err.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try launch(process)
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline { timedOut = true; kill(process.processIdentifier, SIGKILL); break }
            usleep(10_000)
        }
        process.waitUntilExit()
        return DeployCommandResult(
            command: ([executable] + arguments).joined(separator: " "),
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "",
            timedOut: timedOut)
    }

    /// Starts `process` with the signals that the tools rely on unblocked.
    ///
    /// A child inherits the blocked-signal mask of the thread that spawns it, and Swift's
    /// concurrency threads block most signals: mosquitto_sub's `-W` (SIGALRM) then never fires and
    /// Mosquitto never sees SIGTERM. So the mask of the calling thread is relaxed for those signals
    /// while the child is spawned (Foundation spawns on the calling thread), then restored.
    static func launch(_ process: Process) throws {
        var relaxed = sigset_t(), saved = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &saved)
        relaxed = saved
        for signal in [SIGALRM, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2] { sigdelset(&relaxed, signal) }
        pthread_sigmask(SIG_SETMASK, &relaxed, nil)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }
}

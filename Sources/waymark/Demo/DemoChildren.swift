import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The processes `waymark demo` starts (edges, aggregator): spawned into one process group of
/// their own, so a Ctrl-C on the terminal reaches only the demo, which then stops them in order;
/// each writes its output to a log file. The group id is written to `pgidFile` so that
/// scripts/demo.sh can stop the whole group even if the demo itself is killed.
final class DemoChildren {
    struct Child {
        let name: String
        let pid: pid_t
        let log: String
        var exitStatus: Int32?
    }

    private(set) var children: [Child] = []
    private(set) var groupID: pid_t = 0
    let pgidFile: String

    init(pgidFile: String) { self.pgidFile = pgidFile }

    /// Starts `executable` with `arguments`, stdout and stderr to `log`; returns its index.
    @discardableResult
    func spawn(name: String, executable: String, arguments: [String], log: String) throws -> Int {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group (the first child's pid), default signal dispositions.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, groupID)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw DemoError("cannot start \(executable): \(String(cString: strerror(rc))); build it with `swift build -c release`")
        }
        if groupID == 0 {
            groupID = pid
            try? "\(pid)\n".write(toFile: pgidFile, atomically: true, encoding: .utf8)
        }
        children.append(Child(name: name, pid: pid, log: log))
        return children.count - 1
    }

    /// Reaps children that exited; returns those that exited since the last call.
    func reap() -> [Child] {
        var ended: [Child] = []
        for i in children.indices where children[i].exitStatus == nil {
            var status: Int32 = 0
            if waitpid(children[i].pid, &status, WNOHANG) == children[i].pid {
                children[i].exitStatus = status
                ended.append(children[i])
            }
        }
        return ended
    }

    var running: [Child] { children.filter { $0.exitStatus == nil } }

    /// Sends `signal` to the given children, then waits up to `timeout` seconds for them to exit;
    /// what is still running after that is killed. Returns the names of those that had to be killed.
    @discardableResult
    func stop(_ indices: [Int], signal: Int32 = SIGTERM, timeout: Double) -> [String] {
        for i in indices where children[i].exitStatus == nil { kill(children[i].pid, signal) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline, indices.contains(where: { children[$0].exitStatus == nil }) {
            _ = reap()
            Thread.sleep(forTimeInterval: 0.05)
        }
        var killed: [String] = []
        for i in indices where children[i].exitStatus == nil {
            kill(children[i].pid, SIGKILL)
            killed.append(children[i].name)
        }
        while indices.contains(where: { children[$0].exitStatus == nil }) {
            _ = reap()
            Thread.sleep(forTimeInterval: 0.02)
        }
        return killed
    }

    /// Stops every child still running (SIGTERM, then SIGKILL after `timeout`).
    func stopAll(timeout: Double) {
        stop(Array(children.indices), timeout: timeout)
        try? FileManager.default.removeItem(atPath: pgidFile)
    }

    /// A readable exit description: "exit 1" or "signal 9".
    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        return signal == 0 ? "exit \((status >> 8) & 0xff)" : "signal \(signal)"
    }

    /// The last `lines` lines of a child's log, for error messages.
    static func tail(_ path: String, lines: Int = 8) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "" }
        return text.split(separator: "\n").suffix(lines).map { "    " + $0 }.joined(separator: "\n")
    }
}

/// A demo failure with a message that says what to do.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

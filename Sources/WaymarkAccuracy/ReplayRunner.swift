import Foundation

/// Runs the `waymark replay` command, the engine's public replay path, as a separate process: the
/// suite scores exactly what a user's `waymark replay` writes, whatever the engine inside.
public struct ReplayRunner: Sendable {
    public let executable: String

    public init(executable: String) { self.executable = executable }

    /// The `waymark` executable: `$WAYMARK_BIN`, else next to this program (or test bundle), else
    /// `.build/release` or `.build/debug` under `repository`.
    public static func locate(repository: String) throws -> ReplayRunner {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["WAYMARK_BIN"], !env.isEmpty { candidates.append(env) }
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(me.appendingPathComponent("waymark").path)
        for b in Bundle.allBundles { candidates.append(b.bundleURL.deletingLastPathComponent().appendingPathComponent("waymark").path) }
        candidates.append(repository + "/.build/release/waymark")
        candidates.append(repository + "/.build/debug/waymark")
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw AccuracyError("the waymark executable is not built (looked in \(candidates.joined(separator: ", "))); "
                                + "run `swift build -c release --product waymark` or set WAYMARK_BIN")
        }
        return ReplayRunner(executable: found)
    }

    /// `waymark replay --site SITE --input INPUT --output OUTPUT`; its standard error goes to `log`.
    public func replay(site: String, input: String, output: String, log: String) throws {
        try Self.run(executable, ["replay", "--site", site, "--input", input, "--output", output], log: log)
    }

    /// `waymark evaluate --site SITE --truth TRUTH --output OUTPUT --json`: the Waymark side of the
    /// report (`current_region_accuracy`, `visit_precision`, …), its numbers by key. The JSON goes
    /// to `OUTPUT.score`.
    public func evaluate(site: String, truth: String, output: String) throws -> [String: Double] {
        try Self.run(executable, ["evaluate", "--site", site, "--truth", truth, "--output", output, "--json"], log: output + ".score")
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output + ".score")))
        guard let waymark = (report as? [String: Any])?["waymark"] as? [String: Any] else {
            throw AccuracyError("\(output).score: no \"waymark\" report from waymark evaluate")
        }
        return waymark.compactMapValues { $0 as? Double }
    }

    /// Runs a program to completion with its standard error (and output) in `log`, with
    /// `environment` added to this process's; throws unless it exits with status 0.
    public static func run(_ program: String, _ arguments: [String], log: String, environment: [String: String] = [:]) throws {
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: log) else { throw AccuracyError("\(log): cannot create the log file") }
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let tail = (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
            throw AccuracyError("\(program) \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus); see \(log):\n\(tail)")
        }
    }
}

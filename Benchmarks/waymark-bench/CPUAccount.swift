import Foundation

/// CPU time from /proc, for benchmarks that say where a run's CPU went: per thread of this
/// process (by name — libmosquitto's network threads are all "mosquitto loop", told apart by
/// start order) and for another local process such as the broker.
enum CPUAccount {
    struct Thread { var tid: Int; var name: String; var seconds: Double }

    /// Every thread of this process now.
    static func threads() -> [Thread] {
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [] }
        return tids.compactMap(Int.init).sorted().compactMap { tid in
            guard let (name, seconds) = stat("/proc/self/task/\(tid)/stat") else { return nil }
            return Thread(tid: tid, name: name, seconds: seconds)
        }
    }

    /// CPU each thread used between two snapshots (threads started in between count in full),
    /// busiest first.
    static func delta(_ before: [Thread], _ after: [Thread]) -> [Thread] {
        let earlier = Dictionary(before.map { ($0.tid, $0.seconds) }, uniquingKeysWith: { a, _ in a })
        return after.map { Thread(tid: $0.tid, name: $0.name, seconds: $0.seconds - (earlier[$0.tid] ?? 0)) }
            .sorted { $0.seconds > $1.seconds }
    }

    /// User + system CPU of a process.
    static func processSeconds(_ pid: Int) -> Double? { stat("/proc/\(pid)/stat")?.seconds }

    /// `after − before` when both are known.
    static func difference(_ before: Double?, _ after: Double?) -> Double? {
        guard let before, let after else { return nil }
        return after - before
    }

    /// The private broker started by scripts/services.sh, if this shell started one.
    static func brokerPID() -> Int? {
        guard let dir = ProcessInfo.processInfo.environment["WAYMARK_SERVICES_DIR"],
              let text = try? String(contentsOfFile: dir + "/mosquitto.pid", encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func stat(_ path: String) -> (name: String, seconds: Double)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let name = String(text[text.index(after: open)..<close])
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return nil }
        return (name, (u + s) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }
}

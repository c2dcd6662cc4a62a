import Foundation
import WaymarkCore
public import WaymarkSimulation

/// A converted run of the Kolakowski BLE RSS dataset (`tools/kolakowski/convert.py`): the real
/// sightings, and per 1/3-s row the robot's LiDAR position and the room it is in.
public struct KolakowskiRecording: Sendable {
    public struct Row: Sendable, Decodable {
        public var t: Double
        public var x: Double
        public var y: Double
        public var region: String
    }

    /// `test-robot` or `calibration`.
    public let name: String
    public let sightingsPath: String
    public let rows: [Row]
    /// The dataset's single tag, as its sightings name it.
    public static let device = "mac:02-00-00-00-00-01"
    /// A gap longer than this between rows separates two recording sessions (s).
    public static let sessionGapS = 2.0

    /// Reads `<directory>/<name>.{sightings,truth}.jsonl`, converting the dataset first when they
    /// are missing (python3 tools/kolakowski/convert.py; `repository` is the checkout's root).
    public init(name: String, directory: String, dataset: String, repository: String) throws {
        self.name = name
        sightingsPath = "\(directory)/\(name).sightings.jsonl"
        let truthPath = "\(directory)/\(name).truth.jsonl"
        try Self.convertIfMissing([sightingsPath, truthPath], needs: "anchors.csv", directory: directory, dataset: dataset,
                                  repository: repository)
        let decoder = JSONDecoder()
        var rows: [Row] = []
        try JSONLinesFile.forEachLine(path: truthPath) { line, n in
            guard !line.isEmpty else { return }
            do { rows.append(try decoder.decode(Row.self, from: Data(buffer: line))) } catch {
                throw AccuracyError("\(truthPath):\(n): not a {\"t\",\"x\",\"y\",\"region\"} line; re-run tools/kolakowski/convert.py")
            }
        }
        guard !rows.isEmpty else { throw AccuracyError("\(truthPath): no rows; re-run tools/kolakowski/convert.py") }
        self.rows = rows
    }

    private init(name: String, sightingsPath: String, rows: [Row]) {
        self.name = name
        self.sightingsPath = sightingsPath
        self.rows = rows
    }

    /// The same recording with each row's region given by `region` (the same readings, another
    /// drawing of the venue: `KolakowskiOpenPlan`).
    public func relabelled(_ region: (Row) -> String) -> KolakowskiRecording {
        KolakowskiRecording(name: name, sightingsPath: sightingsPath, rows: rows.map { var r = $0; r.region = region($0); return r })
    }

    /// Runs `tools/kolakowski/convert.py` from `dataset` into `directory` unless every one of `files`
    /// is there; `needs` is a file of the dataset the conversion reads (checked first, to say what is
    /// wrong when the dataset is missing).
    static func convertIfMissing(_ files: [String], needs: String, directory: String, dataset: String, repository: String) throws {
        let fm = FileManager.default
        guard !files.allSatisfy({ fm.fileExists(atPath: $0) }) else { return }
        guard fm.fileExists(atPath: dataset + "/" + needs) else {
            throw AccuracyError("\(dataset): the Kolakowski dataset is not there (no \(needs)); "
                                + "set WAYMARK_KOLAKOWSKI to the folder kolakowski-ble-rss-fingerprints-calib2021")
        }
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try ReplayRunner.run("/usr/bin/env", ["python3", repository + "/tools/kolakowski/convert.py", "--dataset", dataset,
                                              "--out", directory], log: directory + "/convert.log")
    }

    /// Sessions as row index ranges (split at gaps longer than `sessionGapS`).
    public var sessions: [Range<Int>] { sessions(gap: Self.sessionGapS) }

    /// Row index ranges split at gaps between rows longer than `gap` seconds.
    public func sessions(gap: Double) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        for i in 1..<max(rows.count, 1) where rows[i].t - rows[i - 1].t > gap {
            out.append(start..<i)
            start = i
        }
        out.append(start..<rows.count)
        return out
    }

    /// The per-row room labels as true visits in `waymark simulate --truth` format: each row's room
    /// holds until the next row (the last row of a session for one row interval), consecutive rows
    /// in the same room form one visit; one presence line per session.
    public func writeVisitTruth(to path: String, device: String = KolakowskiRecording.device) throws {
        let lines = visitTruthLines(sessions: sessions, device: device)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `writeVisitTruth`'s lines for some of the sessions (row ranges within a `sessions` one),
    /// under `device`, every time moved by `shift` seconds.
    public func visitTruthLines(sessions: [Range<Int>], device: String, shift: Double = 0) -> [String] {
        var lines: [String] = []
        func q(_ s: String) -> String { "\"\(s)\"" }
        for whole in sessions {
            // Within the range, the presence lines follow the short (`sessionGapS`) sessions.
            for session in self.sessions.compactMap({ s -> Range<Int>? in
                let r = s.clamped(to: whole)
                return r.isEmpty ? nil : r
            }) {
                let first = rows[session.lowerBound], last = rows[session.upperBound - 1]
                let step = session.count > 1 ? (last.t - first.t) / Double(session.count - 1) : 1.0 / 3
                lines.append("{\"type\":\"presence\",\"device\":\(q(device)),\"entered\":\(first.t + shift),\"exited\":\(last.t + step + shift)}")
                var i = session.lowerBound
                while i < session.upperBound {
                    var j = i + 1
                    while j < session.upperBound && rows[j].region == rows[i].region { j += 1 }
                    let exited = j < session.upperBound ? rows[j].t : last.t + step
                    lines.append("{\"type\":\"truth\",\"device\":\(q(device)),\"region\":\(q(rows[i].region)),\"entered\":\(rows[i].t + shift),\"exited\":\(exited + shift)}")
                    i = j
                }
            }
        }
        return lines
    }

    /// Whether a row lies within `within` seconds of `time`.
    public func hasRow(near time: Double, within: Double) -> Bool {
        var lo = 0, hi = rows.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rows[mid].t < time { lo = mid + 1 } else { hi = mid }
        }
        if lo < rows.count && rows[lo].t - time <= within { return true }
        return lo > 0 && time - rows[lo - 1].t <= within
    }

    /// The robot's true path as a simulator trajectory (floor 0), one waypoint per row.
    public var trajectory: Trajectory {
        Trajectory(waypoints: rows.map { .init(time: $0.t, position: Point(x: $0.x, y: $0.y), floor: 0) })
    }
}

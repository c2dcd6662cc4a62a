import Foundation
import WaymarkSimulation

/// The real recordings as a venue with several tags at once: the Kolakowski robot run and each
/// session of the calibration run (four), moved in time to start together, `staggerS` seconds
/// apart, each under its own device id.
///
/// The radio of each tag is as recorded; what changes is what the engine's self-calibration sees:
/// five tags in different rooms at the same time, as in any venue with more than one visitor,
/// instead of one tag whose sessions follow each other. The stagger keeps the tags' seconds from
/// lining up (the recordings were all made on the same 1/3-s grid).
public struct KolakowskiTogether: Sendable {
    /// A gap in a recording's rows longer than this separates two of the sessions that become
    /// tags (the calibration run pauses for half an hour and more between its four; the robot
    /// run's short breaks stay within one).
    public static let sessionGapS = 60.0
    public static let defaultStaggerS = 7.3
    public static let name = "together"

    public let sightingsPath: String
    public let truthPath: String
    /// The tags' device ids, in the order of the recordings and sessions.
    public let devices: [String]

    /// Writes `<directory>/together.sightings.jsonl` and `truthPath` (`waymark simulate --truth`
    /// format) from `recordings`, whose sightings are read from their converted files.
    public init(recordings: [KolakowskiRecording], directory: String, truthPath: String,
                staggerS: Double = Self.defaultStaggerS) throws {
        sightingsPath = "\(directory)/\(Self.name).sightings.jsonl"
        self.truthPath = truthPath
        var pieces: [(recording: KolakowskiRecording, session: Range<Int>)] = []
        for recording in recordings {
            pieces += recording.sessions(gap: Self.sessionGapS).map { (recording, $0) }
        }
        guard let origin = pieces.map({ $0.recording.rows[$0.session.lowerBound].t }).min() else {
            throw AccuracyError("together: no recording to combine")
        }
        var sightings: [(t: Double, line: [String: Any])] = []
        var truth: [String] = []
        var devices: [String] = []
        for (i, readings) in try Self.readingsBySession(of: recordings, pieces: pieces).enumerated() {
            let piece = pieces[i]
            let device = String(format: "mac:02-00-00-00-01-%02x", i)
            devices.append(device)
            let shift = origin + Double(i) * staggerS - piece.recording.rows[piece.session.lowerBound].t
            for var line in readings {
                guard let t = line["t"] as? Double else { continue }
                let moved = ((t + shift) * 1000).rounded() / 1000
                line["t"] = moved
                line["device"] = device
                sightings.append((moved, line))
            }
            truth += piece.recording.visitTruthLines(sessions: [piece.session], device: device, shift: shift)
        }
        self.devices = devices
        // In time order, as `waymark replay` reads a recording; a stable sort keeps each moment's
        // readings in the order the recordings list them.
        let ordered = sightings.enumerated().sorted { ($0.element.t, $0.offset) < ($1.element.t, $1.offset) }
        var text = ""
        for (_, s) in ordered {
            let data = try JSONSerialization.data(withJSONObject: s.line, options: [.sortedKeys])
            text += String(decoding: data, as: UTF8.self) + "\n"
        }
        try text.write(toFile: sightingsPath, atomically: true, encoding: .utf8)
        try (truth.joined(separator: "\n") + "\n").write(toFile: truthPath, atomically: true, encoding: .utf8)
    }

    /// Each piece's sightings: those of its recording from half-way through the pause before the
    /// session to half-way through the pause after it.
    static func readingsBySession(of recordings: [KolakowskiRecording],
                                  pieces: [(recording: KolakowskiRecording, session: Range<Int>)]) throws -> [[[String: Any]]] {
        var out: [[[String: Any]]] = []
        for recording in recordings {
            let sessions = pieces.filter { $0.recording.name == recording.name }.map(\.session)
            let rows = recording.rows
            var bounds: [Double] = []
            for (a, b) in zip(sessions, sessions.dropFirst()) {
                bounds.append((rows[a.upperBound - 1].t + rows[b.lowerBound].t) / 2)
            }
            var parts = [[[String: Any]]](repeating: [], count: sessions.count)
            try JSONLinesFile.forEachLine(path: recording.sightingsPath) { line, n in
                guard !line.isEmpty else { return }
                guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: line)) as? [String: Any],
                      let t = object["t"] as? Double else {
                    throw AccuracyError("\(recording.sightingsPath):\(n): not a sightings line; re-run tools/kolakowski/convert.py")
                }
                parts[bounds.filter { t >= $0 }.count].append(object)
            }
            out += parts
        }
        return out
    }
}

import ArgumentParser
import Foundation
import WaymarkConfig
import WaymarkCore
import WaymarkFusion

extension SiteCommand {
    /// `waymark site calibrate`: the engine's self-calibration over a recording, printed with its
    /// uncertainty, and optionally written into the site file's `calibration:` section.
    struct Calibrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Learn the venue's radio calibration from a recording and print it (or write it into the site file).",
            discussion: """
            Runs the fusion engine over the sightings (as `waymark replay --sort` does, with --batches for edge batches: \
            the whole file in time order, whatever order the gateways' lines arrived in) \
            and prints what its self-calibration learned: the measured-power correction, the path-loss exponent, \
            the room loss and each gateway's deviation from the model, with standard errors (docs/fusion.md). \
            With --write the site file's `calibration:` section is replaced (or added at the end) with these values, \
            leaving the rest of the file as it is; the engine then starts from them.

            With --truth the recording is a walk test whose places are known: a tag carried to each region and held \
            there for half a minute or more, one {"type":"truth","device","region","entered","exited"} line per stay \
            (times in Unix seconds or ISO-8601). The calibration then learns from those seconds in those regions \
            instead of where the tracker believed the tag was. Without it, a gateway reading far off in a venue with \
            few tags is learned short: the place and the offset come from the same readings (docs/fusion.md, \
            "A walk test").
            """)

        @Option(help: "The site file (YAML).") var site: String
        @Option(help: "The sightings file (JSONL), or edge batches with --batches.") var input: String
        @Flag(help: "The input holds edge batches (one SightingBatch per line).") var batches = false
        @Flag(help: "Write the values into the site file's calibration: section.") var write = false
        @Option(help: "Where the tags truly were (JSONL stays of a walk test); the calibration learns from those places.")
        var truth: String?

        func run() throws {
            let loaded = try loadSiteOrExit(site)
            guard let reader = LineReader(path: input) else {
                printError("\(input): cannot open the sightings file")
                throw ExitCode(1)
            }
            var teacher: CalibrationTeacher?
            if let truth {
                do { teacher = try Self.teacher(path: truth, site: loaded) } catch {
                    printError("\(error)")
                    throw ExitCode(1)
                }
            }
            // The whole recording in time order: a walk recorded from the broker can hold a gateway's
            // batches minutes after the others' (its spool catching up after a Wi-Fi drop), and a
            // recording pieced together per gateway holds them one after another. A calibration input
            // is a quarter of an hour to a day; it fits in memory.
            var replay = Replay(site: loaded, inputName: input, reorderWindow: .infinity, includeTransitions: false, writer: OutputWriter(),
                                teacher: teacher)
            if teacher != nil { replay.liveLocations = [] }
            replay.read(reader, batches: batches)
            try replay.finish()
            let c = replay.calibration
            guard c.updates >= 60 else {
                if let truth {
                    printError("\(input): only \(Int(c.updates)) seconds of the stays in \(truth) could teach (of \(teacher?.seconds ?? 0) covered); "
                               + "check that its device ids and times match the recording, and hold the tag in each region longer")
                } else {
                    printError("\(input): only \(Int(c.updates)) seconds in which a device's region was certain; "
                               + "record longer (at least a few minutes of devices moving through the venue) and run again")
                }
                throw ExitCode(1)
            }
            print(Self.table(c, site: loaded, taughtBy: truth))
            if truth == nil, let note = Self.standingNote(c) { print(note) }
            if let teacher {
                let doubtful = Self.doubtfulStays(teacher, lives: replay.liveLocations ?? [], site: loaded)
                if !doubtful.isEmpty {
                    print("stays in which the engine placed the tag elsewhere most of the time (a wrong line, or a gateway near that region far off; check them before --write):")
                    for line in doubtful.prefix(Self.doubtfulShown) { print("  " + line) }
                    if doubtful.count > Self.doubtfulShown { print("  … and \(doubtful.count - Self.doubtfulShown) more") }
                }
            }
            if let teacher, Int(c.updates) < teacher.seconds * 3 / 4 {
                print("(\(teacher.seconds - Int(c.updates)) of the \(teacher.seconds) seconds the stays cover did not teach: the tag unheard in them, "
                      + "its level or readings far from the model, or the stay's region not among the "
                      + "regions the engine followed it in; check the stays' times and regions if many)")
            }
            if write {
                let text = try String(contentsOfFile: site, encoding: .utf8)
                let updated = Self.rewrite(text, with: Self.section(c, site: loaded, input: input, taughtBy: truth))
                try Data(updated.utf8).write(to: URL(fileURLWithPath: site))
                // The result must still load.
                _ = try loadSiteOrExit(site)
                print("\(site): calibration: section written")
            }
        }

        static func table(_ c: VenueCalibration, site: Site, taughtBy truth: String? = nil) -> String {
            let u = c.uncertainty
            func f(_ v: Double, _ digits: Int = 1) -> String { String(format: "%+.\(digits)f", v) }
            func se(_ v: Double, _ digits: Int = 1) -> String { v.isFinite ? String(format: "± %.\(digits)f", v) : "± ?" }
            var lines = [
                truth.map { "learned from \(Int(c.updates)) seconds of the stays in \($0)" }
                    ?? "learned from every second (the level from \(Int(c.levelEvidence)) seconds' worth, weighed by how sure the place was); exponent and room loss from \(Int(c.updates)) confident seconds' worth",
                "measured-power correction  \(f(c.powerCorrectionDB)) dB \(se(u.powerDB))   (added to every tag's measured power)",
                "path-loss exponent         \(String(format: "%.2f", c.pathLossExponent)) \(se(u.exponent, 2))   (site: \(String(format: "%.2f", site.calibration.pathLossExponent ?? site.fusion.pathLossExponent)))",
                "room loss                  \(String(format: "%.1f", c.roomLossDB)) dB \(se(u.roomLossDB))   (a wall between two rooms)",
                "reception sensitivity      \(c.receptionSummary)   (share of a reliable gateway's reports that arrive, "
                    + "by the RSSI expected there; from \(Int(c.receptionOpportunities)) gateway-seconds; learned again at every start)",
                "gateway                         deviation          readings   correction applied   reliability",
            ]
            let corrections = c.appliedCorrectionsDB
            for (g, gw) in site.gateways.enumerated() {
                let n = Int(c.gatewayReadings[g])
                let dev = Double(n) >= VenueCalibration.offsetMinReadings ? "\(f(c.gatewayOffsetDB[g])) dB \(se(u.gatewayDB[g]))" : "(too few readings)"
                let applied = corrections[g] != 0 ? f(corrections[g]) + " dB" : "–"
                let reliability = c.receptionOpportunities(gateway: g) >= 200
                    ? "\(Int((c.gatewayReliability[g] * 100).rounded())) %" : "(too few seconds)"
                lines.append(gw.id.padding(toLength: 32, withPad: " ", startingAt: 0) + dev.padding(toLength: 19, withPad: " ", startingAt: 0)
                             + String(n).leftPadded(9) + "   " + applied.padding(toLength: 21, withPad: " ", startingAt: 0) + reliability)
            }
            lines.append("(a deviation within ±\(Int(VenueCalibration.offsetDeadZoneDB)) dB is not corrected: it is as likely where the gateway hangs as its hardware;")
            let reliability = " reliability: the share of a device's seconds the gateway reports when the signal is strong — a low one points at its scanner or radio"
            if truth == nil {
                lines.append(reliability + ";")
                lines.append(" ±: the readings' scatter only. With few tags a gateway far off is learned short, its region's place and its offset")
                lines.append(" taken from the same readings: a walk test with --truth learns it from known places)")
            } else {
                lines.append(reliability + ")")
            }
            return lines.joined(separator: "\n")
        }

        /// A warning when most of the recording's device-seconds were of tags that had stayed at one
        /// place for over a minute (`VenueCalibration.stayWeight`): what was learned rests on the few
        /// others, and a parked tag's readings describe its place, not the gateways.
        static func standingNote(_ c: VenueCalibration) -> String? {
            let t = c.taught
            guard t.seconds > 0, t.worth < 0.5 * t.seconds else { return nil }
            return "(mostly tags standing still: \(Int(t.seconds)) device-seconds, together worth \(Int(t.worth)). A tag that has "
                + "stayed at one place for over a minute teaches its place rather than how the gateways read, and counts less and less. "
                + "Record tags carried through the venue, or walk one through it with --truth, before --write)"
        }

        /// The `calibration:` section for the site file.
        static func section(_ c: VenueCalibration, site: Site, input: String, taughtBy truth: String? = nil) -> String {
            let date = ISO8601DateFormatter().string(from: Date())
            var offsets: [(String, Double)] = []
            let corrections = c.appliedCorrectionsDB
            for (g, gw) in site.gateways.enumerated() {
                let v = (site.calibration.gatewayOffsetsDB[gw.id] ?? 0) + corrections[g]
                if abs(v) >= 0.05 { offsets.append((gw.id, (v * 10).rounded() / 10)) }
            }
            var s = """
            calibration:
              # Written by `waymark site calibrate --write` on \(date) from \(input)
              # (\(truth.map { "\(Int(c.updates)) seconds of the stays in \($0)" } ?? "\(Int(c.updates)) confident seconds' worth")). The engine starts from these and goes on learning.
              measured_power_offset_db: \(String(format: "%.1f", c.powerCorrectionDB))
              path_loss_exponent: \(String(format: "%.2f", c.pathLossExponent))
              room_loss_db: \(String(format: "%.1f", c.roomLossDB))

            """
            if offsets.isEmpty {
                s += "  gateway_offsets_db: {}\n"
            } else {
                s += "  gateway_offsets_db:\n" + offsets.map { "    \($0.0): \(String(format: "%.1f", $0.1))\n" }.joined()
            }
            return s
        }

        /// `text` with its top-level `calibration:` block replaced by `section` (or `section`
        /// appended when there is none). A block runs to the next line that starts a top-level key.
        static func rewrite(_ text: String, with section: String) -> String {
            var lines = text.components(separatedBy: "\n")
            if lines.last == "" { lines.removeLast() }
            if let start = lines.firstIndex(where: { $0.hasPrefix("calibration:") }) {
                var end = start + 1
                while end < lines.count {
                    let l = lines[end]
                    if let first = l.first, first != " " && first != "\t" && first != "#" { break }
                    end += 1
                }
                lines.replaceSubrange(start..<end, with: section.components(separatedBy: "\n").dropLast())
                return lines.joined(separator: "\n") + "\n"
            }
            return lines.joined(separator: "\n") + "\n\n" + section
        }
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

import Foundation
public import WaymarkCore
import WaymarkConfig

/// The real flat drawn as an open plan: every anchor a region of its own, its cell the floor nearer
/// to it than to any other anchor, cells that touch joined by edges, all in one room (the flat's
/// walls are not drawn). The truth of each row is the cell of the robot's LiDAR position.
///
/// The rooms of the flat are what a tracker finds easiest: a device dwells in a room and walls set
/// the gateways' readings apart. An open floor with gateways a few metres apart is the hard case,
/// and until this row only the simulated open hall measured it. Here the readings are real, and
/// the naive rule (strongest reading in the last 2 s) answers exactly the question asked: which
/// anchor is nearest. Nothing is tuned on it; the engine runs with its default parameters.
public struct KolakowskiOpenPlan: Sendable {
    public static let name = "open plan"
    /// Resolution of the cells' extent and adjacency (m).
    static let gridM = 0.1

    public let site: Site
    public let sitePath: String

    /// Draws the open plan of `flat`'s gateways over the floor `recordings` cover (their rows'
    /// positions, with half a metre around) and writes it to `path`.
    public init(flat: Site, recordings: [KolakowskiRecording], path: String) throws {
        let anchors = flat.gateways.map(\.position)
        let rows = recordings.flatMap(\.rows)
        guard anchors.count >= 2, !rows.isEmpty else { throw AccuracyError("open plan: needs two anchors and the recordings' rows") }
        let x0 = rows.map(\.x).min()! - 0.5, x1 = rows.map(\.x).max()! + 0.5
        let y0 = rows.map(\.y).min()! - 0.5, y1 = rows.map(\.y).max()! + 0.5
        let nx = Int((x1 - x0) / Self.gridM) + 1, ny = Int((y1 - y0) / Self.gridM) + 1
        var owner = [Int](repeating: 0, count: nx * ny)
        var radius = [Double](repeating: 1, count: anchors.count)
        for i in 0..<nx {
            for j in 0..<ny {
                let p = Point(x: x0 + Double(i) * Self.gridM, y: y0 + Double(j) * Self.gridM)
                let k = Self.nearest(anchors, p)
                owner[i * ny + j] = k
                radius[k] = max(radius[k], p.distance(to: anchors[k]))
            }
        }
        var touching = Set<[Int]>()
        for i in 0..<nx {
            for j in 0..<ny {
                let k = owner[i * ny + j]
                if i + 1 < nx, owner[(i + 1) * ny + j] != k { touching.insert([k, owner[(i + 1) * ny + j]].sorted()) }
                if j + 1 < ny, owner[i * ny + j + 1] != k { touching.insert([k, owner[i * ny + j + 1]].sorted()) }
            }
        }
        var lines = [
            "# The Kolakowski flat drawn as an open plan by the accuracy suite (WaymarkAccuracy/KolakowskiOpenPlan.swift):",
            "# one region per anchor, its cell the floor nearer to it than to any other; the walls are not drawn.",
            "site: kolakowski-open-plan", "gateways:",
        ]
        for g in flat.gateways { lines.append("  - { id: \(g.id), position: [\(g.position.x), \(g.position.y)] }") }
        lines.append("regions:")
        for (k, g) in flat.gateways.enumerated() {
            lines.append("  - { id: \(Self.cell(g.id)), gateways: [\(g.id)], position: [\(g.position.x), \(g.position.y)], "
                         + "radius_m: \(String(format: "%.2f", radius[k])), room: floor }")
        }
        lines.append("edges:")
        for pair in touching.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            lines.append("  - [\(Self.cell(flat.gateways[pair[0]].id)), \(Self.cell(flat.gateways[pair[1]].id))]")
        }
        lines.append("tracking:\n  macs: [\"02:00:00:00:00:01\"]\n")
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        do {
            (site, _) = try SiteLoader.load(path: path)
        } catch {
            throw AccuracyError(error.diagnostics.map(\.description).joined(separator: "\n"))
        }
        sitePath = path
    }

    /// The region of gateway `id`'s cell.
    static func cell(_ id: String) -> String { "cell-\(id)" }

    static func nearest(_ anchors: [Point], _ p: Point) -> Int {
        anchors.indices.min { p.distance(to: anchors[$0]) < p.distance(to: anchors[$1]) }!
    }

    /// `recording` with each row's region the cell of its position.
    public func truth(_ recording: KolakowskiRecording) -> KolakowskiRecording {
        let anchors = site.gateways.map(\.position)
        return recording.relabelled { Self.cell(site.gateways[Self.nearest(anchors, Point(x: $0.x, y: $0.y))].id) }
    }
}

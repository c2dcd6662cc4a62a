import Foundation
import WaymarkCore
import WaymarkSimulation

/// The Kolakowski dataset's walking-person test, converted by `tools/kolakowski/convert.py`: real
/// sightings of a tag carried by a person, and as ground truth only the route — the rooms in the
/// order the person walked through them (from the dataset's reference trajectory; no times).
public struct KolakowskiWalk: Sendable {
    struct File: Decodable {
        var device: String
        var laps: Int
        var route: [String]
    }

    public static let name = "test-walk"
    public let sightingsPath: String
    /// The device the route belongs to.
    public let device: String
    /// Times the person walked the trajectory out and back.
    public let laps: Int
    /// Room (region) ids in the order walked through.
    public let route: [String]

    /// Reads `<directory>/test-walk.{sightings.jsonl,route.json}`, converting the dataset first when
    /// they are missing (python3 tools/kolakowski/convert.py; `repository` is the checkout's root).
    public init(directory: String, dataset: String, repository: String) throws {
        sightingsPath = "\(directory)/\(Self.name).sightings.jsonl"
        let routePath = "\(directory)/\(Self.name).route.json"
        try KolakowskiRecording.convertIfMissing([sightingsPath, routePath], needs: "tests/path_reference.csv", directory: directory,
                                                 dataset: dataset, repository: repository)
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: Data(contentsOf: URL(fileURLWithPath: routePath))) } catch {
            throw AccuracyError("\(routePath): not a {\"device\", \"laps\", \"route\"} object; re-run tools/kolakowski/convert.py")
        }
        guard !file.route.isEmpty else { throw AccuracyError("\(routePath): empty route; re-run tools/kolakowski/convert.py") }
        device = file.device
        laps = file.laps
        route = file.route
    }
}

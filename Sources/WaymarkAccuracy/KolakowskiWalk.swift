import Foundation
public import WaymarkCore
public import WaymarkSimulation

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
        let fm = FileManager.default
        if !fm.fileExists(atPath: sightingsPath) || !fm.fileExists(atPath: routePath) {
            guard fm.fileExists(atPath: dataset + "/tests/path_reference.csv") else {
                throw AccuracyError("\(dataset): the Kolakowski dataset's walk test is not there (no tests/path_reference.csv); "
                                    + "set WAYMARK_KOLAKOWSKI to the folder kolakowski-ble-rss-fingerprints-calib2021")
            }
            try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try ReplayRunner.run("/usr/bin/env", ["python3", repository + "/tools/kolakowski/convert.py", "--dataset", dataset,
                                                  "--out", directory], log: directory + "/convert.log")
        }
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

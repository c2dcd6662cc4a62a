import Foundation
public import WaymarkCore
import WaymarkConfig
import Yams

/// A site file reduced to its geometry: the `fusion:` section is removed, so the engine runs with
/// its default parameters. The accuracy suite scores only such sites: parameters tuned on a
/// recording and scored on the same recording are not a result.
public enum GeometrySite {
    /// Writes `source` without its `fusion:` section to `destination` and loads it.
    public static func write(from source: String, to destination: String) throws -> Site {
        let text = try String(contentsOfFile: source, encoding: .utf8)
        guard let root = try Yams.compose(yaml: text), case .mapping(var mapping) = root else {
            throw AccuracyError("\(source): not a YAML mapping; pass a site file such as deploy/examples/museum.yaml")
        }
        mapping[Node("fusion")] = nil
        let yaml = "# Geometry of \(source) with its fusion section removed (default fusion parameters).\n"
            + (try Yams.serialize(node: .mapping(mapping)))
        try yaml.write(toFile: destination, atomically: true, encoding: .utf8)
        do {
            let (site, _) = try SiteLoader.load(path: destination)
            return site
        } catch {
            throw AccuracyError(error.diagnostics.map(\.description).joined(separator: "\n"))
        }
    }
}

/// Why the suite could not run: what is wrong and how to fix it.
public struct AccuracyError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

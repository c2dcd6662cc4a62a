import WaymarkCore
import Foundation
import Yams

/// Configuration for a service from four layers, highest first: command-line flags, environment
/// variables, a YAML file, and the defaults in the service's config struct.
///
/// Keys are dotted snake_case (`mqtt.url`, `spool.max_bytes`). In the environment a key becomes
/// `<PREFIX>_` + upper case with `.` → `_` (`WAYMARK_EDGE_MQTT_URL`). In the file it is a nested
/// mapping (`mqtt: {url: …}`). Keys marked secret are never printed by `describe()`.
public struct ConfigLayers: Sendable {
    public struct ConfigError: Error, CustomStringConvertible, Sendable {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Where a value came from, for `describe()` and error messages.
    public enum Source: String, Sendable { case flag, environment, file, `default` }

    private var flags: [String: String]
    private var environment: [String: String]
    private var file: [String: String]
    private let envPrefix: String
    private let filePath: String?

    /// - Parameters:
    ///   - knownKeys: every key the service understands; a file key or flag outside this list is an error.
    public init(filePath: String?, envPrefix: String, flags: [String: String],
                environment: [String: String] = ProcessInfo.processInfo.environment, knownKeys: [String]) throws {
        self.envPrefix = envPrefix
        self.filePath = filePath
        self.flags = flags
        var env: [String: String] = [:]
        for key in knownKeys {
            if let v = environment[Self.envName(key, prefix: envPrefix)] { env[key] = v }
        }
        self.environment = env
        var fileValues: [String: String] = [:]
        if let filePath {
            let text: String
            do { text = try String(contentsOfFile: filePath, encoding: .utf8) } catch {
                throw ConfigError("\(filePath): cannot read the configuration file: \(error.localizedDescription)")
            }
            let node: Node?
            do { node = try Yams.compose(yaml: text) } catch {
                throw ConfigError("\(filePath): not valid YAML: \(error)")
            }
            if let node { Self.flatten(node, prefix: "", into: &fileValues) }
        }
        self.file = fileValues
        for key in fileValues.keys.sorted() where !knownKeys.contains(key) {
            throw ConfigError("\(filePath ?? "config"): unknown key '\(key)'; known keys: \(knownKeys.joined(separator: ", "))")
        }
        for key in flags.keys.sorted() where !knownKeys.contains(key) {
            throw ConfigError("unknown setting '\(key)'; known keys: \(knownKeys.joined(separator: ", "))")
        }
    }

    public static func envName(_ key: String, prefix: String) -> String {
        prefix + "_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The raw value and its source, or nil when no layer sets it.
    public func raw(_ key: String) -> (value: String, source: Source)? {
        if let v = flags[key] { return (v, .flag) }
        if let v = environment[key] { return (v, .environment) }
        if let v = file[key] { return (v, .file) }
        return nil
    }

    public func string(_ key: String, default d: String) -> String { raw(key)?.value ?? d }
    public func optionalString(_ key: String) -> String? { raw(key)?.value }

    public func int(_ key: String, default d: Int) throws -> Int {
        guard let (v, source) = raw(key) else { return d }
        guard let i = Int(v.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigError("\(where_(key, source)): '\(v)' is not a whole number")
        }
        return i
    }

    public func double(_ key: String, default d: Double) throws -> Double {
        guard let (v, source) = raw(key) else { return d }
        guard let x = Double(v.trimmingCharacters(in: .whitespaces)), x.isFinite else {
            throw ConfigError("\(where_(key, source)): '\(v)' is not a number")
        }
        return x
    }

    public func bool(_ key: String, default d: Bool) throws -> Bool {
        guard let (v, source) = raw(key) else { return d }
        switch v.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ConfigError("\(where_(key, source)): '\(v)' is not true or false")
        }
    }

    /// Human description of where a key is set, for error messages.
    public func where_(_ key: String, _ source: Source) -> String {
        switch source {
        case .flag: "--\(key.replacingOccurrences(of: "_", with: "-").replacingOccurrences(of: ".", with: "-"))"
        case .environment: Self.envName(key, prefix: envPrefix)
        case .file: "\(filePath ?? "config"): \(key)"
        case .default: key
        }
    }

    /// One line per set key with its source; values of `secretKeys` are replaced by `***`.
    public func describe(secretKeys: Set<String>) -> [String] {
        var keys = Set(flags.keys).union(environment.keys).union(file.keys)
        keys.subtract([])
        return keys.sorted().compactMap { key in
            guard let (v, source) = raw(key) else { return nil }
            return "\(key) = \(secretKeys.contains(key) ? "***" : v) (\(source.rawValue))"
        }
    }

    private static func flatten(_ node: Node, prefix: String, into out: inout [String: String]) {
        switch node {
        case .mapping(let m):
            for (k, v) in m {
                guard let key = k.string else { continue }
                flatten(v, prefix: prefix.isEmpty ? key : "\(prefix).\(key)", into: &out)
            }
        case .scalar(let s):
            out[prefix] = s.string
        case .sequence(let seq):
            out[prefix] = seq.compactMap { $0.string }.joined(separator: ",")
        case .alias:
            break
        }
    }
}

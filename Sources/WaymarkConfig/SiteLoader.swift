public import WaymarkCore
import Foundation
import Yams

/// Reads a site file (YAML) and validates it.
///
/// Problems come back as `SiteError` with one `SiteDiagnostic` per problem: YAML syntax errors
/// with line and column, keys the file format does not know (typos), type errors with the field
/// path, and everything `SiteValidator` checks.
public enum SiteLoader {
    /// Loads and validates the site file at `path`.
    public static func load(path: String) throws(SiteError) -> (site: Site, warnings: [SiteDiagnostic]) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SiteError([.init(.error, "", "cannot read the site file: \(error.localizedDescription)", file: path)])
        }
        return try parse(yaml: text, file: path)
    }

    /// Loads and validates site YAML from a string; `file` names it in diagnostics.
    public static func parse(yaml: String, file: String? = nil) throws(SiteError) -> (site: Site, warnings: [SiteDiagnostic]) {
        let node: Node
        do {
            guard let root = try Yams.compose(yaml: yaml) else {
                throw SiteError([.init(.error, "", "the site file is empty; see deploy/examples/ for a complete example", file: file)])
            }
            node = root
        } catch let e as SiteError {
            throw e
        } catch {
            throw SiteError([.init(.error, "", "not valid YAML: \(error)", file: file)])
        }

        var diags: [SiteDiagnostic] = []
        checkKeys(node, pattern: "", path: "", file: file, into: &diags)

        let doc: SiteDocument
        do {
            doc = try YAMLDecoder().decode(SiteDocument.self, from: node)
        } catch let error as DecodingError {
            diags.append(describe(error, file: file))
            throw SiteError(diags)
        } catch {
            diags.append(.init(.error, "", "\(error)", file: file))
            throw SiteError(diags)
        }
        let validated: (site: Site, warnings: [SiteDiagnostic])
        do {
            validated = try SiteValidator.validate(doc, file: file)
        } catch {
            throw SiteError(diags + error.diagnostics)
        }
        // WaymarkCore has no Foundation: the time zone database is consulted here.
        if TimeZone(identifier: validated.site.timeZone) == nil {
            diags.append(.init(.error, "timezone", "unknown time zone '\(validated.site.timeZone)'; write an IANA name such as Europe/Paris, America/New_York or UTC (the list: /usr/share/zoneinfo, package tzdata)", file: file))
        }
        if diags.contains(where: { $0.severity == .error }) { throw SiteError(diags + validated.warnings) }
        return (validated.site, diags + validated.warnings)
    }

    /// Flags mapping keys the site format does not define, with the closest known key as the fix.
    static func checkKeys(_ node: Node, pattern: String, path: String, file: String?, into diags: inout [SiteDiagnostic]) {
        switch node {
        case .mapping(let mapping):
            let allowed = SiteDocument.allowedKeys[pattern]
            for (k, v) in mapping {
                guard let key = k.string else { continue }
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                let childPattern = pattern.isEmpty ? key : "\(pattern).\(key)"
                if let allowed, !allowed.contains(key) {
                    let hint = closest(key, in: allowed).map { "; did you mean '\($0)'?" } ?? ""
                    diags.append(.init(.error, childPath, "unknown key '\(key)'\(hint) Known keys here: \(allowed.joined(separator: ", "))", file: file))
                    continue
                }
                checkKeys(v, pattern: childPattern, path: childPath, file: file, into: &diags)
            }
        case .sequence(let seq):
            for (i, item) in seq.enumerated() {
                checkKeys(item, pattern: pattern + "[]", path: "\(path)[\(i)]", file: file, into: &diags)
            }
        default:
            break
        }
    }

    static func closest(_ key: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(Array(key), Array($0))) }.min { $0.1 < $1.1 }
        guard let (best, d) = scored, d <= max(2, key.count / 3) else { return nil }
        return best
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var prev = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let cur = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
                prev = cur
            }
        }
        return row[b.count]
    }

    static func describe(_ error: DecodingError, file: String?) -> SiteDiagnostic {
        func path(_ codingPath: [any CodingKey]) -> String {
            var s = ""
            for key in codingPath {
                if let i = key.intValue { s += "[\(i)]" } else { s += s.isEmpty ? key.stringValue : ".\(key.stringValue)" }
            }
            return s
        }
        switch error {
        case .typeMismatch(let type, let ctx):
            return .init(.error, path(ctx.codingPath), "expected \(describe(type)) here; \(ctx.debugDescription)", file: file)
        case .valueNotFound(let type, let ctx):
            return .init(.error, path(ctx.codingPath), "missing value; expected \(describe(type))", file: file)
        case .keyNotFound(let key, let ctx):
            return .init(.error, path(ctx.codingPath + [key]), "missing", file: file)
        case .dataCorrupted(let ctx):
            return .init(.error, path(ctx.codingPath), ctx.debugDescription, file: file)
        @unknown default:
            return .init(.error, "", "\(error)", file: file)
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type: "a number"
        case is Int.Type: "a whole number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: "\(type)".contains("Array") ? "a list" : "a mapping"
        }
    }
}

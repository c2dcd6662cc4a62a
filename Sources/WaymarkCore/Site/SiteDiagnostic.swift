/// One problem found in a site file: where (file and field path such as `regions[3].gateways[0]`),
/// what is wrong and how to fix it.
public struct SiteDiagnostic: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var severity: Severity
    public var path: String
    public var message: String
    public var file: String?

    public init(_ severity: Severity, _ path: String, _ message: String, file: String? = nil) {
        self.severity = severity
        self.path = path
        self.message = message
        self.file = file
    }

    /// `site.yaml: regions[3].gateways[0]: error: unknown gateway 'gw-x'; …`
    public var description: String {
        let location = [file, path.isEmpty ? nil : path].compactMap { $0 }.joined(separator: ": ")
        return "\(location.isEmpty ? "" : location + ": ")\(severity.rawValue): \(message)"
    }
}

/// Thrown when a site file has errors; carries every diagnostic, warnings included.
public struct SiteError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [SiteDiagnostic]
    public init(_ diagnostics: [SiteDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// A report could not be produced. The message names what is wrong and how to fix it; for unknown
/// names and malformed values it lists the valid choices.
public struct ReportError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of problem it is, for callers that react differently (exit codes, tests).
    public enum Code: String, Sendable {
        case unknownReport
        case badArgument
        case database
        case schema
        case output
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static func unknownReport(_ name: String) -> ReportError {
        ReportError(.unknownReport, "unknown report '\(name)'; valid reports are:\n\(ReportKind.choicesDescription)")
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ option: String, _ value: String, _: T.Type) -> ReportError
    where T.RawValue == String {
        let valid = T.allCases.map(\.rawValue).joined(separator: ", ")
        return ReportError(.badArgument, "\(option) '\(value)' is not valid; use one of: \(valid)")
    }
}

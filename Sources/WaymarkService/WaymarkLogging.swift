public import Logging
import Foundation

/// Process-wide logging set-up for the services: one line per record on standard error,
/// `LEVEL label: message key=value…`, at the configured level.
///
/// Metadata keys used across Waymark live in `LogKey` so that logs stay greppable. Device
/// identifiers are only ever logged at `debug` or `trace` (privacy).
public enum WaymarkLogging {
    /// Bootstraps swift-log once per process. `level` is trace, debug, info, notice, warning, error
    /// or critical.
    public static func bootstrap(level: String) throws -> Logger.Level {
        guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
            throw ConfigLayers.ConfigError("log level '\(level)' is not one of trace, debug, info, notice, warning, error, critical")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = parsed
            return handler
        }
        return parsed
    }
}

/// Metadata keys shared by all Waymark logs.
public enum LogKey {
    public static let gateway = "gateway"
    public static let boot = "boot"
    public static let seq = "seq"
    public static let reason = "reason"
    public static let count = "count"
    public static let error = "error"
    public static let topic = "topic"
    /// Only at debug/trace: device ids are personal data.
    public static let device = "device"
}

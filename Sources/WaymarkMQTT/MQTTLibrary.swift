import CMosquitto

/// `mosquitto_lib_init` exactly once per process, before the first client is created.
///
/// libmosquitto's library state (OpenSSL and the socket layer) is process-wide; Swift's lazy
/// initialisation of a global is thread-safe and runs the initialiser once, which is what we need.
/// `mosquitto_lib_cleanup` is deliberately never called: other clients may still exist, and the
/// process exit releases everything.
enum MQTTLibrary {
    private static let initialised: Bool = {
        _ = mosquitto_lib_init()
        return true
    }()

    static func ensureInitialised() { _ = initialised }

    /// The linked libmosquitto version, e.g. `2.0.11`.
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}

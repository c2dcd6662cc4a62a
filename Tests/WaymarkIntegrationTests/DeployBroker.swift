import Foundation
import Testing

/// A private Mosquitto running the production configuration that deploy/mosquitto/ generates.
///
/// `start` writes a test site file, generates a throwaway CA and server certificate with
/// deploy/mosquitto/make-certs.sh, runs deploy/mosquitto/make-broker-config.sh for the site (the
/// only differences from production are the ports and file locations, passed as the script's own
/// options), and starts `mosquitto` with a main file that mirrors Debian's /etc/mosquitto/mosquitto.conf
/// (persistence location, log file, `include_dir` of a conf.d holding the generated waymark.conf).
/// Clients are the real mosquitto_pub and mosquitto_sub. Always `stop()` it.
final class DeployBroker: @unchecked Sendable {
    static let site = "deploy-test"
    static let gateways = ["gw-a", "gw-b", "gw.hall-c"]

    let directory: URL
    let localPort: Int
    let tlsPort: Int
    let process: Process
    var prefix: String { "waymark/v1/\(Self.site)" }
    var certificates: URL { directory.appendingPathComponent("certs") }
    var configuration: URL { directory.appendingPathComponent("waymark") }
    var logFile: URL { directory.appendingPathComponent("mosquitto.log") }
    var siteURL: URL { directory.appendingPathComponent("site.yaml") }

    static func gatewayUser(_ gateway: String) -> String { "gw.\(gateway)@\(site)" }
    static var aggregatorUser: String { "aggregator@\(site)" }
    static var readerUser: String { "reader@\(site)" }

    /// The test site file: a valid Waymark site with three gateways.
    static let siteFile = """
        site: \(site)
        gateways:
          - { id: gw-a, position: [0, 0] }
          - { id: gw-b, position: [10, 0] }
          - { id: gw.hall-c, position: [20, 0] }
        regions:
          - { id: a, gateways: [gw-a] }
          - { id: b, gateways: [gw-b] }
          - { id: c, gateways: [gw.hall-c] }
        edges:
          - [a, b]
          - [b, c]
        tracking:
          macs: ["e7:8f:13:56:24:ce"]

        """

    private init(directory: URL, localPort: Int, tlsPort: Int, process: Process) {
        self.directory = directory
        self.localPort = localPort
        self.tlsPort = tlsPort
        self.process = process
    }

    /// `brokerOptions` go to make-broker-config.sh as well (e.g. `--site-broker`); `extraConfiguration`
    /// files are copied into the broker's conf.d beside the generated waymark.conf (e.g. a bridge
    /// from make-bridge-config.sh).
    static func start(brokerOptions: [String] = [], extraConfiguration: [URL] = []) throws -> DeployBroker {
        try DeployEnvironment.requireTools(DeployEnvironment.brokerTools)
        let dir = try DeployEnvironment.temporaryDirectory("deploy-broker")
        let siteURL = dir.appendingPathComponent("site.yaml")
        try siteFile.write(to: siteURL, atomically: true, encoding: .utf8)
        let certs = dir.appendingPathComponent("certs"), config = dir.appendingPathComponent("waymark")
        let made = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-certs.sh"),
                                         ["--days", "2", certs.path, "localhost", "127.0.0.1"])
        try #require(made.status == 0, "make-certs.sh failed: \(made)")

        let localPort = try LocalPort.free(), tlsPort = try LocalPort.free()
        let generated = try DeployCommand.run(DeployEnvironment.script("deploy/mosquitto/make-broker-config.sh"), [
            "--config-dir", config.path, "--tls-port", String(tlsPort), "--tls-bind", "127.0.0.1",
            "--local-port", String(localPort),
            "--cafile", certs.appendingPathComponent("ca.crt").path,
            "--certfile", certs.appendingPathComponent("server.crt").path,
            "--keyfile", certs.appendingPathComponent("server.key").path,
        ] + brokerOptions + [siteURL.path, config.path])
        try #require(generated.status == 0, "make-broker-config.sh failed: \(generated)")

        // What Debian's /etc/mosquitto/mosquitto.conf provides in production.
        let confD = dir.appendingPathComponent("conf.d"), data = dir.appendingPathComponent("data")
        let log = dir.appendingPathComponent("mosquitto.log")
        for d in [confD, data] { try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(at: config.appendingPathComponent("waymark.conf"),
                                         to: confD.appendingPathComponent("waymark.conf"))
        for file in extraConfiguration {
            try FileManager.default.copyItem(at: file, to: confD.appendingPathComponent(file.lastPathComponent))
        }
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        if getuid() == 0 {  // the broker drops privileges to `mosquitto`, as in production
            for path in [data.path, log.path] {
                try FileManager.default.setAttributes([.ownerAccountName: "mosquitto"], ofItemAtPath: path)
            }
        }
        let main = """
            persistence true
            persistence_location \(data.path)/
            log_dest file \(log.path)
            log_type all
            include_dir \(confD.path)

            """
        let mainURL = dir.appendingPathComponent("mosquitto.conf")
        try main.write(to: mainURL, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: DeployEnvironment.tool("mosquitto")!)
        process.arguments = ["-c", mainURL.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try DeployCommand.launch(process)
        let broker = DeployBroker(directory: dir, localPort: localPort, tlsPort: tlsPort, process: process)
        // Mosquitto logs "running" once every listener is open.
        for _ in 0..<200 {
            if broker.log.contains("running") { return broker }
            if !process.isRunning { break }
            usleep(25_000)
        }
        let text = broker.log
        broker.stop()
        Issue.record("mosquitto did not start with the deploy configuration; its log:\n\(text)")
        throw DeployBrokerError.notStarted
    }

    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The password make-broker-config.sh generated for `user`.
    func password(_ user: String) throws -> String {
        let text = try String(contentsOf: configuration.appendingPathComponent("secrets").appendingPathComponent(user), encoding: .utf8)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the broker: SIGTERM (see `DeployCommand.launch`), then SIGKILL if it is still running
    /// after a second.
    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date(timeIntervalSinceNow: 1)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Clients (mosquitto_pub / mosquitto_sub, QoS 1)

    /// Connection options for `user` (nil: anonymous) on the plain loopback listener or over TLS.
    func connection(_ user: String?, password: String? = nil, tls: Bool = false) throws -> [String] {
        var args = ["-h", "127.0.0.1", "-p", String(tls ? tlsPort : localPort)]
        if tls { args += ["--cafile", certificates.appendingPathComponent("ca.crt").path] }
        if let user { args += ["-u", user, "-P", try password ?? self.password(user)] }
        return args
    }

    /// Publishes one QoS 1 message with mosquitto_pub (MQTT 3.1.1, as the Waymark services use).
    @discardableResult
    func publish(_ connection: [String], topic: String, _ message: String, retain: Bool = false) throws -> DeployCommandResult {
        try DeployCommand.run("mosquitto_pub", connection + ["-q", "1", "-t", topic, "-m", message] + (retain ? ["-r"] : []))
    }

    /// Opens a persistent session (clean session off) for `clientID` with QoS 1 subscriptions and
    /// leaves: the broker queues what matches, and what the ACL lets this account read, until
    /// `collect` reconnects.
    func openSession(_ connection: [String], clientID: String, topics: [String]) throws {
        let result = try DeployCommand.run("mosquitto_sub", connection + ["-c", "-i", clientID, "-q", "1", "-E"] + topics.flatMap { ["-t", $0] })
        try #require(result.status == 0, "could not open session \(clientID): \(result)")
    }

    /// Reconnects the session and returns every queued message as "topic payload", waiting
    /// `quiet` seconds after the last one. Reconnecting subscribes again, and a new subscription
    /// also delivers the retained messages it may read; `skipRetained` leaves those out (-R) so
    /// that only what was queued for the session is returned.
    func collect(_ connection: [String], clientID: String, topics: [String], skipRetained: Bool = false,
                 quiet: Int = 1) throws -> [String] {
        let result = try DeployCommand.run(
            "mosquitto_sub", connection + ["-c", "-i", clientID, "-q", "1", "-v", "-W", String(quiet)]
                + (skipRetained ? ["-R"] : []) + topics.flatMap { ["-t", $0] })
        // 27 is mosquitto_sub's exit status when -W expires, the normal end here.
        try #require(result.status == 0 || result.status == 27, "collecting \(clientID) failed: \(result)")
        return result.lines
    }
}

enum DeployBrokerError: Error { case notStarted }

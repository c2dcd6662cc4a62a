import Foundation
import Testing
import WaymarkMQTT

/// A message sequence of foreign receivers (tests/foreign-captures/*.jsonl, composed from the
/// formats ESPresense and Theengs/OpenMQTTGateway document): each line a topic, a payload, the
/// retain flag and the time from the start.
struct ForeignCapture {
    struct Line {
        var dt: Double
        var topic: String
        var payload: String
        var retain: Bool
    }

    var lines: [Line]

    /// Reads `name`, replacing each `from` topic prefix by its `to` (so parallel tests do not
    /// share topics).
    init(_ name: String, prefixes: [(from: String, to: String)]) throws {
        let path = DeployEnvironment.repositoryRoot.appendingPathComponent("tests/foreign-captures/\(name)").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        lines = try text.split(separator: "\n").map { raw in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any])
            var topic = try #require(o["topic"] as? String)
            for (from, to) in prefixes where topic.hasPrefix(from) { topic = to + topic.dropFirst(from.count) }
            return Line(dt: try #require(o["dt"] as? Double), topic: topic, payload: try #require(o["payload"] as? String),
                        retain: try #require(o["retain"] as? Bool))
        }
    }

    /// What was on the broker before the receivers' bridge started: the retained messages.
    var retained: [Line] { lines.filter(\.retain) }
    var live: [Line] { lines.filter { !$0.retain } }

    /// Publishes `lines` at their times (relative to the call), as the receivers would.
    static func play(_ lines: [Line], client: MQTTClient) throws {
        let start = Date()
        for line in lines {
            let wait = line.dt - Date().timeIntervalSince(start)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            try client.publish(topic: line.topic, payload: Array(line.payload.utf8), qos: 0, retain: line.retain)
        }
    }
}

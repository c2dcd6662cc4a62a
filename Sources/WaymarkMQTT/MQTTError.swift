import CMosquitto
import Foundation

/// The calling thread's errno (the struct's `errno` property shadows the global inside it).
private func currentErrno() -> Int32 { errno }

/// A failed libmosquitto call: which call, libmosquitto's own text for the code, and what to do.
///
/// `code` is the libmosquitto `MOSQ_ERR_*` value (or, for ``Kind/connectionRefused``, the CONNACK
/// return code); `errno` is kept when the library reported a system error.
public struct MQTTError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The arguments were rejected (bad topic, payload too large, bad option value).
        case invalidArgument
        /// Not connected to the broker right now; retry after the client reconnects.
        case notConnected
        /// The TCP connection could not be made (refused, unreachable, DNS failure).
        case unreachable
        /// The broker answered CONNACK with a refusal (bad credentials, not authorised, …).
        case connectionRefused
        /// TLS set-up or handshake failed (missing CA file, bad certificate or key).
        case tls
        /// The client's own outgoing queue is full (see ``MQTTClient/Options/maxQueued``).
        case queueFull
        /// The client was already closed.
        case closed
        /// Timed out waiting for the broker.
        case timeout
        /// Anything else libmosquitto reported.
        case other
    }

    public var kind: Kind
    /// The libmosquitto function that failed, e.g. `mosquitto_connect_async`.
    public var call: String
    public var code: Int32
    /// `mosquitto_strerror(code)` (or `mosquitto_connack_string` for a refusal).
    public var message: String
    /// What the operator can do about it.
    public var hint: String
    public var errno: Int32?

    public init(kind: Kind, call: String, code: Int32, message: String, hint: String, errno: Int32? = nil) {
        self.kind = kind
        self.call = call
        self.code = code
        self.message = message
        self.hint = hint
        self.errno = errno
    }

    public var description: String {
        var text = "\(call) failed: \(message) (code \(code)"
        if let errno { text += ", errno \(errno)" }
        text += ")"
        if !hint.isEmpty { text += "; \(hint)" }
        return text
    }

    /// Wraps a libmosquitto return code; `context` adds detail to the hint (e.g. `host:port`).
    static func from(call: String, code: Int32, context: String = "") -> MQTTError {
        let err = code == MOSQ_ERR_ERRNO.rawValue ? currentErrno() : nil
        let text = String(cString: mosquitto_strerror(code))
        let on = context.isEmpty ? "" : " (\(context))"
        switch code {
        case MOSQ_ERR_INVAL.rawValue, MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_MALFORMED_UTF8.rawValue,
             MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue:
            return MQTTError(kind: .invalidArgument, call: call, code: code, message: text,
                             hint: "check the topic, payload size and options passed\(on)", errno: err)
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue:
            return MQTTError(kind: .notConnected, call: call, code: code, message: text,
                             hint: "the client is not connected to the broker\(on); it reconnects by itself, retry later",
                             errno: err)
        case MOSQ_ERR_ERRNO.rawValue, MOSQ_ERR_EAI.rawValue, MOSQ_ERR_UNKNOWN.rawValue:
            return MQTTError(kind: .unreachable, call: call, code: code, message: text,
                             hint: "cannot reach the broker\(on): check the URL/host and port, that Mosquitto is running, and any firewall in between",
                             errno: err)
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return MQTTError(kind: .tls, call: call, code: code, message: text,
                             hint: "check the CA file, client certificate and key paths and that the broker's certificate matches its host name\(on)",
                             errno: err)
        case MOSQ_ERR_AUTH.rawValue, MOSQ_ERR_CONN_REFUSED.rawValue, MOSQ_ERR_NOT_SUPPORTED.rawValue:
            return MQTTError(kind: .connectionRefused, call: call, code: code, message: text,
                             hint: "the broker refused the connection\(on): check the username/password and the broker's ACLs",
                             errno: err)
        default:
            return MQTTError(kind: .other, call: call, code: code, message: text, hint: "", errno: err)
        }
    }

    /// A CONNACK refusal (`rc` of the on-connect callback, MQTT 3.1.1 return codes).
    static func refused(connack rc: Int32, context: String) -> MQTTError {
        let text = String(cString: mosquitto_connack_string(rc))
        let hint: String
        switch rc {
        case 4, 5: hint = "check the username/password for \(context) and the broker's password file/ACLs"
        case 2: hint = "the broker rejected the client id; pick another `client_id`"
        case 1: hint = "the broker does not speak MQTT 3.1.1; upgrade it or use a compatible broker"
        default: hint = "see the broker's log for \(context)"
        }
        return MQTTError(kind: .connectionRefused, call: "CONNACK", code: rc, message: text, hint: hint)
    }

    static func check(_ call: String, _ code: Int32, context: String = "") throws(MQTTError) {
        if code != MOSQ_ERR_SUCCESS.rawValue { throw from(call: call, code: code, context: context) }
    }
}

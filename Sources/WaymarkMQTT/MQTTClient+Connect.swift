import CMosquitto
import Foundation

extension MQTTClient {
    /// Applies credentials, TLS and the will, then starts connecting in the background
    /// (`mosquitto_connect_async` + `mosquitto_loop_start`).
    ///
    /// Throws at once for configuration errors (unreadable TLS files, a bad will topic). A broker
    /// that cannot be reached is not an error here: the network thread keeps retrying with backoff
    /// and reports through ``onEvent``. Use ``waitUntilConnected(timeout:)`` to wait for the first
    /// CONNACK (it reports the first connection failure with what to check).
    /// Call once per client.
    public func connect(_ connection: MQTTConnection) throws(MQTTError) {
        let mosq = try liveHandle("mosquitto_connect_async")
        guard !isLoopStarted else {
            throw MQTTError(kind: .invalidArgument, call: "mosquitto_connect_async", code: 0,
                            message: "connect() was already called", hint: "create one MQTTClient per connection")
        }
        box.context = connection.description
        if connection.password != nil && connection.username == nil {
            throw MQTTError(kind: .invalidArgument, call: "mosquitto_username_pw_set", code: MOSQ_ERR_INVAL.rawValue,
                            message: "a password was given without a username",
                            hint: "set the username too (MQTT sends a password only together with a username)")
        }
        if connection.username != nil {
            try MQTTError.check("mosquitto_username_pw_set",
                                mosquitto_username_pw_set(mosq, connection.username, connection.password))
        }
        if let tls = connection.tls { try configureTLS(mosq, tls) }
        if let will = connection.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try MQTTError.check("mosquitto_will_set", rc, context: "will topic '\(will.topic)'")
        }
        let rc = mosquitto_connect_async(mosq, connection.host, Int32(connection.port), Int32(connection.keepalive))
        if rc == MOSQ_ERR_SUCCESS.rawValue {
            try MQTTError.check("mosquitto_loop_start", mosquitto_loop_start(mosq))
            markLoopStarted()
            return
        }
        let error = MQTTError.from(call: "mosquitto_connect_async", code: rc, context: connection.description)
        // Only unreachability is retried; anything else is a configuration error.
        guard error.kind == .unreachable else { throw error }
        box.recordFirstFailure(error)
        // libmosquitto's loop thread only reconnects connections that once got as far as a
        // socket; until the first attempt succeeds, retry here with the same backoff.
        startConnector()
    }

    /// Retries `mosquitto_reconnect_async` with backoff on a helper thread until it succeeds,
    /// then starts the network loop; ends early when the client is closed.
    private func startConnector() {
        let options = self.options
        let thread = Thread { [self] in
            defer { connectorFinished() }
            var delay = Double(max(1, options.reconnectDelay))
            while true {
                let until = Date(timeIntervalSinceNow: delay)
                while Date() < until {
                    if box.isClosing { return }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                // close() waits for this thread before freeing the handle, so it is valid here.
                guard !box.isClosing, let mosq = try? liveHandle("mosquitto_reconnect_async") else { return }
                let rc = mosquitto_reconnect_async(mosq)
                if rc == MOSQ_ERR_SUCCESS.rawValue {
                    startLoopIfOpen(mosq)
                    return
                }
                if options.exponentialBackoff { delay = min(delay * 2, Double(max(options.reconnectDelay, options.reconnectDelayMax))) }
            }
        }
        thread.name = "mqtt-connector"
        connectorStarted()
        thread.start()
    }

    /// Waits for the broker's CONNACK. Returns when connected; throws a refusal (bad credentials)
    /// at once, or after `timeout` seconds a ``MQTTError/Kind/timeout`` error (carrying the first
    /// connection failure's text when there was one).
    public func waitUntilConnected(timeout: Double) throws(MQTTError) {
        if try box.waitForConnection(timeout: timeout) { return }
        if let first = box.firstFailure {
            throw MQTTError(kind: .timeout, call: first.call, code: first.code,
                            message: "not connected after \(timeout) s: \(first.message)", hint: first.hint, errno: first.errno)
        }
        throw MQTTError(kind: .timeout, call: "CONNACK", code: 0,
                        message: "no answer from \(box.context) within \(timeout) s",
                        hint: "check the URL/host and port, that Mosquitto is running, that TLS matches the listener, and any firewall in between")
    }

    /// Sends DISCONNECT; the network thread then stops reconnecting. ``close()`` does this too.
    public func disconnect() {
        guard let mosq = try? liveHandle("mosquitto_disconnect") else { return }
        box.markClosing()
        _ = mosquitto_disconnect(mosq)
    }

    private func configureTLS(_ mosq: OpaquePointer, _ tls: MQTTConnection.TLS) throws(MQTTError) {
        for (what, path) in [("CA file", tls.caFile), ("client certificate", tls.certFile), ("client key", tls.keyFile)] {
            if let path, !FileManager.default.isReadableFile(atPath: path) {
                throw MQTTError(kind: .tls, call: "mosquitto_tls_set", code: MOSQ_ERR_INVAL.rawValue,
                                message: "the \(what) '\(path)' cannot be read",
                                hint: "fix the path or the file's permissions for the service user")
            }
        }
        if (tls.certFile == nil) != (tls.keyFile == nil) {
            throw MQTTError(kind: .tls, call: "mosquitto_tls_set", code: MOSQ_ERR_INVAL.rawValue,
                            message: "a client certificate needs its key and vice versa",
                            hint: "set both the certificate and the key file, or neither")
        }
        if tls.caFile == nil && tls.caPath == nil {
            try MQTTError.check("mosquitto_int_option(TLS_USE_OS_CERTS)",
                                mosquitto_int_option(mosq, MOSQ_OPT_TLS_USE_OS_CERTS, 1))
            if tls.certFile != nil {
                try MQTTError.check("mosquitto_tls_set",
                                    mosquitto_tls_set(mosq, nil, "/etc/ssl/certs", tls.certFile, tls.keyFile, nil))
            }
        } else {
            try MQTTError.check("mosquitto_tls_set",
                                mosquitto_tls_set(mosq, tls.caFile, tls.caPath, tls.certFile, tls.keyFile, nil))
        }
        if tls.insecure { try MQTTError.check("mosquitto_tls_insecure_set", mosquitto_tls_insecure_set(mosq, true)) }
    }
}

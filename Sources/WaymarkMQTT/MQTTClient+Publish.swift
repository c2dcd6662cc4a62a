import CMosquitto

extension MQTTClient {
    /// Queues `payload` for `topic` and returns libmosquitto's message id; ``onPublish`` reports the
    /// same id when the broker acknowledges it (PUBACK for QoS 1). The acknowledgement can arrive
    /// before this method returns; match ids under a lock you also hold around this call.
    ///
    /// QoS 1/2 messages published while disconnected stay queued in libmosquitto and go out after
    /// the reconnect; at most ``Options/maxQueued`` may be unacknowledged (then ``MQTTError/Kind/queueFull``).
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) throws(MQTTError) -> Int32 {
        let result: Result<Int32, MQTTError> = payload.withUnsafeBytes { bytes in
            do throws(MQTTError) { return .success(try publish(topic: topic, bytes: bytes, qos: qos, retain: retain)) }
            catch { return .failure(error) }
        }
        return try result.get()
    }

    /// ``publish(topic:payload:qos:retain:)`` for bytes you already hold (copied by libmosquitto).
    @discardableResult
    public func publish(topic: String, bytes: UnsafeRawBufferPointer, qos: Int = 1, retain: Bool = false) throws(MQTTError) -> Int32 {
        let mosq = try liveHandle("mosquitto_publish")
        guard (0...2).contains(qos) else {
            throw MQTTError(kind: .invalidArgument, call: "mosquitto_publish", code: MOSQ_ERR_INVAL.rawValue,
                            message: "QoS \(qos) does not exist", hint: "use 0, 1 or 2")
        }
        return try box.publishing(qos: qos) { () throws(MQTTError) -> Int32 in
            var mid: Int32 = 0
            let rc = mosquitto_publish(mosq, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain)
            // Disconnected: for QoS > 0 libmosquitto has queued the message and will send it after
            // the reconnect, so that is not a failure of this call.
            if rc == MOSQ_ERR_NO_CONN.rawValue && qos > 0 && mid != 0 { return mid }
            try MQTTError.check("mosquitto_publish", rc, context: "topic '\(topic)'")
            return mid
        }
    }

    /// Subscribes to `pattern` (wildcards `+`/`#` allowed) and renews the subscription after every
    /// reconnect. Returns the SUBSCRIBE message id, or nil when not connected right now (the
    /// subscription is then made as soon as the client connects).
    @discardableResult
    public func subscribe(_ pattern: String, qos: Int = 1) throws(MQTTError) -> Int32? {
        let mosq = try liveHandle("mosquitto_subscribe")
        try MQTTError.check("mosquitto_sub_topic_check", mosquitto_sub_topic_check(pattern),
                            context: "pattern '\(pattern)'")
        box.remember(subscription: pattern, qos: qos)
        var mid: Int32 = 0
        let rc = mosquitto_subscribe(mosq, &mid, pattern, Int32(qos))
        if rc == MOSQ_ERR_NO_CONN.rawValue { return nil }
        try MQTTError.check("mosquitto_subscribe", rc, context: "pattern '\(pattern)'")
        return mid
    }

    /// Ends a subscription made with ``subscribe(_:qos:)``.
    public func unsubscribe(_ pattern: String) throws(MQTTError) {
        let mosq = try liveHandle("mosquitto_unsubscribe")
        box.forget(subscription: pattern)
        let rc = mosquitto_unsubscribe(mosq, nil, pattern)
        if rc == MOSQ_ERR_NO_CONN.rawValue { return }
        try MQTTError.check("mosquitto_unsubscribe", rc, context: "pattern '\(pattern)'")
    }
}

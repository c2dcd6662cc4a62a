import CMosquitto

extension MQTTClient {
    /// Registers the C trampolines. Each recovers the ``MQTTCallbackBox`` from libmosquitto's `obj`
    /// pointer (no global registry) and hands the data on.
    func installCallbacks(_ mosq: OpaquePointer) {
        mosquitto_connect_callback_set(mosq) { _, obj, rc in
            guard let obj else { return }
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).takeUnretainedValue().didConnect(rc)
        }
        mosquitto_disconnect_callback_set(mosq) { _, obj, rc in
            guard let obj else { return }
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).takeUnretainedValue().didDisconnect(rc)
        }
        mosquitto_publish_callback_set(mosq) { _, obj, mid in
            guard let obj else { return }
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).takeUnretainedValue().didPublish(mid)
        }
        mosquitto_subscribe_callback_set(mosq) { _, obj, mid, count, granted in
            guard let obj else { return }
            let qos = (0..<Int(count)).map { Int(granted?[$0] ?? 128) }
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).takeUnretainedValue().didSubscribe(mid, qos)
        }
        mosquitto_message_callback_set(mosq) { _, obj, message in
            guard let obj, let m = message?.pointee else { return }
            let topic = m.topic.map { String(cString: $0) } ?? ""
            let count = Int(m.payloadlen)
            let payload: [UInt8] = (count > 0 && m.payload != nil)
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: count)) : []
            let copy = MQTTMessage(topic: topic, payload: payload, qos: Int(m.qos), retain: m.retain, messageID: m.mid)
            Unmanaged<MQTTCallbackBox>.fromOpaque(obj).takeUnretainedValue().didReceive(copy)
        }
    }
}

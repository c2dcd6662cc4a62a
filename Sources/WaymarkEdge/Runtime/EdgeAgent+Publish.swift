import Foundation
import WaymarkCore
import WaymarkMQTT
import WaymarkProtobuf
import WaymarkService

extension EdgeAgent {
    /// Write-before-publish: the window's batch (one per shard when sharded) goes to its lane's
    /// spool, then everything due is sent. Caller holds `lock`.
    func spoolAndSendLocked(_ batch: SightingBatch) {
        for (k, part) in lanes.route(batch) {
            let lane = lanes.lanes[k]
            let payload = switch config.publishEncoding {
            case .json: BatchCoding.encode(part)
            case .protobuf: ProtobufBatchCoding.encode(part)
            }
            do {
                try lane.spool.append(payload, boot: part.boot, seq: part.seq)
            } catch {
                // No durable copy: still try to deliver it, and say so.
                runtime.spoolErrors += 1
                logOnceLocked("spool:\(error.errno)", level: .error, "spool write failed; publishing without a durable copy",
                              [LogKey.error: "\(error)"])
                if !client.isConnected || (try? client.publish(topic: lane.sightingsTopic, payload: payload, qos: 1)) == nil {
                    runtime.publishErrors += 1
                }
            }
        }
        sendDueLocked(now: Date().timeIntervalSince1970)
    }

    /// Publishes spooled batches that are new or whose ack is overdue, within the in-flight
    /// window, lane by lane. Caller holds `lock`.
    func sendDueLocked(now: Double) {
        guard client.isConnected else { return }
        for lane in lanes.lanes {
            let room = config.mqtt.maxInflight - client.unacknowledgedCount
            guard room > 0 else { return }
            for entry in lane.spool.takeDue(now: now, resendAfter: config.spoolResendAfterS, limit: room) {
                let isResend = entry.sentAt != nil || entry.payload == nil
                let payload: [UInt8]
                do { payload = try lane.spool.payload(of: entry) } catch {
                    runtime.spoolErrors += 1
                    logOnceLocked("spool-read", level: .error, "cannot read a spooled batch", [LogKey.error: "\(error)"])
                    continue
                }
                do {
                    let id = try client.publish(topic: lane.sightingsTopic, payload: payload, qos: 1)
                    batchMessageIDs.insert(id)
                    if isResend { runtime.resent += 1 }
                } catch {
                    runtime.publishErrors += 1
                    lane.spool.markUnsent(boot: entry.boot, seq: entry.seq)
                    logOnceLocked("publish:\(error.kind)", level: .warning, "publish failed; the batch stays spooled",
                                  [LogKey.error: "\(error)"])
                    return
                }
            }
        }
    }

    /// Applies queued aggregator acks, each to the lane of its topic. Caller holds `lock`.
    func applyAcksLocked() {
        guard !ackInbox.isEmpty else { return }
        let inbox = ackInbox
        ackInbox.removeAll()
        for (topic, payload) in inbox {
            guard let k = lanes.lane(forAckTopic: topic) else { continue }
            guard let ack = try? JSONDecoder().decode(GatewayAck.self, from: Data(payload)) else {
                runtime.invalidAcks += 1
                logOnceLocked("bad-ack", level: .warning, "ignoring an ack that is not {\"boot\":…,\"seq\":…}", [:])
                continue
            }
            let spool = lanes.lanes[k].spool
            let removed = spool.acknowledge(boot: ack.boot, seq: ack.seq)
            runtime.acked += removed
            if removed > 0 { statusDirty = true }
            // A resend request: the aggregator parks later batches until these come.
            if !ack.resendRange.isEmpty { runtime.resendRequested += spool.markDue(boot: ack.boot, range: ack.resendRange) }
        }
    }

    /// The retained status (online, or offline for the will and at shutdown).
    func statusPayloadLocked(_ state: GatewayStatus.State) -> [UInt8] {
        let status = GatewayStatus(state: state, gateway: config.gateway, version: Self.version, boot: boot,
                                   spoolDepth: lanes.depth, spoolDropped: lanes.dropped, scan: scanState.statusText,
                                   t: Date().timeIntervalSince1970)
        return (try? Array(JSONEncoder().encode(status))) ?? []
    }

    /// Publishes the status when something changed or the interval passed. Caller holds `lock`.
    func publishStatusIfDueLocked(now: Double) {
        guard client.isConnected, statusDirty || now - lastStatusAt >= config.statusIntervalS else { return }
        do {
            try client.publish(topic: topics.status(config.gateway), payload: statusPayloadLocked(.online), qos: 1, retain: true)
            statusDirty = false
            lastStatusAt = now
        } catch {
            runtime.publishErrors += 1
        }
    }

    func logOnceLocked(_ cause: String, level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata) {
        guard loggedCauses.insert(cause).inserted else { return }
        logger.log(level: level, message, metadata: metadata)
    }
}

import Logging

extension SourceState {
    /// The `scan` field of the status: `on`, `off`, `error` or `replay`.
    var statusText: String {
        switch self {
        case .on: "on"
        case .off, .starting: "off"
        case .error: "error"
        case .replay, .done: "replay"
        }
    }
}

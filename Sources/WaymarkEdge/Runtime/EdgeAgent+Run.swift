import Foundation
import Logging
import ServiceLifecycle
import WaymarkCore
import WaymarkMQTT
import WaymarkService

extension EdgeAgent {
    /// Connects, starts the source, and ticks until graceful shutdown, ``requestStop()``, a fatal
    /// source error, or (with `replay.exit_when_done`) the end of a fully delivered replay. Then
    /// shuts down cleanly. Rethrows a fatal source error after the shutdown.
    public func run() async throws {
        do { try start() } catch {
            client.close()
            lock.withLock { lanes.close() }
            throw error
        }
        await withGracefulShutdownHandler {
            while !Task.isCancelled {
                if tick() { break }
                try? await Task.sleep(for: .milliseconds(50))
            }
        } onGracefulShutdown: {
            self.requestStop()
        }
        shutdown()
        if let error = lock.withLock({ sourceError }) { throw error }
    }

    /// MQTT handlers (they only queue and flag), will, connect, source thread.
    func start() throws {
        let ackTopics = Set(lanes.lanes.map(\.ackTopic))
        client.onEvent = { [weak self] event in self?.handle(event) }
        client.onMessage = { [weak self] message in
            guard let self, ackTopics.contains(message.topic) else { return }
            self.lock.withLock { self.ackInbox.append((message.topic, message.payload)) }
        }
        client.onPublish = { [weak self] id in
            guard let self else { return }
            self.lock.withLock {
                if self.batchMessageIDs.remove(id) != nil { self.runtime.published += 1 }
            }
        }
        var connection = try config.connection()
        connection.will = .init(topic: topics.status(config.gateway), payload: lock.withLock { statusPayloadLocked(.offline) },
                                qos: 1, retain: true)
        for topic in ackTopics.sorted() { try client.subscribe(topic, qos: 1) }
        try client.connect(connection)
        logger.info("starting", metadata: [
            "source": "\(source.name)", "broker": "\(connection)", "spool": "\(config.spoolDir)", "version": "\(Self.version)",
            "shards": "\(config.publishShards.count)"])

        let thread = Thread { [self] in
            do {
                try source.run(into: self)
                // End of a replay: close the last window now.
                lock.withLock {
                    if let batch = pipeline.flush() { spoolAndSendLocked(batch) }
                }
            } catch {
                logger.error("source stopped", metadata: [LogKey.error: "\(error)", "source": "\(source.name)"])
                lock.withLock { sourceError = error; scanState = .error; statusDirty = true }
            }
            lock.withLock { sourceFinished = true }
        }
        thread.name = "waymark-edge-source"
        thread.start()
    }

    /// Called on libmosquitto's thread: record and flag only.
    func handle(_ event: MQTTEvent) {
        switch event {
        case .connected:
            let again = lock.withLock { () -> Bool in
                defer { connectedOnce = true }
                if connectedOnce { runtime.reconnects += 1 }
                statusDirty = true
                return connectedOnce
            }
            logger.info(again ? "reconnected to the broker" : "connected to the broker")
        case .refused(let error):
            logger.error("the broker refused the connection", metadata: [LogKey.error: "\(error)"])
        case .disconnected(let expected, let reason):
            if !expected { logger.warning("lost the broker; batches stay spooled until it is back", metadata: [LogKey.reason: "\(reason)"]) }
        }
    }

    /// One round of housekeeping; returns true when the agent should stop.
    func tick() -> Bool {
        let now = Date().timeIntervalSince1970
        let stop: Bool = lock.withLock {
            applyAcksLocked()
            if source.usesWallClock {
                pipeline.windower.emptyWindows = emptyWindowsUsefulLocked()
                if let batch = pipeline.tick(now: now) { spoolAndSendLocked(batch) }
            }
            sendDueLocked(now: now)
            publishStatusIfDueLocked(now: now)
            if stopRequested || sourceError != nil { return true }
            if config.replayExitWhenDone, sourceFinished, client.isConnected, client.unacknowledgedCount == 0,
               lanes.allSent {
                return true
            }
            return false
        }
        updateMetrics()
        return stop
    }

    /// Batches waiting for their ack beyond which empty windows are left out (about that many
    /// seconds without an ack, at one batch a second).
    public static let emptyWindowBacklog = 10

    /// Whether an empty window is worth a batch now: it only tells a running aggregator not to wait
    /// for this gateway (docs/edge.md, "What it sends"), so it is sent while the broker is connected
    /// and the aggregator acks (no spool holds more than `emptyWindowBacklog` batches). In a broker
    /// outage, or while the aggregator or its database is down, it would be spooled and resent later
    /// as evidence nobody waits for any more, filling the spool: windows without sightings are then
    /// left out, as a replay leaves them out, and come back with the acks. Caller holds `lock`.
    func emptyWindowsUsefulLocked() -> Bool {
        client.isConnected && lanes.lanes.allSatisfy { $0.spool.depth <= Self.emptyWindowBacklog }
    }

    /// Stops the source, flushes the open window to the spool, gives in-flight publishes a moment,
    /// publishes the offline status and disconnects.
    func shutdown() {
        source.stop()
        let deadline = Date(timeIntervalSinceNow: 5)
        while !lock.withLock({ sourceFinished }) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        lock.withLock {
            applyAcksLocked()
            if let batch = pipeline.flush() { spoolAndSendLocked(batch) }
        }
        let drain = Date(timeIntervalSinceNow: 3)
        while client.isConnected && client.unacknowledgedCount > 0 && Date() < drain { Thread.sleep(forTimeInterval: 0.01) }
        if client.isConnected {
            let payload = lock.withLock { statusPayloadLocked(.offline) }
            _ = try? client.publish(topic: topics.status(config.gateway), payload: payload, qos: 1, retain: true)
            let done = Date(timeIntervalSinceNow: 1)
            while client.isConnected && client.unacknowledgedCount > 0 && Date() < done { Thread.sleep(forTimeInterval: 0.01) }
        }
        client.close()
        lock.withLock { lanes.close() }
        updateMetrics()
        let s = snapshot()
        logger.info("stopped", metadata: [
            "batches": "\(s.pipeline.batches)", "spool_depth": "\(s.spoolDepth)", "spool_dropped": "\(s.spoolDropped)",
            "adverts": "\(s.pipeline.adverts)"])
    }
}

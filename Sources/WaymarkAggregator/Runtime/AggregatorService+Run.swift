import Foundation
import Logging
import WaymarkCore
import WaymarkMQTT
import WaymarkNotify
import WaymarkPostgres
import WaymarkService
import WaymarkHTTP

extension AggregatorService {
    /// Restores the checkpoint from PostgreSQL (waiting for it if needed), connects to the broker
    /// and runs until `stop()`; then commits and acks what was processed. Throws for configuration
    /// problems (schema missing, bad MQTT settings).
    public func run() throws {
        let dbURL = config.databaseConnectionString
        try prepareWebhooks()
        logger.info("starting", metadata: ["site": .string(site.id), "database": .string(PostgresURL.masked(config.databaseURL)),
                                           "mqtt": .string((try? config.connection().description) ?? config.mqtt.url), "topics": .string(topics.prefix),
                                           "fusion_workers": .stringConvertible(config.fusionWorkers),
                                           "shards": .string(config.shards.description),
                                           "decode_threads": .stringConvertible(config.decodeThreads)])
        // The start-up connection is closed again: the writer thread opens its own, so that the
        // connection never crosses threads.
        guard try connectAndRestore(url: dbURL) else { return }
        ingest.start()
        defer {
            ingest.close()
            ingest.join()
        }
        if config.metricsPort > 0 {
            let endpoint = MetricsEndpoint(registry: metrics.registry, host: config.metricsHost, port: config.metricsPort)
            try endpoint.startBlocking()
            metricsEndpoint = endpoint
            logger.info("metrics on http://\(config.metricsHost):\(endpoint.port)/metrics")
        }
        let client = try startMQTT()
        lock.lock()
        self.client = client
        lock.unlock()
        let writer = Thread { [self] in writerLoop(url: dbURL) }
        writer.name = "waymark-aggregator-writer"
        writer.start()
        let rollupsDone = DispatchSemaphore(value: 0)
        let rollups = Thread { [self] in rollupLoop(url: dbURL, done: rollupsDone) }
        rollups.name = "waymark-aggregator-rollups"
        rollups.start()
        delivery?.start(client: client, databaseURL: dbURL, retryS: config.retryS)
        fusionLoop(client)
        // Shutdown: seal the rest, let the writer commit and ack it, let delivery record what
        // the broker confirmed, then leave the broker.
        if let last = core.sealWrite() { writes.push(last, weight: last.rowCount) }
        writes.close()
        writerDone.wait()
        rollupsDone.wait()
        delivery?.stop()
        waitForPublishes(client, timeout: 5)
        client.close()
        metricsEndpoint?.stopBlocking()
        logger.info("stopped", metadata: ["committed_sightings": .stringConvertible(committedSightings),
                                          "late_batches": .stringConvertible(core.lateBatches)])
        lock.lock()
        let failure = self.failure
        lock.unlock()
        if let failure { throw failure }
    }

    /// Connects (retrying while PostgreSQL is unreachable), checks the schema, syncs the site and
    /// restores the checkpoint. False when stopped while waiting.
    func connectAndRestore(url: String) throws -> Bool {
        var announced = false
        while true {
            if isStopping { return false }
            do {
                let db = try PostgresConnection(url: url)
                try store.checkSchema(db)
                if let fsync = try? db.query("SHOW fsync").first?.string(0), fsync != "on" {
                    logger.warning("PostgreSQL runs with fsync = \(fsync): a crash of its machine can lose batches the gateways were told are stored (acked) and will not resend; set fsync = on for production (the aggregator already commits with synchronous_commit = on)")
                }
                try store.syncSite(db, site)
                let restored = try store.load(db)
                core.restore(devices: restored.devices, progress: restored.progress, state: restored.state,
                             statuses: restored.statuses, now: Self.now(), notifierStates: restored.notifierStates,
                             calibrationSeed: restored.calibrationSeed)
                if core.fusion.calibrationStartedFromSiteFile {
                    logger.notice("the site file's calibration: section is not the one the saved venue calibration was learned from: the calibration starts from the file's values (what was learned before is dropped, the gateways' learned reception kept)")
                }
                if let key = restored.calibrationSeedKey {
                    logger.info("no checkpoint of this aggregator's own yet: its venue calibration starts from the one the site's last other aggregator saved",
                                metadata: ["from_shards": .string(key.isEmpty ? "all" : key),
                                           "calibrated_seconds": .stringConvertible(Int(core.fusion.calibration.updates))])
                }
                do {
                    try maintainPartitions(db, now: Self.now())
                    startupPartitionUpkeepAt = Self.now()
                } catch let error as PostgresError where !error.isTransient {
                    // Rows of months without a partition go to the default one meanwhile: no write waits for it.
                    metrics.partitionUpkeepFailures.increment()
                    logger.warning("partition upkeep failed at start; the writer thread retries it: \(error)")
                }
                if let delivery {
                    let undelivered = try store.loadUndelivered(db, maxAgeS: max(config.webhooks.giveUpAfterS, 86_400),
                                                                limit: NotificationDelivery.maxInbox)
                    delivery.restore(undelivered)
                    if !undelivered.isEmpty {
                        logger.info("notifications left undelivered by the previous run are delivered again",
                                    metadata: ["count": .stringConvertible(undelivered.count)])
                    }
                }
                if restored.undecodableNotifierStates > 0 {
                    logger.warning("notification rule states that cannot be read were ignored; those devices' rules start afresh",
                                   metadata: ["count": .stringConvertible(restored.undecodableNotifierStates)])
                }
                if restored.undecodable > 0 {
                    logger.warning("device checkpoints from another engine version ignored; those devices start fresh",
                                   metadata: ["count": .stringConvertible(restored.undecodable)])
                }
                // What the core took (with shards, only its own shards' part of the site's checkpoints).
                logger.info("restored", metadata: ["devices": .stringConvertible(core.fusion.deviceCount),
                                                   "gateway_boots": .stringConvertible(core.progress.committed.count)])
                metrics.dbUp.set(Double(1))
                db.close()
                return true
            } catch let error as PostgresError where error.isTransient {
                metrics.dbUp.set(Double(0))
                if !announced { logger.error("PostgreSQL unreachable at start; retrying every \(config.retryS) s: \(error)") }
                announced = true
                Thread.sleep(forTimeInterval: config.retryS)
            }
        }
    }

    func startMQTT() throws -> MQTTClient {
        let clientID = config.mqtt.clientID ?? "waymark-aggregator-\(site.id)"
        let client = try MQTTClient(config.mqtt.clientOptions(clientID: clientID, cleanSession: false, maxQueued: 0))
        if let delivery {
            // PUBACKs of every message: delivery matches those of the notifications it published.
            client.onPublish = { [weak delivery] mid in delivery?.published(mid: mid) }
        }
        let queue = ingest
        client.onMessage = { [self] message in
            if isPeerStatus(message.topic) { return checkPeer(message.payload) }
            queue.push(DecodeStage.Message(topic: message.topic, payload: message.payload, retained: message.retain,
                                           receivedAt: Date().timeIntervalSince1970))
        }
        let logger = self.logger
        client.onEvent = { [self, weak client] event in
            switch event {
            case .connected:
                announceAvailability(.online, client)
                lock.lock()
                connectedSinceAcks = true
                lock.unlock()
                logger.info("connected to the broker")
            case .refused(let error): logger.error("the broker refused the connection: \(error)")
            case .disconnected(let expected, let reason):
                if !expected { logger.warning("disconnected from the broker; reconnecting: \(reason)") }
            }
        }
        for topic in config.shards.subscriptions(topics) + peerStatusTopics { try client.subscribe(topic, qos: 1) }
        try client.connect(withAvailabilityWill(try config.connection()))
        return client
    }

    /// The fusion thread's loop: messages in, publications out, a sealed write every flush interval.
    func fusionLoop(_ client: MQTTClient) {
        var rejections = RejectionLog(interval: config.rejectLogIntervalS)
        var lastFlush = Self.now(), lastPublish = lastFlush, lastRelease = lastFlush
        var lastReack: [String: Double] = [:]
        var lateSeen = 0, resendRequestsSeen = 0, catchUpTimeoutsSeen = 0, forgottenSeen = 0
        var suppressedSeen: [String: Int] = [:]
        let flushEvery = Double(config.flushIntervalMS) / 1000, publishEvery = Double(config.publishIntervalMS) / 1000
        var leaveBy: Double?, intakeClosed = false
        while true {
            if isStopping && leaveBy == nil {
                // Leave the broker before the queue is drained: a message it delivers is acked to it
                // (PUBACK) on receipt, so one taken in after the last drain would be lost to us. What it
                // has not delivered stays queued in the persistent session for the next start.
                announceAvailability(.offline, client)
                client.disconnect()
                leaveBy = Self.now() + 2
            }
            if let leaveBy, !intakeClosed, !client.isConnected || Self.now() >= leaveBy {
                ingest.close()
                intakeClosed = true
            }
            let message = ingest.pop(timeout: 0.01)
            if message == nil && intakeClosed {
                core.releaseAll()
                break
            }
            if let (m, prepared) = message {
                switch core.handle(topic: m.topic, payload: m.payload, receivedAt: m.receivedAt, retained: m.retained, prepared: prepared) {
                case .accepted(let n):
                    metrics.batches.increment()
                    metrics.sightings.increment(by: Int64(n))
                    lock.lock(); fusedSightingsStorage += n; lock.unlock()
                    metrics.fusionLag.set(m.receivedAt - core.latest)
                case .rejected(let reason, let gateway):
                    metrics.rejected[reason]?.increment()
                    rejections.note(reason, gateway: gateway, topic: m.topic, at: m.receivedAt, logger: logger)
                case .duplicate(let gateway, let ack, let shard):
                    metrics.duplicates.increment()
                    if let ack, m.receivedAt - lastReack["\(gateway)/\(shard)", default: 0] >= 1 {
                        lastReack["\(gateway)/\(shard)"] = m.receivedAt
                        publish([core.ackPublication(gateway: gateway, shard: shard, ack)], client)
                    }
                case .status:
                    metrics.statuses.increment()
                case .ignored:
                    break
                }
            }
            if core.hasLiveChanges {
                publish(core.takeLiveChanges(), client)
                recordLiveDelays()
            }
            let now = Self.now()
            if message == nil || now - lastRelease >= 0.05 {
                lastRelease = now
                core.releaseDue(at: Date().timeIntervalSince1970)
                metrics.heldBatches.set(Double(core.heldBatches))
                if core.lateBatches > lateSeen {
                    metrics.lateBatches.increment(by: Int64(core.lateBatches - lateSeen))
                    lateSeen = core.lateBatches
                }
                metrics.parkedBatches.set(Double(core.parkedBatches))
                if core.resendRequests > resendRequestsSeen {
                    metrics.resendRequests.increment(by: Int64(core.resendRequests - resendRequestsSeen))
                    resendRequestsSeen = core.resendRequests
                }
                if core.catchUpTimeouts > catchUpTimeoutsSeen {
                    metrics.catchUpTimeouts.increment(by: Int64(core.catchUpTimeouts - catchUpTimeoutsSeen))
                    catchUpTimeoutsSeen = core.catchUpTimeouts
                }
            }
            if now - lastPublish >= publishEvery || isStopping {
                lastPublish = now
                applyCommitted()
                lock.lock()
                let reconnected = connectedSinceAcks
                connectedSinceAcks = false
                lock.unlock()
                if reconnected { publish(core.currentAcks(), client) }
                publish(core.takePublications(), client)
                recordLiveDelays()
                metrics.ingestQueue.set(Double(ingest.count))
                metrics.devices.set(Double(core.fusion.deviceCount))
                if core.fusion.forgottenDevices > forgottenSeen {
                    metrics.devicesForgotten.increment(by: Int64(core.fusion.forgottenDevices - forgottenSeen))
                    forgottenSeen = core.fusion.forgottenDevices
                }
                if delivery != nil { noteSuppressed(&suppressedSeen) }
                let calibration = core.fusion.calibration
                metrics.calibrationPower.set(calibration.powerCorrectionDB)
                metrics.calibrationExponent.set(calibration.pathLossExponent)
                metrics.calibrationRoomLoss.set(calibration.roomLossDB)
                for (dBm, gauge) in metrics.calibrationReception { gauge.set(calibration.receptionSensitivity(atExpectedDBm: dBm)) }
                for (g, gateway) in core.site.gateways.enumerated() {
                    metrics.calibrationGatewayOffset[gateway.id]?.set(calibration.gatewayOffsetDB[g])
                    metrics.calibrationGatewayReliability[gateway.id]?.set(calibration.gatewayReliability[g])
                }
            }
            if now - lastFlush >= flushEvery {
                lastFlush = now
                if let batch = core.sealWrite() {
                    // Blocks while the write queue is full: intake pauses until PostgreSQL catches up.
                    writes.push(batch, weight: batch.rowCount)
                    metrics.writeQueueRows.set(Double(writes.currentWeight))
                }
            }
        }
        applyCommitted()
        publish(core.takePublications(), client)
    }

    /// Records how long after their evidence the live-region changes just published went out.
    func recordLiveDelays() {
        let published = Date().timeIntervalSince1970
        for t in core.publishedLiveChanges { metrics.liveRegionDelay.record(published - t) }
    }

    /// Resolves the webhook secrets (a rule with a webhook and no secret stops the start with a
    /// message saying what to set) and creates the dispatcher.
    func prepareWebhooks() throws {
        guard let delivery else { return }
        let secrets: [String: String]
        do { secrets = try config.webhooks.secrets(for: site) } catch let error as ConfigLayers.ConfigError {
            throw AggregatorFailure(description: error.description)
        }
        var targets: [String: WebhookDispatcher.Target] = [:]
        for rule in site.notifications {
            if let url = rule.webhook, let secret = secrets[rule.id] { targets[rule.id] = .init(url: url, secret: secret) }
        }
        delivery.attachWebhooks(settings: config.webhooks, targets: targets)
    }

    /// Adds the notifications suppressed since the last call to the metrics.
    func noteSuppressed(_ seen: inout [String: Int]) {
        for reason in SuppressionReason.allCases {
            let total = core.notifier.counters.suppressed(reason)
            let new = total - seen[reason.rawValue, default: 0]
            if new > 0 { metrics.notificationsSuppressed[reason.rawValue]?.increment(by: Int64(new)) }
            seen[reason.rawValue] = total
        }
    }

    /// Marks written by the writer thread become the ones duplicates are re-acked with.
    func applyCommitted() {
        lock.lock()
        let inbox = committedInbox
        committedInbox.removeAll()
        lock.unlock()
        for marks in inbox { core.progress.markCommitted(marks) }
    }

    func publish(_ publications: [Publication], _ client: MQTTClient) {
        for p in publications {
            do {
                try client.publish(topic: p.topic, payload: p.payload, qos: 1, retain: p.retain)
                metrics.published.increment()
            } catch {
                metrics.publishFailures.increment()
                logger.debug("publish failed: \(error)", metadata: [LogKey.topic: .string(p.topic)])
            }
        }
    }

    func waitForPublishes(_ client: MQTTClient, timeout: Double) {
        let deadline = Self.now() + timeout
        while client.unacknowledgedCount > 0 && client.isConnected && Self.now() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

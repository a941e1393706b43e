import Crypto
import Foundation
import LanternContracts
import LanternCore
import LanternEvents
import LanternRedis
import Logging
import Metrics

/// Turns a `push.requested` job into one notification per registered device, sends each through its platform's
/// provider, and acts on the answer: dead tokens leave the registry, 429/5xx/network errors are retried with
/// exponential backoff and jitter (never sooner than the provider's `Retry-After`), and what cannot succeed
/// goes to the dead-letter stream `lantern.dlq.jobs.push` with the device and the reason.
public struct PushDispatcher: Sendable {
    let registry: DeviceRegistry
    let catalogue: Catalogue
    let apns: any PushProvider
    let fcm: any PushProvider
    let retries: RetryQueue
    let redis: RedisClient
    let streams: StreamNames
    let policy: RetryPolicy
    let clock: WallClock
    let logger: Logger

    var jobsStream: String { streams.jobs("push") }

    /// Handles a batch of jobs from `lantern.jobs.push` with one registry query and one Redis pipeline each for
    /// the sent markers; says per job whether it is done (false: the registry or Redis was unreachable, so the
    /// job stays pending and comes back). Malformed jobs are dead-lettered, not retried.
    public func handle(batch jobs: [EventEnvelope]) async -> [Bool] {
        var done = Array(repeating: true, count: jobs.count)
        var valid: [(index: Int, job: EventEnvelope, request: PushRequest, user: UUID)] = []
        for (index, job) in jobs.enumerated() {
            guard job.type == PushRequest.eventType else {
                await deadLetter(job: job, device: nil, attempt: 1, reason: "unknown job type \(job.type)")
                continue
            }
            do {
                let request = try job.payload(as: PushRequest.self)
                valid.append((index, job, request, try validate(request)))
            } catch {
                await deadLetter(job: job, device: nil, attempt: 1, reason: "invalid push request: \(error is DecodingError ? UndecodablePayload(job.type, error).description : "\(error)")")
            }
        }
        guard !valid.isEmpty else { return done }
        // A job redelivered after its devices were served (crash before XACK) is not sent twice.
        let devices: [UUID: [Device]]
        do {
            let sent = try await redis.pipeline(valid.map { ["EXISTS", sentKey($0.job.id)] })
            valid = zip(valid, sent).filter { (try? $0.1.get().int) != 1 }.map(\.0)
            devices = try await registry.devices(of: Array(Set(valid.map(\.user))))
        } catch {
            logger.warning("push batch postponed", metadata: ["jobs": "\(valid.count)", "error": "\(error)"])
            for item in valid { done[item.index] = false }
            return done
        }
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for item in valid {
                let targets = (devices[item.user] ?? []).filter { $0.app == item.request.app }
                if targets.isEmpty {
                    Counter(label: "lantern_push_jobs_without_devices_total", dimensions: [("kind", item.request.kind)]).increment()
                }
                for device in targets {
                    group.addTask {
                        // Each job in the trace of the request that queued it (EventTrace), so its logs join that trace.
                        let stored = (try? await EventTrace.handling(item.job, group: "push-worker") {
                            await deliver(item.request, jobID: item.job.id, to: device, attempt: 1)
                        }) ?? false
                        return (item.index, stored)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for await (index, stored) in group { outcomes[index] = (outcomes[index] ?? true) && stored }
            return outcomes
        }
        // A retry that could not be stored means Redis is away: let the job come back rather than lose it.
        for (index, stored) in outcomes where !stored { done[index] = false }
        let finished = valid.filter { done[$0.index] }
        do {
            _ = try await redis.pipeline(finished.map { ["SET", sentKey($0.job.id), "1", "EX", String(7 * 86_400)] })
        } catch {
            logger.warning("sent markers not stored", metadata: ["error": "\(error)"])
        }
        return done
    }

    func sentKey(_ jobID: UUID) -> String { "\(streams.prefix).push.sent.\(jobID.lowercased)" }

    /// One attempt for one device. Returns false when a needed retry could not be stored.
    func deliver(_ request: PushRequest, jobID: UUID, to device: Device, attempt: Int) async -> Bool {
        let notification: RenderedNotification
        do {
            notification = try render(request, jobID: jobID, for: device)
        } catch {
            await deadLetter(request: request, jobID: jobID, device: device, attempt: attempt, reason: "\(error)")
            return true
        }
        let provider = device.platform == .ios ? apns : fcm
        let result = await provider.send(notification, to: device)
        let (outcome, stored) = await act(on: result, provider: provider.name, request: request, jobID: jobID, device: device, attempt: attempt)
        Counter(label: "lantern_push_notifications_total", dimensions: [("provider", provider.name), ("kind", request.kind), ("result", outcome)]).increment()
        return stored
    }

    private func act(on result: DeliveryResult, provider: String, request: PushRequest, jobID: UUID, device: Device, attempt: Int) async -> (String, Bool) {
        switch result {
        case .delivered:
            logger.info("push delivered", metadata: ["provider": "\(provider)", "kind": "\(request.kind)", "device": "\(device.deviceID)"])
            return ("delivered", true)
        case .invalidToken(let reason):
            logger.info("push token rejected; registration removed", metadata: ["provider": "\(provider)", "device": "\(device.deviceID)", "reason": "\(reason)"])
            do { try await registry.remove(device) } catch {
                logger.warning("could not remove registration", metadata: ["device": "\(device.deviceID)", "error": "\(error)"])
            }
            return ("invalid_token", true)
        case .failed(let reason):
            await deadLetter(request: request, jobID: jobID, device: device, attempt: attempt, reason: reason)
            return ("failed", true)
        case .retry(let after, let reason):
            guard attempt < policy.maxAttempts else {
                await deadLetter(request: request, jobID: jobID, device: device, attempt: attempt, reason: "gave up after \(attempt) attempts: \(reason)")
                return ("failed", true)
            }
            let delay = policy.delay(after: attempt, retryAfter: after)
            let item = RetryQueue.Item(id: UUID(), jobId: jobID, request: request, deviceId: device.deviceID, attempt: attempt + 1, reason: reason)
            do {
                try await retries.schedule(item, at: clock.now().addingTimeInterval(delay.inSeconds))
                logger.notice("push will be retried", metadata: ["provider": "\(provider)", "device": "\(device.deviceID)", "attempt": "\(attempt)",
                                                                "in": "\(delay)", "reason": "\(reason)"])
                return ("retry", true)
            } catch {
                logger.error("retry could not be stored", metadata: ["error": "\(error)"])
                return ("retry", false)
            }
        }
    }

    func validate(_ request: PushRequest) throws -> UUID {
        guard let user = UUID(uuidString: request.userId) else { throw InvalidRequest(field: "userId") }
        if request.delivery == .alert, request.messageKey == nil { throw InvalidRequest(field: "messageKey") }
        if let ttl = request.ttlSeconds, !(0...2_419_200).contains(ttl) { throw InvalidRequest(field: "ttlSeconds") }
        return user
    }

    struct InvalidRequest: Error, CustomStringConvertible {
        var field: String
        var description: String { "field \(field) is missing or invalid" }
    }

    func render(_ request: PushRequest, jobID: UUID, for device: Device) throws -> RenderedNotification {
        var title: String?
        var body: String?
        if request.delivery == .alert, let key = request.messageKey {
            let message = try catalogue.render(key, args: request.args ?? [:], locale: device.locale)
            (title, body) = (message.title, message.body)
        }
        let ttl = request.ttlSeconds ?? 86_400
        return RenderedNotification(id: Self.notificationID(jobID: jobID, deviceID: device.deviceID), kind: request.kind, delivery: request.delivery,
                                    title: title, body: body, collapseKey: request.collapseKey, ttlSeconds: ttl,
                                    expiresAt: clock.now().addingTimeInterval(TimeInterval(ttl)), data: request.data ?? [:])
    }

    /// The same id (`apns-id`) for every attempt of one job to one device, so provider logs line up with ours.
    static func notificationID(jobID: UUID, deviceID: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("\(jobID.lowercased)/\(deviceID)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: application-defined
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    func deadLetter(request: PushRequest, jobID: UUID, device: Device, attempt: Int, reason: String) async {
        let job = (try? request.envelope(producer: "push-worker", at: clock.now())).map { envelope -> EventEnvelope in
            var envelope = envelope
            envelope.id = jobID
            return envelope
        }
        await deadLetter(job: job, device: device, attempt: attempt, reason: reason)
    }

    /// Appends to `lantern.dlq.jobs.push` in the consumer's format, plus the device the attempt was for.
    func deadLetter(job: EventEnvelope?, device: Device?, attempt: Int, reason: String) async {
        let extra = device.map { [("device", $0.deviceID), ("platform", $0.platform.rawValue), ("userId", $0.userID.lowercased)] } ?? []
        do {
            try await DeadLetters(redis: redis, streams: streams).add(event: (try? job?.encoded()) ?? "", stream: jobsStream, entry: "",
                                                                     group: "push-worker", deliveries: attempt, reason: reason, extra: extra)
            logger.error("push dead-lettered", metadata: ["jobId": "\(job?.id.lowercased ?? "?")", "device": "\(device?.deviceID ?? "-")", "reason": "\(reason)"])
        } catch {
            logger.error("dead-lettering failed; notification dropped", metadata: ["reason": "\(reason)", "error": "\(error)"])
        }
    }
}

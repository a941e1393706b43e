import Foundation
import LanternContracts
import LanternCore
import Testing

@Suite("Event contracts")
struct EventCatalogueTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `#### \`type\` (version N)` headings of docs/events.md.
    static func documented() throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent("docs/events.md"), encoding: .utf8)
        let heading = /^#### `([a-z_.]+)` \(version (\d+)\)$/
        return Set(text.split(separator: "\n").compactMap { line in
            (try? heading.wholeMatch(in: String(line))).map { "\($0.1)@\($0.2)" }
        })
    }

    @Test("docs/events.md describes exactly the payloads of the contracts module, with their versions")
    func documentedMatchesCatalogue() throws {
        let catalogue = Set(EventCatalogue.all.map { "\($0.eventType)@\($0.version)" })
        #expect(catalogue.count == EventCatalogue.all.count, "an event type is declared twice")
        let documented = try Self.documented()
        #expect(catalogue.subtracting(documented).isEmpty, "undocumented: \(catalogue.subtracting(documented).sorted())")
        #expect(documented.subtracting(catalogue).isEmpty, "documented but not declared: \(documented.subtracting(catalogue).sorted())")
    }

    @Test("a payload's envelope carries its type, version and producer; the payload comes back from it")
    func envelopeRoundTrip() throws {
        let payload = IdentityEvents.ProfileRenamed(userId: "u", app: .pairly, displayName: "Ana", partnerId: nil)
        let envelope = try EventEnvelope(payload, producer: "identity", subject: "u", occurredAt: Date(timeIntervalSince1970: 0))
        #expect(envelope.type == "profile.renamed" && envelope.version == 1 && envelope.producer == "identity")
        // Unset fields are omitted from `data`, as docs/events.md says.
        #expect(envelope.data == .object(["userId": .string("u"), "app": .string("pairly"), "displayName": .string("Ana")]))
        #expect(try EventEnvelope.decode(try envelope.encoded()).payload(as: IdentityEvents.ProfileRenamed.self) == payload)
    }

    @Test("a typed payload's envelope encoded in one pass is the same text as through EventEnvelope")
    func onePassEncoding() throws {
        let at = Date(timeIntervalSince1970: 1_795_000_000.123)
        let id = UUID.v7(at: at)
        func same<P: EventPayload>(_ payload: P, subject: String?, traceparent: String?) throws {
            let direct = try EventEnvelope.encoded(payload, id: id, producer: "content", subject: subject, occurredAt: at, traceparent: traceparent)
            let viaValue = try EventEnvelope(id: id, type: P.eventType, version: P.version, occurredAt: at, producer: "content", subject: subject,
                                             traceparent: traceparent, data: try JSONValue(encoding: payload)).encoded()
            #expect(direct == viaValue)
            _ = try EventEnvelope.decode(direct).payload(as: P.self)
        }
        try same(IdentityEvents.ProfileRenamed(userId: "u", app: .pairly, displayName: "Ana", partnerId: nil), subject: "u", traceparent: nil)
        try same(try PairlyFrames.newMoment(to: "b", momentId: "m", senderName: nil, sentAt: at), subject: nil,
                 traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        try same(RealtimeDisconnect(sessionIds: ["s"], reason: "logged_out"), subject: "u", traceparent: nil)
        try same(PushRequest(userId: "u", app: .luckyday, kind: "luckyday.cookie_ready", delivery: .alert, messageKey: "luckyday.cookie_ready",
                             args: ["a": "b"], collapseKey: "c", ttlSeconds: 3600, data: ["x": "1"]), subject: "u", traceparent: nil)
    }

    @Test("a payload read from an envelope's text is the payload read through its data; a changed data is read, and errors name the payload's field")
    func payloadFromText() throws {
        let at = Date(timeIntervalSince1970: 1_795_000_000.123)
        let payload = IdentityEvents.ProfileRenamed(userId: "u", app: .pairly, displayName: "Ana", partnerId: nil)
        let text = try EventEnvelope.encoded(payload, producer: "identity", subject: "u", occurredAt: at, traceparent: nil)
        var envelope = try EventEnvelope.decode(text)
        let fromText = try envelope.payload(as: IdentityEvents.ProfileRenamed.self)
        let fromData = try envelope.data.decode(as: IdentityEvents.ProfileRenamed.self)
        #expect(fromText.displayName == "Ana" && fromText.displayName == fromData.displayName && fromText.app == fromData.app)
        #expect(envelope == (try EventEnvelope.decode(envelope.encoded())), "the text it came from is not part of an envelope's equality")
        // Once data changes, the text it came from is no longer what it holds.
        if case .object(var fields) = envelope.data { fields["displayName"] = .string("Bo"); envelope.data = .object(fields) }
        #expect(try envelope.payload(as: IdentityEvents.ProfileRenamed.self).displayName == "Bo")
        // A field that breaks the contract is named as the payload names it, from text as from data.
        let broken = try EventEnvelope.decode(text.replacingOccurrences(of: "\"pairly\"", with: "\"napster\""))
        for error in [Result { try broken.payload(as: IdentityEvents.ProfileRenamed.self) }, Result { try broken.data.decode(as: IdentityEvents.ProfileRenamed.self) }] {
            guard case .failure(let failure) = error, let decoding = failure as? DecodingError, case .dataCorrupted(let context) = decoding else {
                Issue.record("not a DecodingError.dataCorrupted: \(error)"); continue
            }
            #expect(context.codingPath.map(\.stringValue) == ["app"])
        }
    }

    @Test("each payload names its stream: events of its producer, push jobs, real-time frames")
    func streams() {
        let names = StreamNames(prefix: "lantern")
        #expect(names.name(of: IdentityEvents.UserDeleted.stream) == "lantern.events.identity")
        #expect(names.name(of: MediaEvents.MomentShared.stream) == "lantern.events.media")
        #expect(names.name(of: PushRequest.stream) == "lantern.jobs.push")
        #expect(names.name(of: RealtimeFrame.stream) == "lantern.realtime")
        #expect(names.deadLetter(of: "lantern.realtime") == "lantern.dlq.realtime")
    }

    @Test("Pairly's frames carry every key, unset ones as null")
    func pairlyFrames() throws {
        let sentAt = Date(timeIntervalSince1970: 1_795_000_000)
        let moment = try PairlyFrames.newMoment(to: "b", momentId: "m", senderName: nil, sentAt: sentAt)
        #expect(moment.recipients == ["b"] && moment.type == "new_moment" && moment.app == .pairly)
        #expect(moment.data == .object(["momentId": .string("m"), "senderName": .null, "sentAt": .string(RFC3339.string(from: sentAt))]))
        let paired = try PairlyFrames.paired(pairingId: "p", userIds: ["a", "b"])
        #expect(paired.map(\.recipients) == [["a"], ["b"]])
        #expect(paired[0].data == .object(["pairingId": .string("p"), "partnerId": .string("b"), "reason": .null]))
        let ended = try PairlyFrames.pairDisconnected(pairingId: "p", userIds: ["a", "b"], reason: "disconnected")
        #expect(ended[1].data == .object(["pairingId": .string("p"), "partnerId": .string("a"), "reason": .string("disconnected")]))
    }

    @Test("a frame's body reads back as the type it was written from, and only as that type")
    func typedFrames() throws {
        let sentAt = Date(timeIntervalSince1970: 1_795_000_000)
        let moment = try PairlyFrames.newMoment(to: "b", momentId: "m", senderName: nil, sentAt: sentAt)
        #expect(try moment.body(as: PairlyFrames.NewMoment.self) == PairlyFrames.NewMoment(momentId: "m", senderName: nil, sentAt: sentAt))
        #expect(try moment.body(as: PairlyFrames.PartnerUpdated.self) == nil)
        let ready = try RealtimeFrame(to: ["u"], AstroSvitlaFrames.ReportReady(reportId: "r", chart: "c", area: "career"))
        #expect(ready.app == .astrosvitla && ready.type == "report_ready")
        #expect(ready.data == .object(["reportId": .string("r"), "chart": .string("c"), "area": .string("career"), "status": .string("ready")]))
        #expect(try RealtimeFrame(to: ["u"], AstroSvitlaFrames.ReportFailed(reportId: "r", chart: "c", area: "career")).data["status"] == .string("failed"))
        // A key the producer left out (an older producer) reads as nil, as null does.
        let older = RealtimeFrame(to: ["b"], app: .pairly, type: "new_moment",
                                  data: .object(["momentId": .string("m"), "sentAt": .string(RFC3339.string(from: sentAt))]))
        #expect(try older.body(as: PairlyFrames.NewMoment.self)?.senderName == nil)
    }
}

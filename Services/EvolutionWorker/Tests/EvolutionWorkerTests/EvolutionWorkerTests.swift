import EvolutionWorker
import Foundation
import LanternContracts
import LanternCore
import LanternRendering
import LanternTestSupport
import Testing

@Suite("evolution-worker", .serialized)
struct EvolutionWorkerTests {
    // MARK: The local generator

    @Test("the local generator: same job → same picture; every stage and mood a valid 1024×1024 PNG (independent decoder), purple, no metadata")
    func localGenerator() async throws {
        var hashes: Set<String> = []
        for stage in 1...8 {
            for tone in [GhostDrawing.Tone.bright, .calm, .dark] where stage <= 2 || tone == .bright || stage == 8 {
                let drawing = GhostDrawing(stage: stage, seed: "seed-\(stage)", tone: tone)
                #expect(drawing.svg == GhostDrawing(stage: stage, seed: "seed-\(stage)", tone: tone).svg)
                let png = try await LocalPainter.render(drawing, size: 1024)
                #expect(png == (try await LocalPainter.render(drawing, size: 1024)), "stage \(stage) \(tone): drawn twice, two pictures")
                let inspected = try await PNGInspection.of(png)
                #expect(inspected.width == 1024 && inspected.height == 1024)
                #expect(inspected.metadata.isEmpty, "metadata chunks \(inspected.metadata)")
                #expect(inspected.purpleFraction > 0.05, "stage \(stage) \(tone): \(inspected.purpleFraction) purple")
                #expect(inspected.distinctColors > 1000, "a flat picture at stage \(stage)")
                hashes.insert(inspected.pixelsSHA256)
            }
        }
        #expect(hashes.count == 14, "every stage and mood looks different")
        // Another seed draws another ghost of the same stage.
        let a = GhostDrawing(stage: 3, seed: "a", tone: .bright).svg, b = GhostDrawing(stage: 3, seed: "b", tone: .bright).svg
        #expect(a != b)
    }

    @Test("with no key, a job is drawn locally and stored; symbi.evolved names it; a redelivery draws nothing more")
    func localJob() async throws {
        try await EvolutionHarness.run { h in
            let user = UUID(), evolution = UUID()
            let envelope = try await h.request(evolution, user: user, stage: 2, state: "active")
            let evolved = try #require(try await h.waitForEvolved(evolution))
            #expect(evolved.userId == user.lowercased && evolved.stage == 2 && evolved.generator == "local")
            #expect(evolved.imageKey == "\(evolution.lowercased).png" && evolved.contentType == "image/png" && evolved.width == 1024 && evolved.height == 1024)
            let inspected = try await PNGInspection.of(h.picture(evolution))
            #expect(inspected.width == 1024 && inspected.metadata.isEmpty)
            // The same message again, and the same job under a new event id: no second picture, no second event.
            try await h.publish(envelope)
            try await h.request(evolution, user: user, stage: 2, state: "active")
            try await Task.sleep(for: .milliseconds(600))
            #expect(try await h.evolved().filter { $0.evolutionId == evolution.lowercased }.count == 1)
            #expect(try await h.job(evolution)?.status == "done")
            #expect(try await PNGInspection.of(h.picture(evolution)).pixelsSHA256 == inspected.pixelsSHA256)
        }
    }

    @Test("a request that breaks its contract is dead-lettered at once")
    func poison() async throws {
        try await EvolutionHarness.run { h in
            let user = UUID()
            let bad = EventEnvelope(type: SymbiEvents.EvolutionRequested.eventType, occurredAt: Date(), producer: "health-brain", subject: user.lowercased,
                                    data: .object(["evolutionId": .string(UUID().lowercased), "userId": .string(user.lowercased), "stage": .number(1),
                                                   "state": .string("vibrant"), "seed": .string("x"), "previousImageKey": .string("../../etc/passwd")]))
            try await h.publish(bad)
            #expect(try await eventually(timeout: .seconds(10)) { try await h.deadLetters().contains { $0["reason"]?.contains("previousImageKey") == true } })
        }
    }

    // MARK: The image model

    @Test("the model's picture is checked, drawn again as a clean 1024 PNG (its metadata gone), and stored; the prompt carries no user and no health value")
    func modelPicture() async throws {
        let fake = FakeLLMServers()
        let answer = try await ModelAnswers.pngWithMetadata(side: 768)
        fake.script(EvolutionHarness.model, .picture(answer))
        try await EvolutionHarness.run(fake: fake) { h in
            let user = UUID(), evolution = UUID()
            fake.forbid(user.lowercased)
            try await h.request(evolution, user: user, stage: 1, state: "stressed")
            let evolved = try #require(try await h.waitForEvolved(evolution))
            #expect(evolved.generator == "model" && evolved.width == 1024)
            let stored = try Data(contentsOf: h.picture(evolution))
            #expect(!stored.contains(Data("Jane Example".utf8)), "the model's metadata survived")
            let inspected = try await PNGInspection.of(h.picture(evolution))
            #expect(inspected.width == 1024 && inspected.height == 1024 && inspected.metadata.isEmpty && inspected.opaqueFraction > 0.99)
            let sent = try #require(fake.received(model: EvolutionHarness.model).first)
            #expect(sent.prompt.contains("#6B46C1") && sent.prompt.contains("darker purple") && sent.inputImages.isEmpty)
            let modalities = (sent.json?["generationConfig"] as? [String: Any])?["responseModalities"] as? [String]
            #expect(modalities == ["TEXT", "IMAGE"])

            // The next stage continues from this picture: it goes with the prompt.
            let next = UUID()
            try await h.request(next, user: user, stage: 2, state: "vibrant", previous: evolution)
            _ = try #require(try await h.waitForEvolved(next))
            let second = try #require(fake.received(model: EvolutionHarness.model).last)
            #expect(second.inputImages.count == 1 && second.inputImages.first?.bytes == stored && second.prompt.contains("next evolution"))
        }
    }

    @Test("a text-only answer, a 503 and a picture that is not one are retried; the job ends drawn, once")
    func retries() async throws {
        let fake = FakeLLMServers()
        fake.script(EvolutionHarness.model, .ok("I would love to draw a ghost, but here is a description instead."), .serverError(503),
                    .picture(Array("not a picture at all".utf8)), .picture(try await ModelAnswers.pngWithMetadata(side: 512)))
        try await EvolutionHarness.run(fake: fake) { h in
            let evolution = UUID()
            try await h.request(evolution, user: UUID())
            _ = try #require(try await h.waitForEvolved(evolution))
            let job = try #require(try await h.job(evolution))
            #expect(job.status == "done" && job.attempts == 3)
            #expect(fake.received(model: EvolutionHarness.model).count == 4)
            #expect(try await h.evolved().count == 1)
        }
    }

    @Test("an account's image calls are budgeted (retries count): beyond them its evolution is drawn by Lantern's generator, other accounts keep theirs (#44 item 2)")
    func imageCallBudget() async throws {
        let fake = FakeLLMServers()
        fake.script(EvolutionHarness.model, .serverError(503), .serverError(503), .picture(try await ModelAnswers.pngWithMetadata(side: 512)))
        try await EvolutionHarness.run(fake: fake, ["EVOLUTION_IMAGE_CALLS_PER_ACCOUNT": "2"]) { h in
            let user = UUID(), evolution = UUID()
            try await h.request(evolution, user: user)
            _ = try #require(try await h.waitForEvolved(evolution))
            // Two failed calls spent the account's budget: the third attempt drew locally, without the model.
            #expect(fake.received(model: EvolutionHarness.model).count == 2)
            #expect(try await h.evolved().first?.generator == "local")
            // Another account's evolution still goes to the model (whose next answer is the picture).
            let other = UUID()
            try await h.request(other, user: UUID())
            _ = try #require(try await h.waitForEvolved(other))
            #expect(fake.received(model: EvolutionHarness.model).count == 3)
            #expect(try await h.evolved().contains { $0.evolutionId == other.lowercased && $0.generator == "model" })
        }
    }

    @Test("a 429's retryDelay pauses every job until it has passed, and costs no attempt")
    func rateLimit() async throws {
        let fake = FakeLLMServers()
        fake.script(EvolutionHarness.model, .rateLimited(retryAfterSeconds: 2), .picture(try await ModelAnswers.pngWithMetadata(side: 512)))
        try await EvolutionHarness.run(fake: fake) { h in
            let evolution = UUID()
            try await h.request(evolution, user: UUID())
            _ = try #require(try await h.waitForEvolved(evolution))
            let calls = fake.received(model: EvolutionHarness.model)
            #expect(calls.count == 2)
            if calls.count == 2 { #expect(calls[1].receivedAt.timeIntervalSince(calls[0].receivedAt) >= 1.9, "retried before the provider's retryDelay") }
            #expect(try await h.job(evolution)?.attempts == 0)
        }
    }

    @Test("IMAGE_SAFETY every time: dead-lettered after the limit with the reason; a replay of the dead letter draws it")
    func deadLetter() async throws {
        let fake = FakeLLMServers()
        fake.script(EvolutionHarness.model, .imageSafety)
        try await EvolutionHarness.run(fake: fake, ["EVOLUTION_MAX_ATTEMPTS": "3"]) { h in
            let evolution = UUID()
            try await h.request(evolution, user: UUID())
            let letter = try #require(try await eventuallyValue(timeout: .seconds(15)) { try await h.deadLetters().first })
            #expect(letter["reason"]?.contains("IMAGE_SAFETY") == true && letter["deliveries"] == "3" && letter["evolutionId"] == evolution.lowercased)
            #expect(try await h.job(evolution)?.status == "dead")
            #expect(fake.received(model: EvolutionHarness.model).count == 3)
            #expect(try await h.evolved().isEmpty)

            // The operator replays it once the model draws again.
            fake.script(EvolutionHarness.model, .picture(try await ModelAnswers.pngWithMetadata(side: 512)))
            try await h.publish(try EventEnvelope.decode(try #require(letter["event"])))
            _ = try #require(try await h.waitForEvolved(evolution))
            #expect(try await h.job(evolution)?.status == "done")
        }
    }

    // MARK: Deletion

    @Test("user.deleted removes every picture and job of the user; a request of theirs still on its way is dropped")
    func deletion() async throws {
        try await EvolutionHarness.run { h in
            let user = UUID(), other = UUID()
            let first = UUID(), second = UUID(), kept = UUID()
            try await h.request(first, user: user, stage: 1)
            try await h.request(second, user: user, stage: 2, previous: first)
            try await h.request(kept, user: other, stage: 1)
            for evolution in [first, second, kept] { _ = try #require(try await h.waitForEvolved(evolution)) }
            #expect(FileManager.default.fileExists(atPath: h.picture(first).path))

            try await h.deleteUser(user)
            #expect(try await eventually(timeout: .seconds(10)) {
                !FileManager.default.fileExists(atPath: h.picture(first).path) && !FileManager.default.fileExists(atPath: h.picture(second).path)
            })
            #expect(try await h.job(first) == nil)
            #expect(try await h.job(second) == nil)
            #expect(FileManager.default.fileExists(atPath: h.picture(kept).path))

            let late = UUID()
            try await h.request(late, user: user, stage: 3)
            try await Task.sleep(for: .milliseconds(800))
            #expect(try await h.job(late) == nil)
            #expect(!FileManager.default.fileExists(atPath: h.picture(late).path))
        }
    }
}

/// Pictures an image model might send.
enum ModelAnswers {
    /// A real square PNG with personal metadata in a `tEXt` chunk (`Author: Jane Example`) before its pixels.
    static func pngWithMetadata(side: Int) async throws -> [UInt8] {
        let png = try await Renderer.run {
            let canvas = try ImageCanvas(width: side, height: side)
            canvas.fillGradient(top: ImageCanvas.Color(hex: "#2A1B4D")!, bottom: ImageCanvas.Color(hex: "#7C3AED")!)
            canvas.circle(x: Double(side) / 2, y: Double(side) / 2, radius: Double(side) / 4, color: ImageCanvas.Color(hex: "#9333EA")!)
            return Array(try canvas.png())
        }
        // After the signature (8) and IHDR (4 + 4 + 13 + 4).
        let at = 8 + 25
        return Array(png[..<at]) + chunk("tEXt", Array("Author\u{0}Jane Example".utf8)) + Array(png[at...])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let length = UInt32(data.count)
        let crc = crc32(typeBytes + data)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + typeBytes + data
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }

    /// CRC-32 (ISO 3309), as PNG chunks carry it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}

@Suite("evolution-worker's configuration")
struct EvolutionConfigurationTests {
    static let base = ["DATABASE_URL": "postgres://localhost/x"]

    @Test("no key: the local generator; a key: the spec's image model; model without a key, or an unknown generator, is refused naming the variable")
    func generator() throws {
        let local = try EvolutionWorkerConfiguration(settings: .fixed(Self.base))
        #expect(local.generator == .local && local.imageSize == 1024)
        let model = try EvolutionWorkerConfiguration(settings: .fixed(Self.base.merging(["GEMINI_API_KEY": "k"]) { $1 }))
        #expect(model.generator == .model && model.imageModel == "gemini-2.5-flash-image-preview")
        #expect(try EvolutionWorkerConfiguration(settings: .fixed(Self.base.merging(["GEMINI_API_KEY": "k", "EVOLUTION_GENERATOR": "local"]) { $1 })).generator == .local)
        #expect { try EvolutionWorkerConfiguration(settings: .fixed(Self.base.merging(["EVOLUTION_GENERATOR": "model"]) { $1 })) } throws: {
            ($0 as? ConfigurationError)?.variable == "EVOLUTION_GENERATOR"
        }
        #expect { try EvolutionWorkerConfiguration(settings: .fixed(Self.base.merging(["EVOLUTION_GENERATOR": "paint"]) { $1 })) } throws: {
            ($0 as? ConfigurationError)?.variable == "EVOLUTION_GENERATOR"
        }
        #expect { try EvolutionWorkerConfiguration(settings: .fixed(Self.base.merging(["SYMBI_STORAGE": "s3", "SYMBI_S3_BUCKET": "Bad_Bucket"]) { $1 })) } throws: {
            ($0 as? ConfigurationError)?.variable == "SYMBI_S3_BUCKET"
        }
    }

    @Test("an image key is <uuid>.png and nothing else")
    func imageKeys() {
        let id = UUID()
        #expect(EvolutionJob.isImageKey("\(id.lowercased).png"))
        for bad in ["../x.png", "\(id.uuidString).png", "\(id.lowercased).jpg", "\(id.lowercased)", ".png", "a/b.png"] {
            #expect(!EvolutionJob.isImageKey(bad), "\(bad)")
        }
    }
}

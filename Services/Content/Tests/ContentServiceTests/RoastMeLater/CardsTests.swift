import Foundation
import HTTPTypes
import HummingbirdTesting
import LanternContracts
import LanternCore
import LanternEvents
import LanternTestSupport
@testable import RoastMeLaterContent
import Testing

/// What an independent decoder (Pillow) reads of a PNG: its size, mode, and every chunk type in the file.
struct DecodedPNG: Decodable {
    var width: Int
    var height: Int
    var mode: String
    var chunks: [String]
    var info: [String]
    /// Distinct colours in a 64×64 thumbnail: a card that is one flat colour has not been drawn.
    var colours: Int
}

enum PillowCheck {
    /// Pillow's reading of `png`, run on NIO's blocking pool (`ChildProcess`): a test waiting for a child process
    /// must not hold one of the few concurrency threads every test and server of the run shares.
    static func decode(_ png: Data) async throws -> DecodedPNG {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("card-\(UUID().uuidString).png")
        try png.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sys, json, struct
            from PIL import Image
            data = open(sys.argv[1], "rb").read()
            chunks, i = [], 8
            while i + 8 <= len(data):
                length, kind = struct.unpack(">I4s", data[i:i + 8]); chunks.append(kind.decode("latin-1")); i += 12 + length
            im = Image.open(sys.argv[1]); im.load()
            thumb = im.convert("RGB").resize((64, 64))
            print(json.dumps({"width": im.size[0], "height": im.size[1], "mode": im.mode, "chunks": chunks,
                              "info": sorted(k for k in im.info.keys() if k not in ("dpi",)), "colours": len(set(thumb.getdata()))}))
            """, file.path])
        guard output.status == 0 else { throw PillowFailure(description: "Pillow cannot decode the card: \(output.stderr)") }
        return try JSONDecoder().decode(DecodedPNG.self, from: output.stdout)
    }

    struct PillowFailure: Error, CustomStringConvertible { var description: String }
}

@Suite("RoastMeLater share cards")
struct CardsTests {
    static let longest = String(repeating: "Cuộc họp đứng mười lăm phút của bạn đã kéo dài hơn cả một bộ phim, ", count: 3)

    @Test("every template in both formats is a PNG Pillow decodes at 1080×1920 or 1080×1080 with no metadata chunks; drawn once, then served from the cache with its ETag")
    func cards() async throws {
        try await ContentHarness.run(llm: ["LLM_MODELS": "gemini:gemini-2.5-flash"]) { h in
            let vietnamese = "Lịch họp của bạn dày đến mức công việc thật phải đặt lịch hẹn như khách lạ 😂"
            h.llm.script("gemini-2.5-flash", .ok(vietnamese))
            let user = UUID()
            let roast = try await h.roasted(user, #"{"category":"meetings","spice":4,"language":"vi"}"#)
            #expect(roast.text == vietnamese)
            // The reward that unlocks the premium templates.
            let granted = GamificationEvents.RewardUnlocked(userId: user.lowercased, app: .roastmelater, reward: "premium_roasts", unlockedAt: h.time.now)
            let locked = try await h.request(.get, "/v1/roasts/\(roast.id)/card?template=neon", as: user, app: .roastmelater)
            #expect(try locked.status == .forbidden && locked.decode(ProblemBody.self).code == "premium_locked")
            try await EventPublisher(redis: h.redis).publish(try EventEnvelope(granted, producer: "gamification", subject: granted.userId, occurredAt: h.time.now),
                                                             to: h.streams.events("gamification"))
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_rewards") == 1 })
            let catalogue = try RoastMeLaterContent.catalogue()
            #expect(catalogue.cardTemplates.count >= 3 && catalogue.cardTemplates.contains { $0.premium })
            for template in catalogue.cardTemplates.map(\.id) {
                for (format, width, height) in [("story", 1080, 1920), ("post", 1080, 1080)] {
                    let response = try await h.request(.get, "/v1/roasts/\(roast.id)/card?template=\(template)&format=\(format)", as: user, app: .roastmelater)
                    #expect(response.status == .ok && response.headers[.contentType] == "image/png", "\(template) \(format): \(String(buffer: response.body))")
                    let png = Data(buffer: response.body)
                    let decoded = try await PillowCheck.decode(png)
                    #expect(decoded.width == width && decoded.height == height, "\(template) \(format)")
                    // Pixels only: no text, time, EXIF or physical-size chunk (Cairo's PNG writer adds bKGD, the default
                    // background colour, a rendering hint that says nothing about anyone).
                    #expect(decoded.chunks.allSatisfy { ["IHDR", "bKGD", "IDAT", "IEND"].contains($0) } && decoded.info.isEmpty,
                            "\(template) \(format): \(decoded.chunks) \(decoded.info)")
                    #expect(decoded.colours > 100, "\(template) \(format) looks blank: \(decoded.colours) colours")
                    // Cached: the same bytes again, and 304 for its ETag.
                    let etag = try #require(response.headers[.eTag])
                    let again = try await h.request(.get, "/v1/roasts/\(roast.id)/card?template=\(template)&format=\(format)", as: user, app: .roastmelater)
                    #expect(Data(buffer: again.body) == png)
                    let revalidated = try await h.request(.get, "/v1/roasts/\(roast.id)/card?template=\(template)&format=\(format)", as: user,
                                                          app: .roastmelater, headers: [.ifNoneMatch: etag])
                    #expect(revalidated.status == .notModified)
                }
            }
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_cards") == catalogue.cardTemplates.count * 2)
            // Another user's roast, an unknown template or format.
            #expect(try await h.request(.get, "/v1/roasts/\(roast.id)/card", as: UUID(), app: .roastmelater).status == .notFound)
            for (query, field) in [("template=plain", "template"), ("format=square", "format")] {
                let bad = try await h.request(.get, "/v1/roasts/\(roast.id)/card?\(query)", as: user, app: .roastmelater)
                #expect(try bad.status == .unprocessableContent && bad.decode(ProblemBody.self).errors?.first?.field == field)
            }
        }
    }

    @Test("the longest roast in Vietnamese is drawn in every template and format (LANTERN_CARD_SAMPLES=<folder> keeps the PNGs to look at)")
    func longest() async throws {
        let catalogue = try RoastMeLaterContent.catalogue()
        let category = try #require(catalogue.category("meetings"))
        let text = String(Self.longest.prefix(220))
        for template in catalogue.cardTemplates.map(\.id) {
            for format in ShareCard.Format.allCases {
                let content = ShareCard.Content(text: text, language: .vi, category: category, categoryName: category.names.vi, spice: 5,
                                                link: "https://roastmelater.app")
                let png = try ShareCard.png(content, template: template, format: format)
                let decoded = try await PillowCheck.decode(png)
                #expect(decoded.width == format.size.width && decoded.height == format.size.height)
                if let folder = ProcessInfo.processInfo.environment["LANTERN_CARD_SAMPLES"] {
                    try png.write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(template)-\(format.rawValue)-vi-longest.png"))
                }
            }
        }
    }

    @Test("sharing is recorded and announced (roast.shared with channel, template and local day); the channel is checked; deletion erases the cards")
    func sharing() async throws {
        try await ContentHarness.run { h in
            let user = UUID()
            let roast = try await h.roasted(user, #"{"category":"email","spice":2}"#)
            struct Shared: Decodable { var roastId: String; var channel: String; var shares: Int }
            let first = try await h.request(.post, "/v1/roasts/\(roast.id)/share", as: user, app: .roastmelater,
                                            json: #"{"channel":"zalo","template":"paper","timeZone":"Asia/Ho_Chi_Minh"}"#)
            #expect(try first.status == .ok && first.decode(Shared.self).shares == 1)
            let second = try await h.request(.post, "/v1/roasts/\(roast.id)/share", as: user, app: .roastmelater, json: #"{"channel":"copy"}"#)
            #expect(try second.decode(Shared.self).shares == 2)
            #expect(try await eventually { try await h.events("roast.shared").count == 2 })
            let events = try await h.events("roast.shared").map { try $0.payload(as: ContentEvents.RoastShared.self) }
            #expect(events.first == ContentEvents.RoastShared(roastId: roast.id, userId: user.lowercased, category: "email", channel: "zalo", template: "paper",
                                                              localDate: "2026-11-23", sharedAt: h.time.now))
            for (body, field) in [(#"{}"#, "channel"), (#"{"channel":"fax"}"#, "channel"), (#"{"channel":"copy","template":"plain"}"#, "template")] {
                let bad = try await h.request(.post, "/v1/roasts/\(roast.id)/share", as: user, app: .roastmelater, json: body)
                #expect(try bad.status == .unprocessableContent && bad.decode(ProblemBody.self).errors?.first?.field == field, "\(body)")
            }
            #expect(try await h.request(.post, "/v1/roasts/\(roast.id)/share", as: UUID(), app: .roastmelater, json: #"{"channel":"copy"}"#).status == .notFound)

            _ = try await h.request(.get, "/v1/roasts/\(roast.id)/card?format=post", as: user, app: .roastmelater)
            #expect(try await h.count("SELECT count(*)::int FROM content.roast_cards") == 1)
            try await h.identityEvent("user.deleted", subject: user, data: .object(["userId": .string(user.lowercased), "app": .string("roastmelater")]))
            #expect(try await eventually { try await h.count("SELECT count(*)::int FROM content.roast_cards") == 0 })
        }
    }
}

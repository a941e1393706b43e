@testable import LuckyDayContent
import ContentKit
import Foundation
import LanternCore
import LanternLLM
import Testing

@Suite("Lucky Day domain")
struct LuckyDayDomainTests {
    @Test("sexagenary days: 1949-10-01 and 2000-01-07 are 甲子 (Wood), 2000-01-01 is 戊午 (Earth); weekdays from the JDN")
    func sexagenaryDays() {
        #expect(LocalDay(year: 1949, month: 10, day: 1).sexagenaryIndex == 0)
        #expect(LocalDay(year: 2000, month: 1, day: 7).sexagenaryIndex == 0)
        #expect(LocalDay(year: 2000, month: 1, day: 7).element == "Wood")
        let y2k = LocalDay(year: 2000, month: 1, day: 1)
        #expect(y2k.sexagenaryIndex == 54 && y2k.element == "Earth" && y2k.weekday == "Saturday")
        #expect(LocalDay(year: 2026, month: 11, day: 23).weekday == "Monday")
        #expect(LocalDay(Date(timeIntervalSince1970: 1_795_474_800), in: TimeZone(identifier: "Europe/Rome")!).description == "2026-11-24",
                "23:00 UTC on the 23rd is already the 24th in Rome")
    }

    @Test("each user walks a fixed shuffle of the pool: no repeat before the pool is used up, and the same walk every time")
    func poolWalk() {
        let user = UUID()
        let walk = (0..<400).map { ArtisanalPool.index(for: user, position: $0, count: 400) }
        #expect(Set(walk).count == 400)
        #expect(walk == (0..<400).map { ArtisanalPool.index(for: user, position: $0, count: 400) })
        #expect(walk != (0..<400).map { ArtisanalPool.index(for: UUID(), position: $0, count: 400) })
        #expect(ArtisanalPool.index(for: user, position: 400, count: 400) == walk[0])
    }

    @Test("quiet hours: a reminder due at night waits for the morning in the user's time zone, across midnight and DST")
    func quietHours() throws {
        let quiet = try #require(QuietHours("22:00-08:00"))
        let rome = try #require(TimeZone(identifier: "Europe/Rome"))
        let iso = ISO8601DateFormatter()
        func at(_ text: String) throws -> Date { try #require(iso.date(from: text)) }
        // 15:00 in Rome: sent as due.
        #expect(quiet.deliveryTime(for: try at("2026-11-23T14:00:00Z"), in: rome) == (try at("2026-11-23T14:00:00Z")))
        // 23:30 in Rome → 08:00 the next morning.
        #expect(quiet.deliveryTime(for: try at("2026-11-23T22:30:00Z"), in: rome) == (try at("2026-11-24T07:00:00Z")))
        // 05:00 in Rome → 08:00 the same morning.
        #expect(quiet.deliveryTime(for: try at("2026-11-24T04:00:00Z"), in: rome) == (try at("2026-11-24T07:00:00Z")))
        // The night of the spring change (29 March 2026, 02:00 → 03:00): 08:00 CEST is 06:00 UTC.
        #expect(quiet.deliveryTime(for: try at("2026-03-29T00:30:00Z"), in: rome) == (try at("2026-03-29T06:00:00Z")))
        #expect(QuietHours("25:00-08:00") == nil && QuietHours("22:00") == nil)
        #expect(QuietHours("00:00-00:00")?.contains(minute: 0) == false)
    }

    @Test("breaking: reveal when closed, repeat for the same key, refuse until the lock ends")
    func breaking() {
        let now = Date(timeIntervalSince1970: 1_795_420_800)
        let fortune = Fortune(id: UUID(), text: "x", artisanal: true, revealedAt: now, opensAgainAt: now.addingTimeInterval(86_400))
        #expect(DailyCookie.breaking(latest: nil, latestKey: nil, key: "a", now: now) == .reveal(revealedAt: now, opensAgainAt: now.addingTimeInterval(86_400)))
        #expect(DailyCookie.breaking(latest: fortune, latestKey: "a", key: "a", now: now.addingTimeInterval(60)) == .repeatAnswer(fortune))
        #expect(DailyCookie.breaking(latest: fortune, latestKey: "a", key: "b", now: now.addingTimeInterval(60)) == .locked(opensAgainAt: fortune.opensAgainAt))
        #expect(DailyCookie.breaking(latest: fortune, latestKey: "a", key: nil, now: fortune.opensAgainAt) == .reveal(revealedAt: fortune.opensAgainAt, opensAgainAt: fortune.opensAgainAt.addingTimeInterval(86_400)))
        #expect(DailyCookie(latest: fortune, now: fortune.opensAgainAt.addingTimeInterval(-1)) == .opened(fortune))
    }
}

@Suite("Lucky Day catalogue")
struct LuckyDayCatalogueTests {
    static let animals = ["Rat", "Ox", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Goat", "Monkey", "Rooster", "Dog", "Pig"]
    static let elements = ["Wood", "Fire", "Earth", "Metal", "Water"]

    @Test("at least 365 hand-written fortunes, distinct, each a whole sentence without digits, links or directives")
    func pool() throws {
        let grammars = try LuckyDayContent.module.grammars()
        let core = try #require(grammars["fortune"]?.rules["core"])
        #expect(core.count >= 365 && Set(core).count == core.count)
        let guardian = OutputGuard()
        for text in core {
            #expect(text.last.map { ".!?".contains($0) } == true, "\(text)")
            #expect(!text.contains { $0.isNumber }, "\(text)")
            #expect((try? guardian.check(text, format: .text, rules: OutputRules(maxCharacters: 200, language: .english))) == text, "\(text)")
        }
    }

    @Test("every fortune the grammar can make fits 200 characters with the longest descriptors, and every profile text its limit")
    func lengths() throws {
        let grammars = try LuckyDayContent.module.grammars()
        let fortune = try #require(grammars["fortune"])
        let longest: [String: String] = ["animal": "Rooster", "yearElement": "Water", "dayMaster": "Yang Water", "dayElement": "Water",
                                         "weekday": "Wednesday", "nickname": "Whispering Water Rooster", "dominantElement": "Water", "weakElement": "Water"]
        func filled(_ text: String) -> String {
            longest.reduce(text) { $0.replacingOccurrences(of: "{\($1.key)}", with: $1.value) }
        }
        let longestCore = try #require(fortune.rules["core"]?.max { $0.count < $1.count })
        let longestOpening = try #require(fortune.rules["opening"]?.map(filled).max { $0.count < $1.count })
        let longestClosing = (fortune.rules["closing"] ?? [""]).map(filled).max { $0.count < $1.count } ?? ""
        #expect(longestOpening.count + 1 + longestCore.count <= 200)
        #expect(longestCore.count + 1 + longestClosing.count <= 200)
        #expect(fortune.descriptorKeys.isSubset(of: Set(longest.keys)), "the grammar uses a descriptor the writer does not give")
        // Profile texts, drawn many times with every animal and element.
        let local = LocalGenerator(grammars: grammars)
        for animal in Self.animals {
            for element in Self.elements {
                let values = ["animal": animal, "yearElement": element, "dayMaster": "Yin \(element)", "dominantElement": element, "weakElement": "Fire",
                              "nickname": "Quiet \(element) \(animal)", "role": "Hour", "meaning": "Inner Heart", "polarity": "Yin",
                              "stemElement": element, "branchAnimal": animal, "branchElement": "Earth"]
                let descriptors = values.map { Descriptor($0.key, $0.key, $0.value) }
                for task in ["nickname", "pillar-poem", "essence"] {
                    let request = LLMRequest(task: task, system: "", instruction: "", descriptors: descriptors,
                                             rules: OutputRules(maxCharacters: 220), seed: GenerationSeed(animal, element, task), budget: .seconds(1))
                    let text = try local.generate(request)
                    #expect(!text.contains("{") && text.count <= 220, "\(task): \(text)")
                    if task == "essence" { #expect(text.split(separator: "\n").count == 3) }
                    if task == "nickname" { #expect(text.hasSuffix("\(element) \(animal)") && text.split(separator: " ").count == 3) }
                }
            }
        }
    }
}

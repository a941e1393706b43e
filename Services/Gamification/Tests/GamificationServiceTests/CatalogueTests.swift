import Foundation
@testable import GamificationService
import LanternContracts
import LanternCore
import Testing

/// The catalogue as data: every rule of RoastMeLater's file earns at its target and only there, the streak
/// milestones, and the checks that refuse a catalogue which would misbehave.
@Suite struct CatalogueTests {
    static let achievements: Achievements = {
        do { return Achievements(catalogues: try GameCatalogue.bundled()) } catch { fatalError("the bundled catalogue does not load: \(error)") }
    }()

    var catalogue: GameCatalogue { Self.achievements.catalogues[.roastmelater]! }

    @Test("the bundled catalogue: RoastMeLater's 13 badges in the spec's categories and its two rewards, every text in en and vi")
    func bundled() throws {
        #expect(catalogue.badges.count == 13 && catalogue.rewards.map(\.id) == ["premium_roasts", "roast_master"])
        #expect(Set(catalogue.badges.map(\.category)) == ["streak", "generation", "exploration", "favorites", "sharing", "collection"])
        #expect(Self.achievements.countedEvents == ["roast.generated", "roast.favourited", "roast.shared"])
        // One 3-day badge (README, "Badges and rewards as data"): Getting Started.
        #expect(catalogue.badges.filter { $0.rule.streak == 3 }.map(\.id) == ["getting_started"])
    }

    @Test("every counted badge is earned when its counter reaches the target, and only then")
    func everyCountedRule() throws {
        let user = UUID()
        for badge in catalogue.badges where badge.rule.streak == nil {
            let metric = try #require(badge.rule.metric?.key)
            let target = badge.rule.target ?? 12  // a complete badge: the group's size, here 12
            let subject = badge.rule.complete != nil ? "classic_office" : ""
            func earned(_ before: Int, _ after: Int) -> [String] {
                Self.achievements.earned(by: [CounterChange(user: user, app: .roastmelater, metric: metric, subject: subject, before: before, after: after,
                                                            size: badge.rule.complete != nil ? 12 : nil)], at: Date()).map(\.badge.badge)
            }
            #expect(earned(target - 1, target).contains(badge.id), "\(badge.id) at its target")
            #expect(earned(target - 2, target + 3).contains(badge.id), "\(badge.id) crossed in one batch")
            #expect(!earned(target, target + 1).contains(badge.id), "\(badge.id) after its target: earned before")
            #expect(!earned(target - 2, target - 1).contains(badge.id), "\(badge.id) below its target")
        }
    }

    @Test("streak milestones: 3, 7 and 30 days, and a freeze that jumps over several at once")
    func streakMilestones() {
        func crossed(_ before: Int, _ after: Int) -> [String] {
            let (badges, rewards) = Self.achievements.streakMilestones(app: .roastmelater, longestBefore: before, after: after)
            return badges.map(\.id) + rewards.map(\.id)
        }
        #expect(crossed(2, 3) == ["getting_started"])
        #expect(crossed(6, 7) == ["week_warrior", "premium_roasts"])
        #expect(crossed(29, 30) == ["monthly_master", "roast_master"])
        #expect(crossed(3, 6).isEmpty && crossed(30, 31).isEmpty)
        #expect(crossed(2, 35) == ["getting_started", "week_warrior", "monthly_master", "premium_roasts", "roast_master"])
    }

    @Test("event fields by name: filters, groups without a size, values of the wrong kind count for nothing")
    func steps() {
        let user = UUID()
        func steps(_ type: String, _ fields: [String: JSONValue]) -> [String] {
            Self.achievements.steps(for: ActivityEvent(id: UUID(), type: type, user: user, occurredAt: Date(), fields: .object(fields)))
                .map { "\($0.metric)|\($0.subject)|\($0.member ?? "")" }.sorted()
        }
        #expect(steps("roast.favourited", ["roastId": .string("r1"), "favourite": .bool(false)]).isEmpty)
        #expect(steps("roast.favourited", ["roastId": .string("r1"), "favourite": .bool(true)]) == ["distinct:roast.favourited:roastId?favourite=true||r1"])
        let roast = steps("roast.generated", ["category": .string("tech"), "spice": .number(4), "collection": .string("tet"), "scenario": .string("lixi"),
                                              "collectionSize": .number(6)])
        #expect(roast == ["complete:roast.generated:collection:scenario|tet|lixi", "count:roast.generated||", "distinct:roast.generated:category||tech",
                          "distinct:roast.generated:spice||4"])
        // A collection without its size, or a category that is not a scalar: not counted.
        #expect(steps("roast.generated", ["category": .array([]), "collection": .string("tet"), "scenario": .string("lixi")]) == ["count:roast.generated||"])
        #expect(steps("fortune.revealed", ["fortuneId": .string("f")]).isEmpty)
    }

    @Test("a catalogue that would misbehave is refused, naming what is wrong")
    func refusals() throws {
        let valid = catalogue
        var pushes = valid.pushes
        pushes.badgeEarned = "roastmelater.unknown"
        #expect(throws: CatalogueError.self) { try GameCatalogue(app: .roastmelater, languages: valid.languages, badges: valid.badges, rewards: valid.rewards, pushes: pushes) }
        var twoRules = valid.badges
        twoRules[0].rule.count = .init(event: "roast.generated", target: 3)
        #expect(throws: CatalogueError.self) { try GameCatalogue(app: .roastmelater, languages: valid.languages, badges: twoRules, rewards: valid.rewards, pushes: valid.pushes) }
        var untranslated = valid.badges
        untranslated[1].name["vi"] = nil
        #expect(throws: CatalogueError.self) { try GameCatalogue(app: .roastmelater, languages: valid.languages, badges: untranslated, rewards: valid.rewards, pushes: valid.pushes) }
        #expect(throws: CatalogueError.self) { try GameCatalogue(app: .roastmelater, languages: valid.languages, badges: valid.badges + [valid.badges[0]], rewards: valid.rewards, pushes: valid.pushes) }
        _ = try GameCatalogue(app: .roastmelater, languages: valid.languages, badges: valid.badges, rewards: valid.rewards, pushes: valid.pushes)
    }
}

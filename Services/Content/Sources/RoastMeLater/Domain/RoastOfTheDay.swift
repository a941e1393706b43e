import ContentKit
import Foundation
import LanternCore

/// The catalogue lacks what a decision needs (a bug of the catalogue, never of a request).
struct CatalogueGap: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}

/// How a user set up the widget (REQ-WDG-007, -008), and where their day begins.
struct WidgetSettings: Sendable, Equatable {
    var categories: [String]
    var maxSpice: Int
    var language: RoastLanguage
    /// An IANA name.
    var timeZone: String

    /// Until the user configures it: every category that needs no reward, medium spice, English, UTC.
    static func standard(_ catalogue: RoastCatalogue) -> WidgetSettings {
        WidgetSettings(categories: catalogue.categories.filter { !$0.premium }.map(\.id), maxSpice: 3, language: .en, timeZone: "UTC")
    }

    var zone: TimeZone { TimeZoneName.zone(timeZone) ?? .gmt }
}

/// A roast made for one user and one local day, shown by the widget all that day (REQ-WDG-001, -002).
struct DailyRoast: Sendable, Equatable {
    var id: UUID
    var userID: UUID
    var day: LocalDay
    var category: String
    var spice: Int
    var language: RoastLanguage
    var text: String
    var artisanal: Bool
    var source: String
    var createdAt: Date
}

/// content's copy of gamification's streak (`streak.changed`).
struct StreakCopy: Sendable, Equatable {
    var current: Int
    var longest: Int
    var lastActiveDay: LocalDay?

    /// The streak as of `today`: alive while its last day is today or yesterday, else broken (0) even before
    /// gamification says so.
    func current(on today: LocalDay) -> Int {
        guard let lastActiveDay, lastActiveDay >= today.adding(days: -1) else { return 0 }
        return current
    }

    /// Alive, but nothing counted today yet: a roast today keeps it.
    func atRisk(on today: LocalDay) -> Bool { current(on: today) > 0 && lastActiveDay != today }
}

/// What the widget path reads, in one query: the settings, the day's roast and the streak copy.
struct WidgetState: Sendable, Equatable {
    var settings: WidgetSettings?
    var lastViewed: LocalDay?
    /// The roasts of the days around now (UTC's day ± 1): the widget shows the one of the user's local day.
    var roasts: [DailyRoast]
    var streak: StreakCopy?
}

/// A widget whose next roast of the day is due.
struct DueWidget: Sendable {
    var user: UUID
    var settings: WidgetSettings
    var day: LocalDay
    var lastViewed: LocalDay
}

protocol DailyRoastRecords: Sendable {
    /// The settings, the roasts of the days around `now` and the streak.
    func widgetState(of user: UUID, at now: Date) async throws -> WidgetState
    /// Keeps the settings and schedules the roast of `today` (made at once) — the days' roasts from today on made
    /// under the old settings are dropped.
    func save(_ settings: WidgetSettings, user: UUID, today: LocalDay, at now: Date) async throws
    /// Leases up to `limit` widgets whose next roast of the day is due; each with its settings, day and last read.
    func leaseDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [DueWidget]
    /// Records that the widget was read on `day`; a widget that was idle gets its roast made at once.
    func viewed(_ user: UUID, on day: LocalDay, idleSince: LocalDay, at now: Date) async throws
    /// Keeps the day's roast (none: the widget is idle) and schedules the next day's, unless the lease was lost
    /// (the settings changed meanwhile).
    func finish(_ user: UUID, roast: DailyRoast?, lease: Date, next: LocalDay, nextDue: Date) async throws
    /// Whether the user has `reward` (the premium categories in the widget's settings).
    func hasReward(_ reward: String, user: UUID) async throws -> Bool
    /// Keeps `roast` among the user's roasts (a widget's roast opened in the app), once.
    func keep(_ roast: DailyRoast) async throws
}

/// The roast of the day (REQ-WDG): which category and spice a day gets, when it is made, what each widget size
/// shows. The widget path never calls a model: a day without its roast (not configured, not made yet) shows a
/// curated one from the local grammar, flagged.
struct RoastsOfTheDay: Sendable {
    let records: any DailyRoastRecords
    let writer: RoastWriter
    let catalogue: RoastCatalogue
    let clock: WallClock
    /// A roast made ahead has no user waiting: a model may take longer than a live roast's budget.
    let budget: Duration

    /// How long before a local day begins its roast is made.
    static let lead: TimeInterval = 6 * 3600
    static let lease: TimeInterval = 120
    static let batch = 16
    /// Unread this many days, a widget gets no new roasts until it is read again.
    static let idleDays = 14

    /// The category and spice of a user's day: drawn from the settings by a hash of the user and the day, so the
    /// same day always gets the same, and days differ. Spice is the maximum or one below (never above it).
    static func pick(_ settings: WidgetSettings, user: UUID, day: LocalDay) -> (category: String, spice: Int) {
        var hash: UInt64 = 14_695_981_039_346_656_037  // FNV-1a: stable across runs, unlike Hasher
        for byte in Array((user.uuidString.lowercased() + day.description).utf8) { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        let categories = settings.categories.isEmpty ? ["office"] : settings.categories
        let category = categories[Int(hash % UInt64(categories.count))]
        let spice = max(1, settings.maxSpice - Int((hash >> 32) % 2))
        return (category, spice)
    }

    /// When the roast of `day` is made: `lead` before its midnight, or now when that has passed.
    static func due(_ day: LocalDay, in zone: TimeZone, now: Date) -> Date {
        max(now, day.start(in: zone).addingTimeInterval(-lead))
    }

    /// The order a day's roast is written for.
    func order(_ settings: WidgetSettings, user: UUID, day: LocalDay) -> RoastOrder? {
        let (categoryID, spiceLevel) = Self.pick(settings, user: user, day: day)
        guard let category = catalogue.category(categoryID), let spice = catalogue.spice(spiceLevel) else { return nil }
        return RoastOrder(category: category, spice: spice, mood: nil, language: settings.language, timeZone: settings.zone)
    }

    /// Makes the due roasts of the day (up to `batch`); returns how many widgets it leased.
    func makeDue() async throws -> Int {
        let now = clock.now()
        let lease = now.addingTimeInterval(Self.lease)
        let due = try await records.leaseDue(now: now, leaseUntil: lease, limit: Self.batch)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for widget in due {
                group.addTask {
                    var roast: DailyRoast?
                    // Someone who stopped reading the widget costs no model calls; reading it again resumes.
                    if widget.lastViewed >= widget.day.adding(days: -Self.idleDays), let order = order(widget.settings, user: widget.user, day: widget.day) {
                        let id = UUID.v7(at: clock.now())
                        let written = await writer.write(order, user: widget.user, roast: id, budget: budget)
                        roast = DailyRoast(id: id, userID: widget.user, day: widget.day, category: order.category.id, spice: order.spice.level,
                                           language: order.language, text: written.text, artisanal: written.artisanal, source: written.source,
                                           createdAt: clock.now())
                    }
                    let next = widget.day.adding(days: 1)
                    try await records.finish(widget.user, roast: roast, lease: lease, next: next,
                                             nextDue: Self.due(next, in: widget.settings.zone, now: clock.now()))
                }
            }
            try await group.waitForAll()
        }
        return due.count
    }

    /// The widget's roast: the day's when it was made, else a curated one (the local grammar, no model).
    func view(of user: UUID) async throws -> (state: WidgetState, roast: DailyRoast, curated: Bool, today: LocalDay) {
        let now = clock.now()
        let state = try await records.widgetState(of: user, at: now)
        let settings = state.settings ?? .standard(catalogue)
        let today = LocalDay(now, in: settings.zone)
        if state.settings != nil, let last = state.lastViewed, last != today {
            try await records.viewed(user, on: today, idleSince: today.adding(days: -Self.idleDays), at: now)
        }
        if let roast = state.roasts.first(where: { $0.day == today }) { return (state, roast, false, today) }
        let order = order(settings, user: user, day: today) ?? order(.standard(catalogue), user: user, day: today)
        // Seeded by the user and the day: the same curated roast (and id, and ETag) all day, whatever the replica.
        let id = Self.curatedSeed(user: user, day: today)
        guard let order else { throw CatalogueGap(detail: "no category of the catalogue fits the widget") }
        let written = writer.artisanal(order, user: user, roast: id)
        let roast = DailyRoast(id: id, userID: user, day: today, category: order.category.id, spice: order.spice.level, language: order.language,
                               text: written.text, artisanal: true, source: "local", createdAt: today.start(in: settings.zone))
        return (state, roast, true, today)
    }

    /// Makes the widget's roast of today the user's own when `id` is it and it was curated (not stored): the widget
    /// opens the full roast with its sharing options (REQ-WDG-003), and every `/v1/roasts/{roastId}` route then
    /// finds it. A stored roast of the day joins by its row (`RoastStore.roast`). False when `id` is not today's.
    func adoptCurated(_ id: UUID, user: UUID) async throws -> Bool {
        let view = try await view(of: user)
        guard view.curated, view.roast.id == id else { return false }
        try await records.keep(view.roast)
        return true
    }

    /// A UUID derived from the user and the day, so the curated roast's grammar draw is the same all day.
    static func curatedSeed(user: UUID, day: LocalDay) -> UUID {
        var bytes = withUnsafeBytes(of: user.uuid) { Array($0) }
        let jdn = day.julianDayNumber
        for i in 0..<8 { bytes[8 + i] ^= UInt8(truncatingIfNeeded: jdn >> (8 * i)) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Saving settings: saved, or refused for a premium category the user has not unlocked.
    enum SettingsCheck: Sendable, Equatable {
        case saved(WidgetSettings)
        case premiumLocked(String)
    }

    func save(_ settings: WidgetSettings, user: UUID) async throws -> SettingsCheck {
        if let premium = settings.categories.first(where: { catalogue.category($0)?.premium == true }),
           !(try await records.hasReward(RoastCatalogue.premiumReward, user: user)) {
            return .premiumLocked(premium)
        }
        let now = clock.now()
        try await records.save(settings, user: user, today: LocalDay(now, in: settings.zone), at: now)
        return .saved(settings)
    }

    /// A preview of at most `limit` characters for the small widget: the text, or its first words and "…".
    static func preview(_ text: String, limit: Int = 60) -> String {
        guard text.count > limit else { return text }
        let cut = text.prefix(limit - 1)
        let words = cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut
        return words.trimmingCharacters(in: .whitespacesAndNewlines.union(.punctuationCharacters)) + "…"
    }
}

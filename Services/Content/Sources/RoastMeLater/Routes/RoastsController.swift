import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP
import Metrics

/// RoastMeLater: `/v1/roasts` (write one, the history), `/v1/roasts/catalogue`, `/v1/roasts/stats`,
/// `/v1/roasts/export`, `/v1/roasts/{roastId}` with its `favourite` and `reaction`.
struct RoastsController: Sendable {
    let roasting: Roasting
    let collections: Collections
    let cards: ShareCards
    /// The widget's roast of the day, which every `/v1/roasts/{roastId}` route also finds (REQ-WDG-003).
    let days: RoastsOfTheDay
    /// The app's link in share texts.
    let shareLink: String

    // MARK: Bodies

    struct RoastRequest: Decodable {
        var category: String?
        var spice: Int?
        var mood: String?
        /// `en` (default) or `vi`.
        var language: String?
        /// The device's IANA time zone: which local day the roast counts for (default UTC).
        var timeZone: String?
        /// A collection showing today (`GET /v1/roasts/collections`); the roast is then about one of its scenarios,
        /// whose category it takes (so `category` is left out).
        var collection: String?
        /// One of the collection's scenarios; without it, the first the user has not roasted yet.
        var scenario: String?
    }

    struct ReactionRequest: Decodable {
        var reaction: String?
    }

    struct ReactionBody: Encodable, Sendable {
        var name: String
        var emoji: String
        var reactedAt: Date?
    }

    struct RoastBody: Encodable, Sendable {
        var id: String
        var text: String
        var category: String
        var spice: Int
        var mood: String?
        var language: String
        /// Not written by a model: the local grammar wrote it.
        var artisanal: Bool
        var localDate: String
        var favourite: Bool
        var reaction: ReactionBody?
        /// The text to share, with the app's link (REQ-SHR-006).
        var shareText: String
        var createdAt: Date
        var collection: String?
        var scenario: String?

        init(_ roast: Roast, shareLink: String) {
            id = roast.id.lowercased
            text = roast.text
            category = roast.category
            spice = roast.spice
            mood = roast.mood
            language = roast.language.rawValue
            artisanal = roast.artisanal
            localDate = roast.localDate
            favourite = roast.favourite
            reaction = roast.reaction.map { ReactionBody(name: $0.rawValue, emoji: $0.emoji, reactedAt: roast.reactedAt) }
            shareText = Roasting.shareText(roast, link: shareLink)
            createdAt = roast.createdAt
            collection = roast.collection
            scenario = roast.scenario
        }
    }

    struct PageBody: Encodable, Sendable {
        var roasts: [RoastBody]
        /// Pass as `cursor` for the next page; absent on the last.
        var nextCursor: String?
    }

    struct CatalogueBody: Encodable, Sendable {
        struct Category: Encodable, Sendable {
            var id: String
            var icon: String
            var names: RoastNames
            var premium: Bool
            /// False for a premium category the user has not unlocked yet.
            var unlocked: Bool
        }
        struct Mood: Encodable, Sendable {
            var id: String
            var icon: String
            var names: RoastNames
        }
        struct Spice: Encodable, Sendable {
            var level: Int
            var names: RoastNames
        }
        struct CardTemplate: Encodable, Sendable {
            var id: String
            var names: RoastNames
            var premium: Bool
            var unlocked: Bool
        }
        var categories: [Category]
        var moods: [Mood]
        var spice: [Spice]
        var reactions: [ReactionBody]
        /// The share cards' templates (`GET /v1/roasts/{roastId}/card?template=`).
        var cardTemplates: [CardTemplate]
    }

    struct StatsBody: Encodable, Sendable {
        var total: Int
        var favourites: Int
        var reactions: [String: Int]
        var moods: [String: Int]
        var categories: [String: Int]
    }

    struct ExportBody: Encodable, Sendable {
        var app = "roastmelater"
        var exportedAt: Date
        var roasts: [RoastBody]
    }

    // MARK: Routes

    /// Mounted at `/v1/roasts`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.post(use: write)
        routes.get(use: history)
        routes.get("catalogue", use: catalogue)
        routes.get("stats", use: stats)
        routes.get("export", use: export)
        routes.get(":roastId", use: roast)
        routes.put(":roastId/favourite") { request, context in try await favourite(true, request, context) }
        routes.delete(":roastId/favourite") { request, context in try await favourite(false, request, context) }
        routes.put(":roastId/reaction", use: react)
        routes.get(":roastId/card", use: card)
        routes.post(":roastId/share", use: share)
        routes.delete(":roastId/reaction", use: unreact)
        return routes
    }

    @Sendable func write(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try user(context)
        let key = try IdempotencyKey.of(request)
        let body = try await request.decodeJSON(as: RoastRequest.self, context: context)
        let catalogue = roasting.catalogue
        var v = FieldValidator()
        var category = body.category.flatMap(catalogue.category)
        if let given = body.category {
            v.check(category != nil, "category", "'\(given)' is not a category; one of: \(catalogue.categories.map(\.id).joined(separator: ", "))")
            v.check(body.collection == nil, "category", "is left out with a collection: each scenario of a collection has its own")
        } else if body.collection == nil {
            v.fail("category", "is required: one of \(catalogue.categories.map(\.id).joined(separator: ", "))")
        }
        v.check(body.scenario == nil || body.collection != nil, "scenario", "needs its collection")
        let spice = body.spice.flatMap(catalogue.spice)
        if let given = body.spice { v.check(spice != nil, "spice", "must be 1–5, got \(given)") } else { v.fail("spice", "is required: 1 (gentle) to 5 (savage)") }
        let mood = body.mood.flatMap(catalogue.mood)
        if let given = body.mood {
            v.check(mood != nil, "mood", "'\(given)' is not a mood; one of: \(catalogue.moods.map(\.id).joined(separator: ", "))")
        }
        let language = RoastLanguage(rawValue: body.language ?? "en")
        v.check(language != nil, "language", "must be en or vi")
        let zone = Self.timeZone(body.timeZone, &v)
        try v.validate()
        guard let spice, let language, let zone else { throw Problem.invalid([]) }
        var order = RoastOrder(category: catalogue.categories[0], spice: spice, mood: mood, language: language, timeZone: zone)
        if let id = body.collection {
            switch try await collections.choose(collection: id, scenario: body.scenario, user: user, on: Roasting.localDate(roasting.clock.now(), in: zone)) {
            case .chosen(let collection, let scenario):
                order.collection = collection
                order.scenario = scenario
                order.scenarioNamed = body.scenario != nil
                category = catalogue.category(scenario.category)
            case .unknownCollection: throw Problem.invalid(field: "collection", "'\(id)' is not a collection; GET /v1/roasts/collections lists them")
            case .notRunning: throw Problem.invalid(field: "collection", "'\(id)' is not showing today", code: "collection_not_running")
            case .unknownScenario: throw Problem.invalid(field: "scenario", "'\(body.scenario ?? "")' is not a scenario of '\(id)'")
            }
        }
        guard let category else { throw Problem.invalid(field: "scenario", "is not available now: its category is no longer offered") }
        order.category = category
        switch try await roasting.roast(user: user, order: order, idempotencyKey: key) {
        case .written(let roast, let refusedName):
            // Anonymous counters only: how many, how many not by a model, how many model answers named someone.
            Counter(label: "lantern_roastmelater_roasts_total", dimensions: [("artisanal", String(roast.artisanal))]).increment()
            if refusedName { Counter(label: "lantern_roastmelater_names_refused_total").increment() }
            return try JSONResponse(RoastBody(roast, shareLink: shareLink), status: .created).response(from: request, context: context)
        case .replayed(let roast):
            return try JSONResponse(RoastBody(roast, shareLink: shareLink)).response(from: request, context: context)
        case .premiumLocked:
            throw Problem(status: 403, code: "premium_locked", title: "Forbidden",
                          detail: "The '\(category.id)' category unlocks with a 7-day streak.",
                          errors: [.init(field: "category", message: "unlocks with a 7-day streak (the premium_roasts reward)")])
        case .keyReused:
            throw Problem.invalid(field: "Idempotency-Key", "was used for another roast; send a new key for each roast", code: "idempotency_key_reused")
        }
    }

    @Sendable func history(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<PageBody> {
        let user = try user(context)
        let query = request.uri.queryParameters
        let catalogue = roasting.catalogue
        var v = FieldValidator()
        var filter = RoastFilter(limit: 20)
        if let mood = query["mood"].map(String.init) {
            v.check(catalogue.mood(mood) != nil, "mood", "'\(mood)' is not a mood; one of: \(catalogue.moods.map(\.id).joined(separator: ", "))")
            filter.mood = mood
        }
        if let category = query["category"].map(String.init) {
            v.check(catalogue.category(category) != nil, "category", "'\(category)' is not a category")
            filter.category = category
        }
        if let given = query["reaction"].map(String.init) {
            filter.reaction = RoastReaction(given: given)
            v.check(filter.reaction != nil, "reaction", "must be hilarious, fire, meh or dislike")
        }
        if let given = query["favourite"].map(String.init) {
            filter.favourite = ["true": true, "false": false][given]
            v.check(filter.favourite != nil, "favourite", "must be true or false")
        }
        if let collection = query["collection"].map(String.init) {
            v.check(RoastCollection.isSlug(collection), "collection", "'\(collection)' is not a collection id")
            filter.collection = collection
        }
        if let given = query["cursor"].map(String.init) {
            filter.before = UUID(uuidString: given)
            v.check(filter.before != nil, "cursor", "is not a cursor this API gave")
        }
        if let given = query["limit"].map(String.init) {
            let limit = Int(given) ?? 0
            v.check((1...100).contains(limit), "limit", "must be 1–100")
            filter.limit = limit
        }
        try v.validate()
        let page = try await roasting.records.page(of: user, filter)
        return JSONResponse(PageBody(roasts: page.roasts.map { RoastBody($0, shareLink: shareLink) }, nextCursor: page.next?.lowercased))
    }

    /// The categories (premium ones say whether this user has unlocked them), moods, spice levels and reactions,
    /// in English and Vietnamese; the app may keep it and revalidate with its ETag.
    @Sendable func catalogue(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try user(context)
        let catalogue = roasting.catalogue
        let unlocked = try await roasting.records.hasReward(RoastCatalogue.premiumReward, user: user)
        let body = CatalogueBody(
            categories: catalogue.categories.map { .init(id: $0.id, icon: $0.icon, names: $0.names, premium: $0.premium, unlocked: !$0.premium || unlocked) },
            moods: catalogue.moods.map { .init(id: $0.id, icon: $0.icon, names: $0.names) },
            spice: catalogue.spice.map { .init(level: $0.level, names: $0.names) },
            reactions: RoastReaction.allCases.map { ReactionBody(name: $0.rawValue, emoji: $0.emoji, reactedAt: nil) },
            cardTemplates: catalogue.cardTemplates.map { .init(id: $0.id, names: $0.names, premium: $0.premium, unlocked: !$0.premium || unlocked) })
        return try ConditionalResponse.json(body, for: request, cacheControl: "private, no-cache")
    }

    /// "Your Roast Stats": the user's reactions, moods and categories, counted.
    @Sendable func stats(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<StatsBody> {
        let stats = try await roasting.records.stats(of: try user(context))
        return JSONResponse(StatsBody(total: stats.total, favourites: stats.favourites, reactions: stats.reactions, moods: stats.moods,
                                      categories: stats.categories))
    }

    /// Every roast of the user with its reaction and favourite mark, as one JSON file to keep.
    @Sendable func export(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ExportBody> {
        let roasts = try await roasting.records.all(of: try user(context))
        return JSONResponse(ExportBody(exportedAt: roasting.clock.now(), roasts: roasts.map { RoastBody($0, shareLink: shareLink) }),
                            headers: [.contentDisposition: "attachment; filename=\"roastmelater-roasts.json\""])
    }

    @Sendable func roast(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<RoastBody> {
        let user = try user(context), id = try roastID(context)
        guard let roast = try await orToday(id, user, { try await roasting.records.roast(id, of: user) }) else { throw Self.notFound }
        return JSONResponse(RoastBody(roast, shareLink: shareLink))
    }

    /// `lookup`, and when it finds nothing, again once the widget's curated roast of today has been kept as the
    /// user's, if `id` is it (`RoastsOfTheDay.adoptCurated`): the widget's roast opens with its sharing options.
    private func orToday<T>(_ id: UUID, _ user: UUID, _ lookup: () async throws -> T?) async throws -> T? {
        if let found = try await lookup() { return found }
        guard try await days.adoptCurated(id, user: user) else { return nil }
        return try await lookup()
    }

    func favourite(_ favourite: Bool, _ request: Request, _ context: LanternRequestContext) async throws -> JSONResponse<RoastBody> {
        let user = try user(context), id = try roastID(context)
        guard let roast = try await orToday(id, user, { try await roasting.records.setFavourite(favourite, roast: id, user: user, at: roasting.clock.now()) }) else {
            throw Self.notFound
        }
        return JSONResponse(RoastBody(roast, shareLink: shareLink))
    }

    @Sendable func react(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<RoastBody> {
        let user = try user(context)
        let id = try roastID(context)
        let body = try await request.decodeJSON(as: ReactionRequest.self, context: context)
        guard let given = body.reaction else { throw Problem.invalid(field: "reaction", "is required: hilarious (😂), fire (🔥), meh (😐) or dislike (👎)") }
        guard let reaction = RoastReaction(given: given) else {
            throw Problem.invalid(field: "reaction", "'\(given)' is not a reaction; one of hilarious (😂), fire (🔥), meh (😐), dislike (👎)")
        }
        guard let roast = try await orToday(id, user, { try await roasting.records.setReaction(reaction, roast: id, user: user, at: roasting.clock.now()) }) else {
            throw Self.notFound
        }
        return JSONResponse(RoastBody(roast, shareLink: shareLink))
    }

    @Sendable func unreact(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<RoastBody> {
        let user = try user(context)
        guard let roast = try await roasting.records.setReaction(nil, roast: try roastID(context), user: user, at: roasting.clock.now()) else {
            throw Self.notFound
        }
        return JSONResponse(RoastBody(roast, shareLink: shareLink))
    }

    struct ShareRequest: Decodable {
        var channel: String?
        var template: String?
        var timeZone: String?
    }

    struct ShareBody: Encodable, Sendable {
        var roastId: String
        var channel: String
        /// How often this roast was shared.
        var shares: Int
    }

    static let channels = ["instagram", "facebook", "tiktok", "zalo", "messages", "copy", "other"]

    /// The roast's share card as PNG: `template` (default `ember`) and `format` `story` (1080×1920, default) or `post`
    /// (1080×1080). A card never changes: cached by the app for a year, revalidated by its ETag.
    @Sendable func card(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try user(context)
        let id = try roastID(context)
        let query = request.uri.queryParameters
        var v = FieldValidator()
        let templateID = query["template"].map(String.init) ?? "ember"
        let template = roasting.catalogue.cardTemplate(templateID)
        v.check(template != nil, "template", "'\(templateID)' is not a template; one of: \(roasting.catalogue.cardTemplates.map(\.id).joined(separator: ", "))")
        let formatText = query["format"].map(String.init) ?? "story"
        let format = ShareCard.Format(rawValue: formatText)
        v.check(format != nil, "format", "must be story (1080×1920) or post (1080×1080)")
        try v.validate()
        guard let template, let format else { throw Problem.invalid([]) }
        var outcome = try await cards.card(id, user: user, template: template, format: format)
        if case .roastNotFound = outcome, try await days.adoptCurated(id, user: user) {
            outcome = try await cards.card(id, user: user, template: template, format: format)
        }
        switch outcome {
        case .roastNotFound: throw Self.notFound
        case .premiumLocked:
            throw Problem(status: 403, code: "premium_locked", title: "Forbidden", detail: "The '\(template.id)' template unlocks with a 7-day streak.",
                          errors: [.init(field: "template", message: "unlocks with a 7-day streak (the premium_roasts reward)")])
        case .renderLimited(let retryAfter):
            throw cards.renders.problem(retryAfter: retryAfter)
        case .card(let png, let etag):
            var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, max-age=31536000, immutable",
                                       .contentDisposition: "inline; filename=\"roast-\(template.id)-\(format.rawValue).png\""]
            if ConditionalResponse.matches(request.headers[.ifNoneMatch], etag) { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = "image/png"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: png)))
        }
    }

    /// Records that the user shared the roast (the app calls it once the share sheet completes): `roast.shared`.
    @Sendable func share(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<ShareBody> {
        let user = try user(context)
        let id = try roastID(context)
        let body = try await request.decodeJSON(as: ShareRequest.self, context: context)
        var v = FieldValidator()
        let channel = body.channel ?? ""
        v.check(Self.channels.contains(channel), "channel", body.channel == nil ? "is required: one of \(Self.channels.joined(separator: ", "))"
                                                                                : "'\(channel)' is not a channel; one of \(Self.channels.joined(separator: ", "))")
        if let template = body.template {
            v.check(roasting.catalogue.cardTemplate(template) != nil, "template", "'\(template)' is not a template")
        }
        let zone = Self.timeZone(body.timeZone, &v)
        try v.validate()
        guard let zone else { throw Problem.invalid([]) }
        let now = roasting.clock.now()
        guard let roast = try await orToday(id, user, {
            try await roasting.records.share(id, user: user, channel: channel, template: body.template, localDate: Roasting.localDate(now, in: zone), at: now)
        }) else { throw Self.notFound }
        return JSONResponse(ShareBody(roastId: roast.id.lowercased, channel: channel, shares: roast.shares))
    }

    static let notFound = Problem.notFound("No such roast.", code: "roast_not_found")

    /// A device's IANA time zone (`Asia/Ho_Chi_Minh`), UTC when none is given: which local day a request is about.
    static func timeZone(_ given: String?, _ v: inout FieldValidator) -> TimeZone? {
        let zone = given.map { TimeZoneName.isValid($0) ? TimeZone(identifier: $0) : nil } ?? TimeZone(identifier: "UTC")
        v.check(zone != nil, "timeZone", "must be an IANA time zone such as Asia/Ho_Chi_Minh")
        return zone
    }

    private func roastID(_ context: LanternRequestContext) throws -> UUID {
        guard let text = context.parameters.get("roastId"), let id = UUID(uuidString: text) else { throw Self.notFound }
        return id
    }

    private func user(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .roastmelater, otherwise: .forbidden("Roasts are a RoastMeLater feature.", code: "roasts_not_available"))
    }
}

import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// RoastMeLater's home-screen widget (REQ-WDG): `GET /v1/widgets/roastmelater?size=small|medium|large` (the roast of
/// the user's day, in one call, never a model call), and `GET`/`PUT /v1/widgets/roastmelater/settings` (categories,
/// maximum spice, language, time zone).
struct WidgetController: Sendable {
    let days: RoastsOfTheDay
    let shareLink: String

    enum Size: String, CaseIterable {
        case small, medium, large
    }

    struct RoastBody: Encodable, Sendable {
        var id: String
        var date: String
        /// Small: at most 60 characters, cut at a word with "…".
        var preview: String
        /// Medium and large.
        var text: String?
        var category: String
        var categoryIcon: String
        var categoryName: String
        /// Medium and large.
        var spice: Int?
        var language: String
        var artisanal: Bool
        /// No roast of the day was made for this day (the widget is not configured, or it is not made yet): a
        /// curated roast from the local grammar, the same all day.
        var curated: Bool
        /// Medium and large: what the share sheet shares (REQ-WDG-003).
        var shareText: String?
    }

    struct StreakBody: Encodable, Sendable {
        /// Days in a row as of the user's today (0 when broken).
        var current: Int
        var longest: Int
        /// Alive, but nothing counted today yet.
        var atRisk: Bool
    }

    struct QuickAction: Encodable, Sendable {
        var id: String
        var title: String
        /// A deep link into the app.
        var url: String
    }

    struct WidgetBody: Encodable, Sendable {
        var size: String
        /// The user's local day.
        var date: String
        /// The next local midnight: when the widget's timeline should ask again (REQ-WDG-002).
        var refreshAt: Date
        var configured: Bool
        var roast: RoastBody
        /// Large only.
        var streak: StreakBody?
        var quickActions: [QuickAction]?
    }

    struct SettingsRequest: Decodable {
        var categories: [String]?
        var maxSpice: Int?
        var language: String?
        var timeZone: String?
    }

    struct SettingsBody: Encodable, Sendable {
        var categories: [String]
        var maxSpice: Int
        var language: String
        var timeZone: String
        /// False until the user saves settings (these are then the defaults).
        var configured: Bool
    }

    /// Mounted at `/v1/widgets/roastmelater`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: widget)
        routes.get("settings", use: settings)
        routes.put("settings", use: saveSettings)
        return routes
    }

    @Sendable func widget(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try user(context)
        let given = request.uri.queryParameters["size"].map(String.init) ?? "medium"
        guard let size = Size(rawValue: given) else { throw Problem.invalid(field: "size", "must be small, medium or large") }
        let (state, roast, curated, today) = try await days.view(of: user)
        let catalogue = days.catalogue
        let category = catalogue.category(roast.category)
        let language = roast.language
        let full = size != .small
        var body = WidgetBody(
            size: size.rawValue, date: today.description, refreshAt: today.adding(days: 1).start(in: (state.settings ?? .standard(catalogue)).zone),
            configured: state.settings != nil,
            roast: RoastBody(id: roast.id.lowercased, date: roast.day.description, preview: RoastsOfTheDay.preview(roast.text),
                             text: full ? roast.text : nil, category: roast.category, categoryIcon: category?.icon ?? "flame.fill",
                             categoryName: category?.names[language] ?? roast.category, spice: full ? roast.spice : nil,
                             language: language.rawValue, artisanal: roast.artisanal, curated: curated,
                             shareText: full ? Roasting.shareText(roast.text, language: language, link: shareLink) : nil))
        if size == .large {
            let streak = state.streak ?? StreakCopy(current: 0, longest: 0, lastActiveDay: nil)
            body.streak = StreakBody(current: streak.current(on: today), longest: streak.longest, atRisk: streak.atRisk(on: today))
            body.quickActions = [
                QuickAction(id: "roast", title: Self.actions["roast"]?[language] ?? "", url: "roastmelater://roast/new"),
                QuickAction(id: "share", title: Self.actions["share"]?[language] ?? "", url: "roastmelater://widget/\(roast.day.description)/share"),
                QuickAction(id: "collections", title: Self.actions["collections"]?[language] ?? "", url: "roastmelater://collections"),
            ]
        }
        return try ConditionalResponse.json(body, for: request, cacheControl: "private, no-cache")
    }

    @Sendable func settings(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<SettingsBody> {
        let user = try user(context)
        let state = try await days.records.widgetState(of: user, at: days.clock.now())
        let settings = state.settings ?? .standard(days.catalogue)
        return JSONResponse(Self.body(settings, configured: state.settings != nil))
    }

    @Sendable func saveSettings(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<SettingsBody> {
        let user = try user(context)
        let body = try await request.decodeJSON(as: SettingsRequest.self, context: context)
        let catalogue = days.catalogue
        var v = FieldValidator()
        let categories = body.categories ?? []
        if body.categories == nil {
            v.fail("categories", "is required: 1 or more of \(catalogue.categories.map(\.id).joined(separator: ", "))")
        } else {
            v.check(!categories.isEmpty && categories.count <= catalogue.categories.count && Set(categories).count == categories.count,
                    "categories", "must list 1–\(catalogue.categories.count) distinct categories")
            for (index, id) in categories.enumerated() where catalogue.category(id) == nil {
                v.fail("categories[\(index)]", "'\(id)' is not a category; one of: \(catalogue.categories.map(\.id).joined(separator: ", "))")
            }
        }
        if let spice = body.maxSpice { v.check((1...5).contains(spice), "maxSpice", "must be 1–5, got \(spice)") } else { v.fail("maxSpice", "is required: 1–5") }
        let language = RoastLanguage(rawValue: body.language ?? "en")
        v.check(language != nil, "language", "must be en or vi")
        let zone = RoastsController.timeZone(body.timeZone, &v)
        try v.validate()
        guard let maxSpice = body.maxSpice, let language, zone != nil else { throw Problem.invalid([]) }
        let settings = WidgetSettings(categories: categories, maxSpice: maxSpice, language: language, timeZone: body.timeZone ?? "UTC")
        switch try await days.save(settings, user: user) {
        case .saved(let saved): return JSONResponse(Self.body(saved, configured: true))
        case .premiumLocked(let id):
            throw Problem(status: 403, code: "premium_locked", title: "Forbidden", detail: "The '\(id)' category unlocks with a 7-day streak.",
                          errors: [.init(field: "categories", message: "'\(id)' unlocks with a 7-day streak (the premium_roasts reward)")])
        }
    }

    static func body(_ settings: WidgetSettings, configured: Bool) -> SettingsBody {
        SettingsBody(categories: settings.categories, maxSpice: settings.maxSpice, language: settings.language.rawValue, timeZone: settings.timeZone,
                     configured: configured)
    }

    static let actions: [String: RoastNames] = [
        "roast": RoastNames(en: "Roast me again", vi: "Roast tiếp đi"),
        "share": RoastNames(en: "Share", vi: "Chia sẻ"),
        "collections": RoastNames(en: "Collections", vi: "Bộ sưu tập"),
    ]

    private func user(_ context: LanternRequestContext) throws -> UUID {
        try context.requireUser(of: .roastmelater, otherwise: .forbidden("Roasts are a RoastMeLater feature.", code: "roasts_not_available"))
    }
}

import ContentKit
import Foundation
import Hummingbird
import LanternContracts
import LanternCore
import LanternHTTP

/// `GET /v1/roasts/collections`: the collections showing on the user's day (or on `date`) (REQ-COL-001, -003, -004), with their
/// scenarios, the user's progress and, while a seasonal one runs, the home screen's banner (REQ-COL-005). The app
/// keeps the answer to work offline and revalidates it with its `ETag`; operators' changes show within a minute.
struct CollectionsController: Sendable {
    let collections: Collections

    struct ScenarioBody: Encodable, Sendable {
        var id: String
        var names: RoastNames
        var category: String
        /// This user has roasted it.
        var roasted: Bool
    }

    struct CollectionBody: Encodable, Sendable {
        var id: String
        /// `permanent`, `monthly` or `seasonal`.
        var kind: String
        var names: RoastNames
        var descriptions: RoastNames
        var icon: String
        var themeColor: String
        var preview: RoastNames
        var scenarios: [ScenarioBody]
        /// How many scenarios it has (its "roast count", REQ-COL-003).
        var roastCount: Int
        var roasted: Int
        /// Every scenario roasted: the collection's badge is earned (gamification awards it).
        var completed: Bool
        /// The local dates it shows between; absent for a permanent one.
        var startDate: String?
        var endDate: String?
        var version: Int
    }

    struct BannerBody: Encodable, Sendable {
        var collectionId: String
        var text: RoastNames
        var themeColor: String
        var endDate: String
    }

    struct ListBody: Encodable, Sendable {
        /// The user's local day the list is for.
        var date: String
        /// The seasonal collection running now, if any (the soonest to end when several are).
        var banner: BannerBody?
        var collections: [CollectionBody]
    }

    /// Mounted at `/v1/roasts/collections`.
    var routes: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: list)
        return routes
    }

    @Sendable func list(_ request: Request, context: LanternRequestContext) async throws -> Response {
        let user = try context.requireUser(of: .roastmelater, otherwise: .forbidden("Roasts are a RoastMeLater feature.", code: "roasts_not_available"))
        var v = FieldValidator()
        let zone = RoastsController.timeZone(request.uri.queryParameters["timeZone"].map(String.init), &v)
        let asked = request.uri.queryParameters["date"].map(String.init)
        if let asked {
            v.check(LocalDay(asked).map { (1901...2099).contains($0.year) } ?? false, "date", "must be a real date YYYY-MM-DD between 1901 and 2099")
        }
        try v.validate()
        guard let zone else { throw Problem.invalid([]) }
        // Another day than today lets the app fill its offline cache ahead (a seasonal collection about to start).
        let date = asked ?? Roasting.localDate(collections.clock.now(), in: zone)
        let showing = try await collections.showing(to: user, on: date)
        let body = ListBody(
            date: date,
            banner: showing.filter { $0.collection.banner != nil }.min { $0.window.until < $1.window.until }.flatMap { item in
                item.collection.banner.map { BannerBody(collectionId: item.collection.id, text: $0, themeColor: item.collection.themeColor, endDate: item.window.until) }
            },
            collections: showing.map { item in
                let c = item.collection
                let permanent = c.schedule == .permanent
                return CollectionBody(
                    id: c.id, kind: c.schedule.kind, names: c.names, descriptions: c.descriptions, icon: c.icon, themeColor: c.themeColor,
                    preview: c.preview,
                    scenarios: c.scenarios.map { ScenarioBody(id: $0.id, names: $0.names, category: $0.category, roasted: item.roasted.contains($0.id)) },
                    roastCount: c.scenarios.count, roasted: c.scenarios.filter { item.roasted.contains($0.id) }.count, completed: item.completed,
                    startDate: permanent ? nil : item.window.from, endDate: permanent ? nil : item.window.until, version: item.version)
            })
        // A minute in the app's cache at most: an operator's change reaches every app within it.
        return try ConditionalResponse.json(body, for: request, cacheControl: "private, max-age=60")
    }
}

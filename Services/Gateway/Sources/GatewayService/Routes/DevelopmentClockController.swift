import Foundation
import Hummingbird
import LanternCore
import LanternHTTP
import Logging

/// `/development/clock` on the gateway's operations port: time travel for a development stack, as Stripe's test
/// clocks. `GET` says the stack's time; `POST {"days": 1}` (or `hours`, `seconds`, added up) moves it forward for
/// every process (each follows within a second) and answers the new time. Anywhere but `LANTERN_ENVIRONMENT=development`
/// both are 403 `development_only`: a deployment's clock is the machine's.
struct DevelopmentClockController: Sendable {
    let store: DevelopmentClockStore
    let environment: ProcessSettings.Environment
    let clock: WallClock
    /// The service's logger: the operations router's request logger would add a second request id.
    let logger: Logger

    /// At most ten years at a time.
    static let longestStep: Double = 10 * 366 * 86_400

    struct Answer: Encodable, Sendable {
        /// The stack's time (what every service's clock reads).
        var now: Date
        /// How far ahead of the machine's time it runs.
        var offsetSeconds: Double
    }

    struct Advance: Decodable {
        var days: Double?
        var hours: Double?
        var seconds: Double?
    }

    var endpoints: RouteCollection<LanternRequestContext> {
        let routes = RouteCollection(context: LanternRequestContext.self)
        routes.get(use: show)
        routes.post(use: advance)
        return routes
    }

    @Sendable func show(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Answer> {
        try allowed()
        DevelopmentTime.advance(toMilliseconds: try await store.offset())
        return JSONResponse(Answer(now: clock.now(), offsetSeconds: DevelopmentTime.offset))
    }

    @Sendable func advance(_ request: Request, context: LanternRequestContext) async throws -> JSONResponse<Answer> {
        try allowed()
        let body = try await request.decodeJSON(as: Advance.self, context: context)
        var v = FieldValidator()
        for (field, value) in [("days", body.days), ("hours", body.hours), ("seconds", body.seconds)] {
            if let value { v.check(value.isFinite && value >= 0, field, "must be a number of \(field) to move forward (the clock never goes back)") }
        }
        let step = (body.days ?? 0) * 86_400 + (body.hours ?? 0) * 3_600 + (body.seconds ?? 0)
        v.check(step > 0 || !v.errors.isEmpty, "days", "say how far to move the clock: days, hours or seconds (more than zero)")
        v.check(step <= Self.longestStep, "days", "at most ten years at a time")
        try v.validate()
        let offset = try await store.advance(by: Int64((step * 1000).rounded()))
        DevelopmentTime.advance(toMilliseconds: offset)
        logger.notice("development clock moved forward", metadata: ["by_seconds": "\(step)", "offset_seconds": "\(Double(offset) / 1000)"])
        return JSONResponse(Answer(now: clock.now(), offsetSeconds: Double(offset) / 1000))
    }

    private func allowed() throws {
        guard environment == .development else {
            throw Problem.forbidden("Time travel is for development stacks only (LANTERN_ENVIRONMENT=development).", code: "development_only")
        }
    }
}

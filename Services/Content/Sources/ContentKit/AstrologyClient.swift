import Foundation
import LanternContracts
import LanternCore
import LanternService

/// astrology's internal routes (`AstrologyEndpoint`) through content's `InternalClient`: Ba Zi for Lucky Day, natal
/// charts (JSON and SVG) for AstroSvitla. The birth data passes through to astrology, which validates it; its
/// refusal comes back as content's 422 with each field under `birth.`; astrology unavailable is
/// `InternalUnavailable`, which the routes answer with 503 `astrology_unavailable`.
public struct AstrologyClient: Sendable {
    let client: InternalClient

    public init(client: InternalClient) { self.client = client }

    /// The Four Pillars; without a birth time, those of noon (Lucky Day Req 3.6: its profile marks the hour
    /// pillar as assumed).
    public func bazi(_ birth: BirthData) async throws -> BaziAnswer {
        try await call(AstrologyEndpoint.bazi, BaziRequest(date: birth.date, time: birth.time ?? "12:00", place: birth.place, dayBoundary: "23:00"))
    }

    /// The chart; with no birth time astrology casts for noon and marks the houses unreliable.
    public func natalChart(_ birth: BirthData) async throws -> NatalChartSummary {
        try await call(AstrologyEndpoint.natalChart, birth)
    }

    /// The chart drawn as SVG (light theme, for paper); with `fingerprint`, only if the birth data's chart has that
    /// fingerprint: astrology checks it before casting, and a mismatch is `ChartMismatch`.
    public func natalChartPicture(_ birth: BirthData, fingerprint: String? = nil) async throws -> String {
        do {
            return try await client.call(AstrologyEndpoint.natalChartSVG, birth,
                                         query: [("theme", "light")] + (fingerprint.map { [("fingerprint", $0)] } ?? []))
        } catch let refusal as InternalRefusal where refusal.problem.code == AstrologyEndpoint.fingerprintMismatch {
            throw ChartMismatch()
        } catch let refusal as InternalRefusal {
            throw Self.problem(refusal)
        }
    }

    /// The festivals of `year` in the `calendar` (`vietnamese` or `chinese`) lunisolar calendar. A refusal here is
    /// the caller's mistake, not the user's: it is `InternalUnavailable` like an outage.
    public func festivals(year: Int, calendar: String) async throws -> FestivalCalendar {
        do { return try await client.call(AstrologyEndpoint.festivals, query: [("calendar", calendar), ("year", String(year))]) } catch let refusal as InternalRefusal {
            throw InternalUnavailable(service: refusal.service, reason: refusal.description)
        }
    }

    private func call<Body, Answer>(_ route: InternalRoute<Body, Answer>, _ body: Body, query: [(String, String)] = []) async throws -> Answer {
        do { return try await client.call(route, body, query: query) } catch let refusal as InternalRefusal {
            throw Self.problem(refusal)
        }
    }

    /// A refusal of the birth data is the app's 422 under `birth.`; any other is astrology unavailable.
    private static func problem(_ refusal: InternalRefusal) -> any Error {
        [400, 422].contains(refusal.problem.status) ? refusal.invalid(under: "birth")
            : InternalUnavailable(service: refusal.service, reason: refusal.description)
    }
}

/// The birth data is not that of the expected chart (`AstrologyClient.natalChartPicture(_:fingerprint:)`).
public struct ChartMismatch: Error, Sendable {
    public init() {}
}

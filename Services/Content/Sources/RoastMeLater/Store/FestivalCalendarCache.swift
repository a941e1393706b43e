import ContentKit
import Foundation
import LanternService
import Logging
import Synchronization

/// The Vietnamese calendar's festival dates, read from astrology (`AstrologyEndpoint.festivals`, through content's
/// one internal client) and kept in memory: a year's dates never change, so each is asked for once per process —
/// never copied into a table of this service. A failure is not kept: the next request asks again.
final class FestivalCalendarCache: FestivalDates {
    let astrology: AstrologyClient
    let logger: Logger
    private let years = Mutex<[Int: [String: [String]]]>([:])

    init(astrology: AstrologyClient, logger: Logger) {
        self.astrology = astrology
        self.logger = logger
    }

    func around(year: Int) async -> [String: [String]]? {
        var merged: [String: [String]] = [:]
        for y in (year - 1)...(year + 1) {
            guard let dates = await dates(of: y) else { return nil }
            for (key, list) in dates { merged[key, default: []] += list }
        }
        return merged
    }

    private func dates(of year: Int) async -> [String: [String]]? {
        guard (1900...2100).contains(year) else { return [:] }
        if let known = years.withLock({ $0[year] }) { return known }
        do {
            let calendar = try await astrology.festivals(year: year, calendar: "vietnamese")
            var dates: [String: [String]] = [:]
            for festival in calendar.festivals { dates[festival.key, default: []].append(festival.date) }
            years.withLock { $0[year] = dates }
            return dates
        } catch {
            logger.warning("the festival dates of \(year) are unknown for now; seasonal collections stay hidden", metadata: ["error": "\(error)"])
            return nil
        }
    }
}

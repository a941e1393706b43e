import Foundation
import LanternLLM

/// The five life areas a report speaks to (FR-021).
enum LifeArea: String, CaseIterable, Codable, Sendable, Comparable {
    case general, finances, career, relationships, health

    static func < (a: LifeArea, b: LifeArea) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// The languages AstroSvitla writes in: the app's UI language (FR-030); anything else is English (product decision).
enum ReportLanguage: String, CaseIterable, Codable, Sendable {
    case en, uk

    var textLanguage: TextLanguage { self == .uk ? .ukrainian : .english }

    /// The first of `Accept-Language`'s languages (by q-value) that AstroSvitla has, else English.
    static func preferred(acceptLanguage header: String?) -> ReportLanguage {
        guard let header else { return .en }
        let ranked = header.split(separator: ",").compactMap { part -> (String, Double)? in
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first, !tag.isEmpty else { return nil }
            let q = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag.lowercased(), q)
        }
        for (tag, q) in ranked.sorted(by: { $0.1 > $1.1 }) where q > 0 {
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            if let language = ReportLanguage(rawValue: primary) { return language }
        }
        return .en
    }
}

/// A text in both languages.
struct Localized: Codable, Sendable, Equatable {
    var en: String
    var uk: String

    subscript(_ language: ReportLanguage) -> String { language == .uk ? uk : en }
}

/// What AstroSvitla sells (FR-022, FR-042): one report per area, priced in USD, each an App Store consumable
/// whose product id is `<bundle id>.report.<area>`.
struct ReportCatalogue: Sendable {
    struct Area: Decodable, Sendable {
        var id: LifeArea
        /// An SF Symbols name.
        var icon: String
        /// USD, as the App Store product is priced ("9.99").
        var price: String
        var title: Localized
        var description: Localized
    }

    let areas: [Area]
    let bundleId: String

    init(areas: [Area], bundleId: String) throws {
        guard Set(areas.map(\.id)) == Set(LifeArea.allCases), areas.count == LifeArea.allCases.count else {
            throw CatalogueError("the catalogue must list each of the five areas once")
        }
        self.areas = areas
        self.bundleId = bundleId
    }

    func area(_ id: LifeArea) -> Area { areas.first { $0.id == id }! }

    func productId(for area: LifeArea) -> String { "\(bundleId).report.\(area.rawValue)" }

    func area(forProduct productId: String) -> LifeArea? { LifeArea.allCases.first { self.productId(for: $0) == productId } }
}

struct CatalogueError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

import Foundation

/// What the app may show for each state: its name and a one-line caption (`Catalogue/states.json`, English as all of
/// Symbi's texts). Loaded once; a missing state or a caption that reads as health advice stops the start.
public struct StateCatalogue: Sendable {
    public struct Entry: Codable, Sendable, Equatable {
        public var name: String
        public var caption: String
    }

    public let entries: [PetState: Entry]

    public init(entries: [PetState: Entry]) throws {
        for state in PetState.allCases {
            guard let entry = entries[state] else { throw CatalogueError("states.json has no entry for \(state.rawValue)") }
            for text in [entry.name, entry.caption] {
                if let found = AdviceGuard.finding(in: text) { throw CatalogueError("states.json: \(state.rawValue) reads as health advice ('\(found)')") }
            }
        }
        self.entries = entries
    }

    public static func load(_ url: URL) throws -> StateCatalogue {
        let raw = try JSONDecoder().decode([String: Entry].self, from: Data(contentsOf: url))
        var entries: [PetState: Entry] = [:]
        for (key, entry) in raw {
            guard let state = PetState(rawValue: key) else { throw CatalogueError("states.json names an unknown state '\(key)'") }
            entries[state] = entry
        }
        return try StateCatalogue(entries: entries)
    }

    public func entry(_ state: PetState) -> Entry { entries[state] ?? Entry(name: state.label, caption: "") }
}

public struct CatalogueError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

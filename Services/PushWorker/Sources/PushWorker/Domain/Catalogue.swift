import Foundation

/// The texts of notifications, per language: `Catalogue/<language>.json`, each key a title and a body with
/// `{placeholders}` filled from the request's `args`.
///
/// A device's locale (`uk-UA`) picks the most specific language the catalogue has (`uk-ua`, then `uk`), else
/// English; a key missing in a language falls back to English too, so a new message needs only its `en` text.
public struct Catalogue: Sendable {
    public static let defaultLanguage = "en"

    public struct Message: Codable, Sendable, Equatable {
        public var title: String
        public var body: String
    }

    public enum RenderError: Error, Equatable, CustomStringConvertible {
        case unknownKey(String)
        case missingArgument(key: String, argument: String)
        public var description: String {
            switch self {
            case .unknownKey(let key): "catalogue has no message '\(key)'"
            case .missingArgument(let key, let argument): "message '\(key)' needs argument '\(argument)'"
            }
        }
    }

    /// language → key → message
    public let languages: [String: [String: Message]]

    public init(languages: [String: [String: Message]]) {
        self.languages = languages
    }

    /// The catalogue shipped with the worker.
    public static func bundled() throws -> Catalogue {
        guard let folder = Bundle.module.url(forResource: "Catalogue", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile)
        }
        var languages: [String: [String: Message]] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) where file.pathExtension == "json" {
            languages[file.deletingPathExtension().lastPathComponent.lowercased()] =
                try JSONDecoder().decode([String: Message].self, from: Data(contentsOf: file))
        }
        return Catalogue(languages: languages)
    }

    /// The catalogue language for a device locale such as `uk`, `uk-UA` or `pt_BR`.
    public func language(for locale: String?) -> String {
        guard let locale = locale?.lowercased().replacingOccurrences(of: "_", with: "-"), !locale.isEmpty else { return Self.defaultLanguage }
        var parts = locale.split(separator: "-").map(String.init)
        while !parts.isEmpty {
            let candidate = parts.joined(separator: "-")
            if languages[candidate] != nil { return candidate }
            parts.removeLast()
        }
        return Self.defaultLanguage
    }

    public func render(_ key: String, args: [String: String], locale: String?) throws -> Message {
        let language = language(for: locale)
        guard let message = languages[language]?[key] ?? languages[Self.defaultLanguage]?[key] else { throw RenderError.unknownKey(key) }
        return Message(title: try Self.fill(message.title, args, key: key, language: language),
                       body: try Self.fill(message.body, args, key: key, language: language))
    }

    /// Placeholder names used by a text, in order.
    public static func placeholders(in text: String) -> [String] {
        var names: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// An argument may come in several languages (`badge.vi` beside `badge`: a badge's name the producer knows in
    /// each language); the one of the device's language wins.
    static func fill(_ text: String, _ args: [String: String], key: String, language: String = defaultLanguage) throws -> String {
        var result = text
        for name in placeholders(in: text) {
            guard let value = args["\(name).\(language)"] ?? args[name] else { throw RenderError.missingArgument(key: key, argument: name) }
            result = result.replacingOccurrences(of: "{\(name)}", with: value)
        }
        return result
    }
}

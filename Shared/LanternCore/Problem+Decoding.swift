import Foundation

extension Problem {
    /// Maps a `DecodingError` to 400 (not JSON) or 422 (JSON of the wrong shape), naming the field.
    public init(decoding error: DecodingError) {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            var keys = context.codingPath
            if let key { keys.append(key) }
            let parts = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return parts.reduce("") { acc, part in part.hasPrefix("[") ? acc + part : (acc.isEmpty ? part : acc + "." + part) }
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .invalid(field: path(context, key), "is required")
        case .typeMismatch(let type, let context):
            let field = path(context)
            self = field.isEmpty ? .badRequest("The body must be a JSON object.", code: "malformed_json")
                                 : .invalid(field: field, "must be \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            let field = path(context)
            // `null` as the whole body names no field: it is not the JSON object every endpoint takes.
            self = field.isEmpty ? .badRequest("The body must be a JSON object, not null.", code: "malformed_json")
                                 : .invalid(field: field, "must be \(Self.describe(type)), not null")
        case .dataCorrupted(let context):
            let field = path(context)
            if field.isEmpty {
                self = .badRequest("The body is not valid JSON.", code: "malformed_json")
            } else {
                self = .invalid(field: field, Self.readable(context.debugDescription))
            }
        @unknown default:
            self = .badRequest("The body could not be read.", code: "malformed_json")
        }
    }

    /// Foundation's own wording for a value it could not take ("Cannot initialize Provider from invalid String value
    /// facebook") said for a person; the messages Lantern's decoders write themselves pass as they are.
    static func readable(_ description: String) -> String {
        if description.hasPrefix("Cannot initialize "), let value = description.range(of: " value ") {
            return "is not one of the accepted values ('\(description[value.upperBound...])')"
        }
        if description.contains("does not fit in") { return "is out of range" }
        return description
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "an array"
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return "a valid \(name)"
        }
    }
}

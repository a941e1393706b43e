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

extension Problem {
    /// Decodes a request body, every failure a problem that names the field (`init(decoding:)`).
    ///
    /// Foundation's `JSONDecoder` reports a valid number that does not fit the field's type (`2.5` or `1e23` where a
    /// whole number is due) as "not valid JSON" with no coding path, which would be a 400 for a body that is valid
    /// JSON. That case is told apart here: the body is parsed as a tree, and each number that is not a whole `Int`
    /// is set to 0 in turn until the decoding gets past it; that number's field is the one named (422
    /// `validation_failed`, "must be a whole number"). Only failing bodies pay for it, and only small ones (64 KiB,
    /// at most 32 numbers tried): a larger body that fails so is answered 400, as before.
    public static func decodeBody<T: Decodable>(_ type: T.Type, from data: Data, decoder: JSONDecoder) throws -> T {
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, data.count <= 65_536,
               let field = wholeNumberField(T.self, in: data, decoder: decoder) {
                throw Problem.invalid(field: field, "must be a whole number")
            }
            throw Problem(decoding: error)
        }
    }

    /// The path (`days[0].steps`) of the number in `data` that stops `T` from decoding because it is not a whole
    /// number in `Int`'s range; nil when the body is not valid JSON or no such number is the cause.
    static func wholeNumberField<T: Decodable>(_ type: T.Type, in data: Data, decoder: JSONDecoder) -> String? {
        guard let tree = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        // Numbers that cannot be an `Int` first, then the rest (`1e5` is whole, but not every decoder takes it as
        // one); a bounded number of attempts, so that a large failing body costs a few decodings, not one per number.
        var unlikely: [[JSONPathPart]] = [], others: [[JSONPathPart]] = []
        func walk(_ value: Any, _ path: [JSONPathPart]) {
            switch value {
            case let object as [String: Any]: for (key, item) in object.sorted(by: { $0.key < $1.key }) { walk(item, path + [.key(key)]) }
            case let array as [Any]: for (index, item) in array.enumerated() { walk(item, path + [.index(index)]) }
            case is Bool: break
            case let number as NSNumber:
                let double = number.doubleValue
                if double.rounded() != double || abs(double) >= 9.2e18 { unlikely.append(path) } else { others.append(path) }
            default: break
            }
        }
        walk(tree, [])
        // A field has a name: the body itself (a bare number, or what JSONSerialization takes that JSONDecoder does not,
        // such as `2` followed by a NUL) is no field to name.
        for path in (unlikely + others).filter({ !$0.isEmpty }).prefix(32) {
            guard let replaced = try? JSONSerialization.data(withJSONObject: setting(0, at: path[...], in: tree), options: [.fragmentsAllowed])
            else { continue }
            do {
                _ = try decoder.decode(T.self, from: replaced)
                return describe(path)
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                continue
            } catch {
                return describe(path)  // past this number, the decoding fails elsewhere: this one was the cause
            }
        }
        return nil
    }

    enum JSONPathPart { case key(String), index(Int) }

    private static func setting(_ new: Any, at path: ArraySlice<JSONPathPart>, in value: Any) -> Any {
        guard let first = path.first else { return new }
        switch (first, value) {
        case (.key(let key), var object as [String: Any]):
            object[key] = object[key].map { setting(new, at: path.dropFirst(), in: $0) }
            return object
        case (.index(let index), var array as [Any]) where array.indices.contains(index):
            array[index] = setting(new, at: path.dropFirst(), in: array[index])
            return array
        default:
            return value
        }
    }

    private static func describe(_ path: [JSONPathPart]) -> String {
        path.reduce("") { text, part in
            switch part {
            case .key(let key): text.isEmpty ? key : text + "." + key
            case .index(let index): text + "[\(index)]"
            }
        }
    }
}

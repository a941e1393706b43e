import Foundation
import LanternContracts
import LanternCore

/// Request bodies and event envelopes go through `JSONDecoder.lantern`, and a failure becomes a problem through
/// `Problem.decodeBody` (what `decodeJSON` calls: `Problem(decoding:)`, and the search for a number that is not whole
/// where one is due). Whatever the bytes: a value or a problem of 400, or 422 naming a field; a `JSONValue` (event
/// payloads, Socket.IO auth) that is read can be written again and reads back equal.
enum JSONChecks {
    static func check(_ bytes: [UInt8]) throws(FuzzFinding) -> String {
        let data = Data(bytes)
        let envelope = try decodes(EventEnvelope.self, data)
        try decodes(Problem.self, data)
        try decodes(Counts.self, data)
        guard let value = try decodes(JSONValue.self, data) else { return "not JSON" }
        let written: Data
        do { written = try JSONEncoder.lantern.encode(value) } catch {
            throw FuzzFinding("json: a value that was read cannot be written: \(error)")
        }
        let again = try? JSONDecoder.lantern.decode(JSONValue.self, from: written)
        try expect(again == value, "json: \(String(decoding: written, as: UTF8.self)) does not read back equal")
        return envelope.map { "an event envelope of type \($0.type)" } ?? "JSON"
    }

    /// A body of whole numbers, nested, as the apps send (steps per day, a spice level).
    struct Counts: Decodable {
        struct Day: Decodable { var steps: Int?; var sleepHours: Double? }
        var spice: Int?
        var days: [Day]?
    }

    @discardableResult
    static func decodes<T: Decodable>(_: T.Type, _ data: Data) throws(FuzzFinding) -> T? {
        do {
            return try Problem.decodeBody(T.self, from: data, decoder: .lantern)
        } catch let problem as Problem {
            try expect(problem.status == 400 || problem.status == 422, "json: \(T.self) failure answered \(problem.status)")
            if problem.status == 422 {
                try expect(problem.errors?.contains { !$0.field.isEmpty } == true, "json: a 422 for \(T.self) names no field")
            }
            return nil
        } catch {
            throw FuzzFinding("json: \(T.self): \(type(of: error)) escaped instead of a problem (a 500): \(error)")
        }
    }
}

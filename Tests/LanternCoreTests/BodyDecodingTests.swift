import Foundation
import LanternCore
import Testing

@Suite("LanternCore: request bodies decoded with the field named (#44 item 5)")
struct BodyDecodingTests {
    struct Roast: Decodable { var spice: Int?; var maxSpice: Int? }
    struct Upload: Decodable {
        struct Day: Decodable { var steps: Int?; var sleepHours: Double?; var goals: Goals? }
        struct Goals: Decodable { var steps: Int? }
        var days: [Day]
    }
    struct Session: Decodable { var minutes: Int? }

    static func problem<T: Decodable>(_ type: T.Type, _ json: String) -> Problem? {
        do {
            _ = try Problem.decodeBody(T.self, from: Data(json.utf8), decoder: JSONDecoder())
            return nil
        } catch let problem as Problem {
            return problem
        } catch {
            Issue.record("not a problem: \(error)")
            return nil
        }
    }

    @Test("a valid number that is not a whole Int where one is due is 422 validation_failed naming its field, not 400 malformed_json",
          arguments: [
            (#"{"spice":2.5}"#, "spice"), (#"{"spice":1e23}"#, "spice"), (#"{"spice":1,"maxSpice":2.5}"#, "maxSpice"),
            (#"{"spice":-1e19}"#, "spice"),
          ])
    func wholeNumbers(_ json: String, _ field: String) throws {
        let problem = try #require(Self.problem(Roast.self, json))
        #expect(problem.status == 422 && problem.code == "validation_failed", "\(problem)")
        #expect(problem.errors?.map(\.field) == [field], "\(problem)")
    }

    @Test("nested fields are named by their path; a fractional number where one is allowed is not blamed")
    func nested() throws {
        let upload = try #require(Self.problem(Upload.self, #"{"days":[{"steps":100,"sleepHours":7.5},{"steps":9000.5,"sleepHours":6.25}]}"#))
        #expect(upload.errors?.map(\.field) == ["days[1].steps"], "\(upload)")
        // `1e5` is whole: taken, or if the decoder will not take an exponent for an Int, that field is named.
        let goal = Self.problem(Upload.self, #"{"days":[{"sleepHours":7.5,"goals":{"steps":1e5}}]}"#)
        #expect(goal == nil || goal?.errors?.map(\.field) == ["days[0].goals.steps"], "\(String(describing: goal))")
        #expect(Self.problem(Session.self, #"{"minutes":2.5}"#)?.errors?.map(\.field) == ["minutes"])
        #expect(Self.problem(Upload.self, #"{"days":[{"steps":100,"sleepHours":7.5}]}"#) == nil)
    }

    @Test("invalid JSON is still 400 malformed_json; wrong types and missing fields stay 422")
    func others() throws {
        #expect(Self.problem(Roast.self, #"{"spice":2.5"#)?.code == "malformed_json")
        #expect(Self.problem(Roast.self, #"{"spice":"2"}"#)?.errors?.map(\.field) == ["spice"])
        #expect(Self.problem(Upload.self, #"{}"#)?.errors?.map(\.field) == ["days"])
    }
}

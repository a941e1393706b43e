@testable import AstrologyService
import Ephemeris
import Foundation
import Hummingbird
import HummingbirdTesting
import LanternCore
import LanternTestSupport
import NIOCore
import Testing

@Suite("natal charts")
struct NatalChartTests {
    @Test("the spec's scenario, Kyiv 1990-04-15 14:30: UTC through the tz database, planets as swetest has them, houses, aspects")
    func kyiv() async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.natal(#"{"date":"1990-04-15","time":"14:30","place":{"latitude":50.4501,"longitude":30.5234,"timeZone":"Europe/Kyiv"}}"#)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let json = response.json
            #expect(json["ephemeris"] as? String == "swiss")
            let birth = try #require(json["birth"] as? [String: Any])
            // April 1990: Kyiv was on Moscow summer time, UTC+4.
            #expect(birth["utcOffset"] as? String == "+04:00")
            #expect((birth["utc"] as? String)?.hasPrefix("1990-04-15T10:30:00") == true)
            let jd = try #require(birth["julianDayUT"] as? Double)
            let planets = try #require(json["planets"] as? [[String: Any]])
            #expect(planets.count == 10)
            let rows = try await EphemerisTests.swetest(["-bj\(jd)", "-ut", "-p0123456789", "-fPl"])
            for (planet, row) in zip(planets, rows) {
                let lon = try #require(planet["longitude"] as? Double)
                #expect(abs(lon - (Double(row[1]) ?? .nan)) * 3600 < 1, "\(planet["body"] ?? "?")")
                let sign = ZodiacSign.allCases[Int(lon / 30)].rawValue
                #expect(planet["sign"] as? String == sign)
                #expect(abs((planet["degreeInSign"] as? Double ?? -1) - lon.truncatingRemainder(dividingBy: 30)) < 1e-9)
                #expect((planet["retrograde"] as? Bool) == ((planet["speed"] as? Double ?? 0) < 0))
                #expect((1...12).contains(planet["house"] as? Int ?? 0))
            }
            #expect(planets.first?["sign"] as? String == "aries")
            let houses = try #require(json["houses"] as? [String: Any])
            #expect(houses["system"] as? String == "placidus" && houses["reliable"] as? Bool == true)
            #expect((houses["cusps"] as? [Double])?.count == 12)
            let aspects = try #require(json["aspects"] as? [[String: Any]])
            #expect(!aspects.isEmpty)
            for aspect in aspects {
                #expect((aspect["orb"] as? Double ?? 99) <= 8)
            }
            #expect((json["fingerprint"] as? String)?.count == 64)
            #expect((json["warnings"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("UTC is taken as UT, as the field's references do: every cusp, the ASC and the MC within 1″ of swetest -ut, 40 births 1900–2100 up to 66° of latitude")
    func cuspsAsSwetest() async throws {
        try await AstrologyHarness.run { h in
            var random = SplitMix(seed: 1972)
            let latitudes = [66.0, -66.0, 64.5, -60.0, 59.9, 0.0, 51.5, -33.9, 35.7, 45.0]
            for n in 0..<40 {
                let year = 1900 + Int(random.next() % 201), month = 1 + Int(random.next() % 12), day = 1 + Int(random.next() % 28)
                let hour = Int(random.next() % 24), minute = Int(random.next() % 60)
                let latitude = latitudes[n % latitudes.count] + Double(random.next() % 100) / 1000 * (n % 2 == 0 ? -1 : 1)
                let longitude = Double(Int(random.next() % 36_000)) / 100 - 180
                let body = String(format: #"{"date":"%04d-%02d-%02d","time":"%02d:%02d","place":{"latitude":%.3f,"longitude":%.2f,"timeZone":"UTC"}}"#,
                                  year, month, day, hour, minute, latitude, longitude)
                let response = try await h.natal(body)
                #expect(response.status == .ok, "\(body): \(String(buffer: response.body))")
                let houses = try #require(response.json["houses"] as? [String: Any])
                #expect(houses["system"] as? String == "placidus", "\(body)")
                let cusps = try #require(houses["cusps"] as? [Double])
                let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/swetest"), [
                    "-b\(day).\(month).\(year)", String(format: "-ut%02d:%02d:00", hour, minute), "-p",
                    String(format: "-house%.2f,%.3f,P", longitude, latitude), "-fPl", "-head", "-g,"])
                let rows = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n")
                    .map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
                func reference(_ name: String) -> Double? { rows.first { $0.first == name }.flatMap { Double($0[1]) } }
                func arcseconds(_ a: Double, _ b: Double) -> Double { abs(((a - b + 540).truncatingRemainder(dividingBy: 360)) - 180) * 3600 }
                for i in 0..<12 {
                    let expected = try #require(reference("house \(String(format: "%2d", i + 1))"), "\(rows)")
                    #expect(arcseconds(cusps[i], expected) < 1, "\(body) cusp \(i + 1): \(cusps[i]) vs \(expected)")
                }
                #expect(arcseconds(houses["ascendant"] as? Double ?? .nan, reference("Ascendant") ?? .nan) < 1, "\(body) ASC")
                #expect(arcseconds(houses["midheaven"] as? Double ?? .nan, reference("MC") ?? .nan) < 1, "\(body) MC")
            }
        }
    }

    @Test("one place of every time zone in the gazetteer gets a chart and a Ba Zi reading by its id (Mumbai: Asia/Kolkata)")
    func everyGazetteerZone() async throws {
        try await AstrologyHarness.run(places: true) { h in
            let text = try String(contentsOfFile: AstrologyHarness.placesFile, encoding: .utf8)
            var byZone: [String: String] = [:]  // zone → the first place id of it
            for line in text.split(separator: "\n") {
                let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard columns.count > 8, byZone[String(columns[8])] == nil else { continue }
                byZone[String(columns[8])] = String(columns[0])
            }
            #expect(byZone.count > 300 && byZone["Asia/Kolkata"] != nil)
            var refused: [String] = []
            for (zone, id) in byZone.sorted(by: { $0.key < $1.key }) {
                let body = #"{"date":"1990-05-17","time":"14:35","place":{"id":\#(id)}}"#
                let chart = try await h.natal(body)
                let bazi = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post,
                                                      headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                      body: ByteBuffer(string: body))
                if chart.status != .ok || bazi.status != .ok { refused.append("\(zone) (\(id)): \(chart.status.code)/\(bazi.status.code)") }
            }
            #expect(refused.isEmpty, "\(refused.count) zones refused: \(refused.prefix(10))")
        }
    }

    @Test("every name of the tz database gets a chart and a Ba Zi reading (Asia/Kolkata, US/Eastern, Etc/GMT+12 …)")
    func everyTimeZone() async throws {
        let text = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
        let names = text.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            if fields.first == "Z", fields.count > 1 { return String(fields[1]) }
            if fields.first == "L", fields.count > 2 { return String(fields[2]) }
            return nil
        }
        #expect(names.count > 500)
        try await AstrologyHarness.run { h in
            var refused: [String] = []
            for name in names {
                let place = #"{"latitude":20.5,"longitude":78.9,"timeZone":"\#(name)"}"#
                let chart = try await h.natal(#"{"date":"1990-04-15","time":"14:30","place":\#(place)}"#)
                let bazi = try await h.client.execute(uri: "/v1/astrology/bazi", method: .post,
                                                      headers: [.authorization: "Bearer \(h.token)", .contentType: "application/json"],
                                                      body: ByteBuffer(string: #"{"date":"1990-04-15","time":"14:30","place":\#(place)}"#))
                if chart.status != .ok || bazi.status != .ok { refused.append("\(name): \(chart.status.code)/\(bazi.status.code)") }
            }
            #expect(refused == [], "\(refused.count) of \(names.count) refused")
        }
    }

    @Test("unknown time: local noon, houses unreliable, said in a warning; the same data gives the same fingerprint")
    func unknownTime() async throws {
        try await AstrologyHarness.run { h in
            let body = #"{"date":"1985-07-01","time":null,"place":{"latitude":49.8397,"longitude":24.0297,"timeZone":"Europe/Kyiv"}}"#
            let first = try await h.natal(body).json
            let second = try await h.natal(body).json
            #expect((first["birth"] as? [String: Any])?["localDateTime"] as? String == "1985-07-01T12:00")
            #expect((first["birth"] as? [String: Any])?["timeKnown"] as? Bool == false)
            #expect((first["houses"] as? [String: Any])?["reliable"] as? Bool == false)
            #expect((first["warnings"] as? [[String: Any]])?.first?["code"] as? String == "time_unknown")
            #expect(first["fingerprint"] as? String == second["fingerprint"] as? String)
            let other = try await h.natal(#"{"date":"1985-07-01","time":"12:00","place":{"latitude":49.8397,"longitude":24.0297,"timeZone":"Europe/Kyiv"}}"#).json
            #expect(other["fingerprint"] as? String != first["fingerprint"] as? String)
        }
    }

    @Test("a local time in the spring-forward gap is a 422 saying so; one in the fall-back overlap takes the earlier unless told")
    func daylightSaving() async throws {
        try await AstrologyHarness.run { h in
            let gap = try await h.natal(#"{"date":"2021-03-28","time":"03:30","place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}}"#)
            #expect(gap.status == .unprocessableContent)
            #expect(gap.json["code"] as? String == "nonexistent_local_time" && gap.invalidFields == ["time"])

            let overlap = #"{"date":"2021-10-31","time":"03:30","place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}"#
            let earlier = try await h.natal(overlap + "}").json
            #expect((earlier["birth"] as? [String: Any])?["utcOffset"] as? String == "+03:00")
            #expect((earlier["warnings"] as? [[String: Any]])?.first?["code"] as? String == "ambiguous_local_time")
            let later = try await h.natal(overlap + #","fold":"later"}"#).json
            #expect((later["birth"] as? [String: Any])?["utcOffset"] as? String == "+02:00")
        }
    }

    @Test("every bad input is a 422 naming its field; no token is a 401")
    func badInput() async throws {
        try await AstrologyHarness.run { h in
            let cases: [(String, [String])] = [
                (#"{"date":"1899-12-31","time":"10:00","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["date"]),
                (#"{"date":"2023-02-30","time":"10:00","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["date"]),
                (#"{"date":"2101-01-01","time":"25:61","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["date", "time"]),
                (#"{"date":"2000-01-01","time":"10:00","place":{"latitude":91,"longitude":-181,"timeZone":"Mars/Olympus"}}"#, ["place.latitude", "place.longitude", "place.timeZone"]),
                (#"{"date":"2000-01-01","time":"10:00"}"#, ["place"]),
                // Signs are not digits (issue #23 item 4: Int("+1") is 1).
                (#"{"date":"1990-05-17","time":"+1:30","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["time"]),
                (#"{"date":"1990-05-17","time":"-0:30","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["time"]),
                (#"{"date":"1990-+5-17","time":"10:00","place":{"latitude":50,"longitude":30,"timeZone":"Europe/Kyiv"}}"#, ["date"]),
                (#"{"date":"2000-01-01","time":"10:00","place":{"latitude":50,"longitude":30,"timeZone":"UTC"},"fold":"middle","orbs":{"quincunx":2,"trine":40}}"#, ["fold", "orbs.quincunx", "orbs.trine"]),
            ]
            for (body, fields) in cases {
                let response = try await h.natal(body)
                #expect(response.status == .unprocessableContent, "\(body)")
                #expect(Set(response.invalidFields) == Set(fields), "\(body): \(response.invalidFields)")
            }
            let wrongType = try await h.natal(#"{"date":19900415}"#)
            #expect(wrongType.status.code >= 400 && wrongType.status.code < 500)
            let anonymous = try await h.client.execute(uri: "/v1/astrology/charts/natal", method: .post, body: ByteBuffer(string: "{}"))
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test("above the polar circle the chart still comes, with Porphyry houses and a warning")
    func polarChart() async throws {
        try await AstrologyHarness.run { h in
            let response = try await h.natal(#"{"date":"1990-12-21","time":"12:00","place":{"latitude":78.2232,"longitude":15.6267,"timeZone":"Arctic/Longyearbyen"}}"#)
            #expect(response.status == .ok)
            #expect((response.json["houses"] as? [String: Any])?["system"] as? String == "porphyry")
            #expect((response.json["warnings"] as? [[String: Any]])?.contains { $0["code"] as? String == "placidus_undefined" } == true)
        }
    }
}

@Suite("birth time resolution")
struct BirthMomentTests {
    func moment(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ mi: Int, _ zone: String) -> BirthMoment {
        BirthMoment(year: y, month: m, day: d, hour: h, minute: mi, timeKnown: true, timeZone: TimeZone(identifier: zone)!)
    }

    @Test("historical offsets: local mean time before 1924 in Kyiv, far-east and far-west zones, midnight")
    func offsets() throws {
        #expect(try moment(1900, 1, 1, 0, 0, "Europe/Kyiv").resolve(fold: nil).offsetSeconds == 7324)  // LMT +2:02:04
        #expect(try moment(2020, 6, 1, 0, 0, "Pacific/Kiritimati").resolve(fold: nil).offsetSeconds == 14 * 3600)
        #expect(try moment(2020, 6, 1, 23, 59, "Pacific/Pago_Pago").resolve(fold: nil).offsetSeconds == -11 * 3600)
        let midnight = try moment(2000, 1, 1, 0, 0, "Asia/Tokyo").resolve(fold: nil)
        #expect(midnight.utc == ISO8601DateFormatter().date(from: "1999-12-31T15:00:00Z"))
    }

    @Test("Samoa skipped 2011-12-30 when it crossed the date line: every time that day does not exist")
    func dateLine() {
        #expect(throws: BirthMoment.Nonexistent.self) { try moment(2011, 12, 30, 12, 0, "Pacific/Apia").resolve(fold: nil) }
        #expect((try? moment(2011, 12, 31, 12, 0, "Pacific/Apia").resolve(fold: nil).offsetSeconds) == 14 * 3600)
        #expect((try? moment(2011, 12, 29, 12, 0, "Pacific/Apia").resolve(fold: nil).offsetSeconds) == -10 * 3600)
    }

    @Test("house of a longitude, across 0° Aries")
    func houseOf() {
        let cusps: [Double] = [350, 20, 50, 80, 110, 140, 170, 200, 230, 260, 290, 320]
        #expect(NatalChart.house(of: 355, cusps: cusps) == 1)
        #expect(NatalChart.house(of: 5, cusps: cusps) == 1)
        #expect(NatalChart.house(of: 20, cusps: cusps) == 2)
        #expect(NatalChart.house(of: 349.9, cusps: cusps) == 12)
    }

    @Test("an applying aspect becomes separating after it perfects")
    func applying() {
        let houses = Houses(system: .placidus, cusps: (0..<12).map { Double($0 * 30) }, ascendant: 0, midheaven: 270)
        func chart(moonAt moon: Double) -> NatalChart.Aspect? {
            NatalChart.compute(positions: [
                BodyPosition(body: .sun, longitude: 100, latitude: 0, distance: 1, longitudeSpeed: 1, source: .swiss),
                BodyPosition(body: .moon, longitude: moon, latitude: 0, distance: 0.0025, longitudeSpeed: 13, source: .swiss),
            ], houses: houses, timeKnown: true, orbs: [:]).aspects.first
        }
        #expect(chart(moonAt: 215)?.type == .trine && chart(moonAt: 215)?.applying == true)   // 115° and closing
        #expect(chart(moonAt: 225)?.type == .trine && chart(moonAt: 225)?.applying == false)   // 125° and opening
        #expect(chart(moonAt: 250) == nil)  // 150°: no major aspect
    }
}

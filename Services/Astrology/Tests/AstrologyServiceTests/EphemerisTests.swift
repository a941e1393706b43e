import Ephemeris
import Foundation
import LanternTestSupport
import Testing

/// Positions and houses against `swetest`, the Swiss Ephemeris' own reference program (Debian package
/// `swetest`, same data files): every body within 1″ for dates spread over 1900–2100.
@Suite("Swiss Ephemeris against swetest")
struct EphemerisTests {
    static let ephemeris = SwissEphemeris()

    struct Reference {
        var longitude: [Double]
        var latitude: [Double]
        var speed: [Double]
    }

    /// Runs `swetest` for a Julian day (UT) and returns its comma-separated rows (on NIO's blocking pool, as every
    /// child process of the tests: `ChildProcess`).
    static func swetest(_ arguments: [String]) async throws -> [[String]] {
        let output = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/swetest"), arguments + ["-g,", "-head"])
        return String(decoding: output.stdout, as: UTF8.self).split(separator: "\n").map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// Julian days from 1900 to 2100, deterministic, at varied times of day.
    static let days: [Double] = {
        var generator = SplitMix(seed: 2026)
        let start = 2_415_020.5, end = 2_488_069.5  // 1900-01-01 … 2100-12-31
        return (0..<60).map { _ in start + Double(generator.next() % UInt64(end - start)) + Double(generator.next() % 1440) / 1440 }
    }()

    @Test("ten bodies within 1″ of swetest (longitude, latitude) for 60 dates 1900–2100", arguments: [0, 1, 2, 3, 4, 5])
    func positions(slice: Int) async throws {
        for jd in Self.days[(slice * 10)..<(slice * 10 + 10)] {
            let rows = try await Self.swetest(["-bj\(jd)", "-ut", "-p0123456789", "-fPlbs"])
            #expect(rows.count == 10)
            let ours = try await Self.ephemeris.compute { session in try Body.allCases.map { try session.position(of: $0, julianDayUT: jd) } }
            for (position, row) in zip(ours, rows) {
                let (lon, lat, speed) = (Double(row[1]) ?? .nan, Double(row[2]) ?? .nan, Double(row[3]) ?? .nan)
                #expect(position.source == .swiss)
                #expect(abs(position.longitude - lon) * 3600 < 1, "\(position.body) at JD \(jd): \(position.longitude) vs \(lon)")
                #expect(abs(position.latitude - lat) * 3600 < 1, "\(position.body) at JD \(jd)")
                #expect(abs(position.longitudeSpeed - speed) < 1e-5, "\(position.body) speed at JD \(jd)")
            }
        }
    }

    @Test("Placidus cusps, Ascendant and MC within 1″ of swetest at several latitudes")
    func houses() async throws {
        let places: [(Double, Double)] = [(50.4501, 30.5234), (-33.8688, 151.2093), (0.0, -78.5), (64.1466, -21.9426), (40.7128, -74.0060)]
        for (jd, place) in zip(Self.days.prefix(15), places + places + places) {
            let rows = try await Self.swetest(["-bj\(jd)", "-ut", "-house\(place.1),\(place.0),P", "-p", "-fPl"])
            let ours = try await Self.ephemeris.compute { $0.houses(julianDayUT: jd, latitude: place.0, longitude: place.1) }
            #expect(ours.system == .placidus)
            let cusps = rows.prefix(12).compactMap { Double($0[1]) }
            #expect(cusps.count == 12)
            for (a, b) in zip(ours.cusps, cusps) { #expect(abs(a - b) * 3600 < 1, "cusp at JD \(jd) \(place)") }
            #expect(abs(ours.ascendant - (Double(rows[12][1]) ?? .nan)) * 3600 < 1)
            #expect(abs(ours.midheaven - (Double(rows[13][1]) ?? .nan)) * 3600 < 1)
        }
    }

    @Test("inside the polar circles Placidus is undefined and Porphyry is returned")
    func polar() async throws {
        let houses = try await Self.ephemeris.compute { $0.houses(julianDayUT: 2_447_996.9375, latitude: 78.2232, longitude: 15.6267) }
        #expect(houses.system == .porphyry)
        #expect(houses.cusps.count == 12)
    }

    @Test("Meeus, Astronomical Algorithms example 25.a: the Sun on 1992-10-13 0h TT")
    func meeusSun() async throws {
        // Apparent longitude 199°54′21.818″ (= 199.906060°) by the full VSOP87 theory; ΔT ≈ 59 s, so UT = TT − 59 s.
        let jdUT = 2_448_908.5 - 59.0 / 86_400
        let sun = try await Self.ephemeris.compute { try $0.position(of: .sun, julianDayUT: jdUT) }
        #expect(abs(sun.longitude - 199.906060) * 3600 < 2, "\(sun.longitude)")
    }
}

/// A small deterministic generator, so the dates are the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

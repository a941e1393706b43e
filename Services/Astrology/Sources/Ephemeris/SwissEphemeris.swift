import CSwissEph
import NIOPosix
import Synchronization

/// The bodies of a natal chart, with their Swiss Ephemeris numbers.
public enum Body: String, CaseIterable, Codable, Sendable {
    case sun, moon, mercury, venus, mars, jupiter, saturn, uranus, neptune, pluto

    var sweNumber: Int32 {
        switch self {
        case .sun: 0
        case .moon: 1
        case .mercury: 2
        case .venus: 3
        case .mars: 4
        case .jupiter: 5
        case .saturn: 6
        case .uranus: 7
        case .neptune: 8
        case .pluto: 9
        }
    }
}

/// Which ephemeris produced a position: the JPL-derived Swiss Ephemeris files, or the Moshier analytical theory the
/// library falls back to when the files are missing (≈ 1″ for planets, a few ″ for the Moon).
public enum EphemerisSource: String, Codable, Sendable {
    case swiss, moshier
}

/// A body's apparent geocentric tropical position (true equinox of date).
public struct BodyPosition: Sendable, Equatable {
    public var body: Body
    /// Ecliptic longitude, degrees in [0, 360).
    public var longitude: Double
    /// Ecliptic latitude, degrees.
    public var latitude: Double
    /// Distance, AU.
    public var distance: Double
    /// Daily motion in longitude, degrees per day; negative when retrograde.
    public var longitudeSpeed: Double
    public var source: EphemerisSource

    public init(body: Body, longitude: Double, latitude: Double, distance: Double, longitudeSpeed: Double, source: EphemerisSource) {
        self.body = body
        self.longitude = longitude
        self.latitude = latitude
        self.distance = distance
        self.longitudeSpeed = longitudeSpeed
        self.source = source
    }
}

public enum HouseSystem: String, Codable, Sendable {
    case placidus, porphyry
}

/// House cusps 1–12 (index 0 is the first house), Ascendant and Midheaven, in ecliptic degrees.
public struct Houses: Sendable, Equatable {
    public var system: HouseSystem
    public var cusps: [Double]
    public var ascendant: Double
    public var midheaven: Double

    public init(system: HouseSystem, cusps: [Double], ascendant: Double, midheaven: Double) {
        self.system = system
        self.cusps = cusps
        self.ascendant = ascendant
        self.midheaven = midheaven
    }
}

public struct EphemerisError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(description: String) { self.description = description }

    /// From libswe's NUL-terminated error buffer.
    init(_ buffer: [CChar]) {
        description = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The Swiss Ephemeris behind one thread.
///
/// libswe keeps global state (open data files, the ephemeris path, caches) that is not safe to share between
/// threads, and its Debian build keeps some of it per thread. So every call runs on one private thread that set
/// the path itself; callers hop there with `compute`. One chart is ≈ 100 µs of work, so one thread serves
/// thousands of charts per second.
public final class SwissEphemeris: Sendable {
    /// Where Debian's `swe-basic-data` puts the files (1800–2399).
    public static let defaultDataPath = "/usr/share/libswe/ephe"

    public let dataPath: String
    private let pool = NIOThreadPool(numberOfThreads: 1)
    private let pathSet = Mutex(false)

    public init(dataPath: String = SwissEphemeris.defaultDataPath) {
        self.dataPath = dataPath
        pool.start()
    }

    public func shutdown() async throws {
        try await pool.shutdownGracefully()
    }

    /// Runs `body` on the ephemeris thread.
    public func compute<T: Sendable>(_ body: @Sendable @escaping (Session) throws -> T) async throws -> T {
        try await pool.runIfActive { [self] in
            pathSet.withLock { done in
                if !done {
                    swe_set_ephe_path(dataPath)
                    done = true
                }
            }
            return try body(Session())
        }
    }

    /// Calls into libswe; only valid inside `compute`.
    public struct Session {
        fileprivate init() {}

        /// Julian day of a calendar date and decimal hour on the UT scale (no leap-second handling).
        public func julianDay(year: Int, month: Int, day: Int, hour: Double) -> Double {
            swe_julday(Int32(year), Int32(month), Int32(day), hour, SE_GREG_CAL)
        }

        public func position(of body: Body, julianDayUT: Double) throws -> BodyPosition {
            var values = [Double](repeating: 0, count: 6)
            var error = [CChar](repeating: 0, count: 256)
            let flags = swe_calc_ut(julianDayUT, body.sweNumber, SEFLG_SWIEPH | SEFLG_SPEED, &values, &error)
            if flags < 0 { throw EphemerisError(error) }
            return BodyPosition(body: body, longitude: values[0], latitude: values[1], distance: values[2], longitudeSpeed: values[3],
                                source: flags & SEFLG_SWIEPH != 0 ? .swiss : .moshier)
        }

        /// The Sun's apparent longitude, degrees.
        public func sunLongitude(julianDayUT: Double) throws -> Double {
            try position(of: .sun, julianDayUT: julianDayUT).longitude
        }

        /// The first moment after `julianDayUT` when the Sun's apparent longitude is `longitude` (a solar term).
        public func sunCrossing(_ longitude: Double, after julianDayUT: Double) throws -> Double {
            var error = [CChar](repeating: 0, count: 256)
            let jd = swe_solcross_ut(longitude, julianDayUT, SEFLG_SWIEPH, &error)
            if jd < julianDayUT { throw EphemerisError(error) }
            return jd
        }

        /// The first new moon (apparent geocentric conjunction in longitude) after `julianDayUT`, to about a second.
        public func newMoon(after julianDayUT: Double) throws -> Double {
            func elongation(_ jd: Double) throws -> Double {
                let moon = try position(of: .moon, julianDayUT: jd).longitude, sun = try position(of: .sun, julianDayUT: jd).longitude
                let e = (moon - sun).truncatingRemainder(dividingBy: 360)
                return e < 0 ? e + 360 : e
            }
            // Walk in half-day steps until the elongation wraps past 360° (≤ 30 days), then bisect.
            var low = julianDayUT, previous = try elongation(low)
            while true {
                let next = low + 0.5
                let value = try elongation(next)
                if value < previous { break }
                (low, previous) = (next, value)
            }
            var high = low + 0.5
            while high - low > 1.0 / 86_400 {
                let mid = (low + high) / 2
                if try elongation(mid) > 180 { low = mid } else { high = mid }
            }
            return (low + high) / 2
        }

        /// The equation of time (apparent − mean solar time), in days.
        public func equationOfTime(julianDayUT: Double) throws -> Double {
            var value = 0.0
            var error = [CChar](repeating: 0, count: 256)
            if swe_time_equ(julianDayUT, &value, &error) < 0 { throw EphemerisError(error) }
            return value
        }

        /// Placidus houses; where Placidus is undefined (inside the polar circles) libswe answers with Porphyry.
        public func houses(julianDayUT: Double, latitude: Double, longitude: Double) -> Houses {
            var cusps = [Double](repeating: 0, count: 13)
            var points = [Double](repeating: 0, count: 10)
            let status = swe_houses_ex(julianDayUT, 0, latitude, longitude, Int32(UInt8(ascii: "P")), &cusps, &points)
            return Houses(system: status < 0 ? .porphyry : .placidus, cusps: Array(cusps[1...12]), ascendant: points[0], midheaven: points[1])
        }
    }
}

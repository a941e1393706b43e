import Foundation
import Synchronization

/// The gazetteer searched in memory: 34,000 places, their Ukrainian names and ~190,000 other spellings.
///
/// PostgreSQL keeps the places (`astrology.places`, `place_aliases`); each replica reads them once into this
/// index, because a trigram search in PostgreSQL cost 35–80 ms per query here and a place autocomplete must
/// answer in a few milliseconds under load (docs/benchmarks.md). Immutable once built, so shared freely.
public final class PlaceIndex: Sendable {
    /// What a place's key is: its GeoNames name, its Ukrainian name or another spelling (which ranks lower).
    enum Kind: UInt8 { case name, ukrainian, alias }

    struct Entry: Sendable {
        var place: Int32
        var kind: Kind
        var trigramCount: UInt16
    }

    let places: [Place]
    private let positions: [Int: Int32]
    /// Name and Ukrainian-name keys as UTF-8, sorted bytewise, for prefix ranges.
    private let prefixKeys: [[UInt8]]
    private let prefixPlaces: [Int32]
    /// Every key (names, Ukrainian names, other spellings) and, per trigram, the keys that contain it.
    private let entries: [Entry]
    private let postings: [UInt64: [Int32]]
    /// Zeroed per-key counters for trigram searches, kept between queries.
    private let counterPool = Mutex<[[UInt8]]>([])

    /// - Parameters:
    ///   - places: the places with their folded `nameKey` and `ukKey` (empty when there is no Ukrainian name).
    ///   - aliases: folded other spellings, by GeoNames id.
    init(places rows: [(place: Place, nameKey: String, ukKey: String)], aliases: [(id: Int, key: String)]) {
        places = rows.map(\.place)
        var positions: [Int: Int32] = [:]
        positions.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() { positions[row.place.id] = Int32(index) }
        self.positions = positions

        var prefixed: [(key: [UInt8], place: Int32)] = []
        var entries: [Entry] = []
        var postings: [UInt64: [Int32]] = [:]
        func add(_ key: String, place: Int32, kind: Kind) {
            let trigrams = Trigrams.of(key)
            guard !trigrams.isEmpty else { return }
            let entry = Int32(entries.count)
            entries.append(Entry(place: place, kind: kind, trigramCount: UInt16(clamping: trigrams.count)))
            for trigram in trigrams { postings[trigram, default: []].append(entry) }
        }
        for (index, row) in rows.enumerated() {
            let place = Int32(index)
            prefixed.append((Array(row.nameKey.utf8), place))
            add(row.nameKey, place: place, kind: .name)
            if !row.ukKey.isEmpty {
                prefixed.append((Array(row.ukKey.utf8), place))
                add(row.ukKey, place: place, kind: .ukrainian)
            }
        }
        for alias in aliases {
            guard let place = positions[alias.id] else { continue }
            add(alias.key, place: place, kind: .alias)
        }
        prefixed.sort { $0.key.lexicographicallyPrecedes($1.key) }
        prefixKeys = prefixed.map(\.key)
        prefixPlaces = prefixed.map(\.place)
        self.entries = entries
        self.postings = postings
    }

    public var count: Int { places.count }

    /// Lower case without diacritics: the form of the stored keys and of queries.
    public static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: Locale(identifier: "en_US_POSIX"))
            .lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func place(id: Int) -> Place? { positions[id].map { places[Int($0)] } }

    /// Best matches for what the user typed (already folded: `fold`). Autocomplete first: names
    /// starting with the text, an exact name first, then by population. Only when no name starts with it, and the
    /// text has at least 3 characters, similar names and other spellings (typos, Kiev → Kyiv): `pg_trgm`
    /// similarity ≥ 0.3, other spellings weighted 0.9, ranked by similarity in steps of 0.1, then population.
    public func search(_ key: String, limit: Int) -> [Place] {
        guard !key.isEmpty, limit > 0 else { return [] }
        let found = prefixMatches(Array(key.utf8), limit: limit)
        if !found.isEmpty || key.count < 3 { return found.map { places[Int($0)] } }
        return similar(to: key, limit: limit).map { places[Int($0)] }
    }

    private func prefixMatches(_ key: [UInt8], limit: Int) -> [Int32] {
        // First key ≥ the text; every key that starts with it follows.
        var low = 0, high = prefixKeys.count
        while low < high {
            let middle = (low + high) / 2
            if prefixKeys[middle].lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        // The best `limit` places so far, best first: exact name first, then population (then id, for a stable order).
        var best: [(place: Int32, exact: Bool)] = []
        func ranksAbove(_ a: (place: Int32, exact: Bool), _ b: (place: Int32, exact: Bool)) -> Bool {
            if a.exact != b.exact { return a.exact }
            let pa = places[Int(a.place)], pb = places[Int(b.place)]
            return pa.population != pb.population ? pa.population > pb.population : pa.id < pb.id
        }
        var index = low
        while index < prefixKeys.count, prefixKeys[index].starts(with: key) {
            let candidate = (place: prefixPlaces[index], exact: prefixKeys[index].count == key.count)
            index += 1
            if let seen = best.firstIndex(where: { $0.place == candidate.place }) {
                guard candidate.exact, !best[seen].exact else { continue }
                best.remove(at: seen)
            } else if best.count == limit, let last = best.last, !ranksAbove(candidate, last) {
                continue
            }
            let at = best.firstIndex { ranksAbove(candidate, $0) } ?? best.count
            best.insert(candidate, at: at)
            if best.count > limit { best.removeLast() }
        }
        return best.map(\.place)
    }

    private func similar(to key: String, limit: Int) -> [Int32] {
        let trigrams = Trigrams.of(key)
        guard !trigrams.isEmpty, trigrams.count < 256 else { return [] }  // counted in bytes below
        let q = trigrams.count
        var scores: [Int32: Int] = [:]
        // Shared trigrams per key, counted over the posting lists of the query's trigrams, in a zeroed buffer
        // borrowed from the pool (allocating and clearing one per query cost more than the counting). A byte per
        // key is enough: a query of at most 100 characters has fewer than 200 trigrams.
        var shared = counterPool.withLock { $0.popLast() } ?? [UInt8](repeating: 0, count: entries.count)
        var touched: [Int32] = []
        touched.reserveCapacity(4_096)
        // A key needs at least ⌈0.3·q⌉ of the q query trigrams to reach similarity 0.3 (it has at least as many
        // trigrams as it shares), so a key in none of the shortest L − ⌈0.3·q⌉ + 1 posting lists cannot qualify:
        // only those lists bring candidates; the longest ones (like "  k", every word starting with k) only add
        // to candidates already found.
        let lists = trigrams.compactMap { postings[$0] }.sorted { $0.count < $1.count }
        let needed = (3 * q + 9) / 10
        let searched = max(1, lists.count - needed + 1)
        shared.withUnsafeMutableBufferPointer { shared in
            for list in lists.prefix(searched) {
                list.withUnsafeBufferPointer { list in
                    for entry in list {
                        let e = Int(entry)
                        if shared[e] == 0 { touched.append(entry) }
                        shared[e] &+= 1
                    }
                }
            }
            for list in lists.dropFirst(searched) {
                list.withUnsafeBufferPointer { list in
                    if touched.count * 16 < list.count {
                        for entry in touched where Self.contains(list, entry) { shared[Int(entry)] &+= 1 }
                    } else {
                        for entry in list where shared[Int(entry)] != 0 { shared[Int(entry)] &+= 1 }
                    }
                }
            }
            // Best score per place; a score is kept in millionths, as PostgreSQL turns a `real` into `numeric`.
            entries.withUnsafeBufferPointer { entries in
                for entry in touched {
                    let count = Int(shared[Int(entry)])
                    shared[Int(entry)] = 0
                    let e = entries[Int(entry)]
                    let n = Int(e.trigramCount)
                    // similarity ≥ 0.3 ⇔ 13·shared ≥ 3·(q + n): a cheap test first (with a margin), the exact `real` one after.
                    guard count * 13 + 1 >= 3 * (q + n) else { continue }
                    let similarity = Trigrams.similarity(shared: count, q, n)
                    guard similarity >= Trigrams.threshold else { continue }
                    let score = e.kind == .alias ? similarity * 0.9 : similarity
                    let millionths = Int((Double(score) * 1_000_000).rounded())
                    if millionths > scores[e.place] ?? 0 { scores[e.place] = millionths }
                }
            }
        }
        counterPool.withLock { if $0.count < 8 { $0.append(shared) } }
        // Similarity in steps of 0.1 (rounded half up), then population.
        let ranked = scores.map { (place: $0.key, step: ($0.value + 50_000) / 100_000) }.sorted { a, b in
            if a.step != b.step { return a.step > b.step }
            let pa = places[Int(a.place)], pb = places[Int(b.place)]
            return pa.population != pb.population ? pa.population > pb.population : pa.id < pb.id
        }
        return ranked.prefix(limit).map(\.place)
    }

    /// Binary search in a posting list (ascending key numbers).
    private static func contains(_ list: UnsafeBufferPointer<Int32>, _ entry: Int32) -> Bool {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle] < entry { low = middle + 1 } else { high = middle }
        }
        return low < list.count && list[low] == entry
    }
}

/// Trigram similarity exactly as PostgreSQL's `pg_trgm` defines it, computed in process.
///
/// `pg_trgm` splits text into words of letters and digits, pads each word with two spaces in front and one
/// behind, and takes every run of three characters; `similarity(a, b)` is the number of trigrams the two share
/// divided by the number in either (a `real`). `TrigramTests` checks these functions against PostgreSQL's own.
enum Trigrams {
    /// The distinct trigrams of already folded (lower-case) text, sorted; each packs three Unicode scalars.
    static func of(_ text: String) -> [UInt64] {
        var trigrams: [UInt64] = []
        var a: UInt64 = 0x20, b: UInt64 = 0x20  // the two characters before the current one (padding first)
        var inWord = false
        for scalar in text.unicodeScalars {
            if isWordCharacter(scalar) {
                if !inWord { a = 0x20; b = 0x20; inWord = true }
                let c = UInt64(scalar.value)
                trigrams.append(a << 42 | b << 21 | c)
                a = b; b = c
            } else if inWord {
                trigrams.append(a << 42 | b << 21 | 0x20)
                inWord = false
            }
        }
        if inWord { trigrams.append(a << 42 | b << 21 | 0x20) }
        trigrams.sort()
        var unique = 0
        for trigram in trigrams where unique == 0 || trigrams[unique - 1] != trigram {
            trigrams[unique] = trigram
            unique += 1
        }
        trigrams.removeLast(trigrams.count - unique)
        return trigrams
    }

    /// `pg_trgm`'s word characters: letters and digits (in a UTF-8 database with a `C.UTF-8` or similar locale).
    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") || (scalar >= "A" && scalar <= "Z") }
        let properties = scalar.properties
        return properties.isAlphabetic || properties.numericType != nil
    }

    /// `similarity(a, b)` for two sorted, distinct trigram lists; `real` like PostgreSQL's.
    static func similarity(_ a: [UInt64], _ b: [UInt64]) -> Float {
        guard !a.isEmpty, !b.isEmpty else { return 0 }
        var i = 0, j = 0, shared = 0
        while i < a.count, j < b.count {
            if a[i] == b[j] { shared += 1; i += 1; j += 1 } else if a[i] < b[j] { i += 1 } else { j += 1 }
        }
        return similarity(shared: shared, a.count, b.count)
    }

    @inline(__always)
    static func similarity(shared: Int, _ count1: Int, _ count2: Int) -> Float {
        Float(shared) / Float(count1 + count2 - shared)
    }

    /// `pg_trgm.similarity_threshold`'s default: the `%` operator's cut-off.
    static let threshold: Float = 0.3
}

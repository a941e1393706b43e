import Crypto
import Foundation
import LanternLLM

/// Which hand-written fortune a user gets next: each user walks their own fixed shuffle of the pool, one step per
/// artisanal fortune, so nobody sees the same one twice before the whole pool (≥ 365) has gone by.
enum ArtisanalPool {
    /// The pool index of the user's `position`-th artisanal fortune.
    static func index(for user: UUID, position: Int, count: Int) -> Int {
        guard count > 0 else { return 0 }
        let digest = Array(SHA256.hash(data: Data("luckyday-pool|\(user.uuidString.lowercased())".utf8)))
        var random = SplitMix64(seed: digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
        // Fisher–Yates with a fixed generator: the same permutation on every machine and release.
        var order = Array(0..<count)
        for i in stride(from: count - 1, to: 0, by: -1) {
            order.swapAt(i, Int(random.next(below: UInt64(i + 1))))
        }
        return order[((position % count) + count) % count]
    }
}

import ContentKit
import Foundation
import LanternCore

/// What a fortune may say about a day (`LocalDay`, ContentKit): the element of the day's pillar in the
/// sexagenary cycle (Four Pillars).
extension LocalDay {
    /// The day's place in the 60-day cycle, 0 = 甲子 (JDN + 49 ≡ 0 mod 60: 1949-10-01 and 2000-01-07 are 甲子 days).
    var sexagenaryIndex: Int { ((julianDayNumber + 49) % 60 + 60) % 60 }

    /// The element of the day's heavenly stem: 甲乙 Wood, 丙丁 Fire, 戊己 Earth, 庚辛 Metal, 壬癸 Water.
    var element: String { ["Wood", "Fire", "Earth", "Metal", "Water"][(sexagenaryIndex % 10) / 2] }
}

import Foundation
import LanternCore
import LanternLLM
import Testing

@Suite("Output and privacy guards")
struct GuardTests {
    let guardian = OutputGuard()
    let english = OutputRules(maxCharacters: 200, language: .english)

    @Test("limits count user-visible characters: an emoji family or a combining accent counts once")
    func graphemes() throws {
        let family = "👨‍👩‍👧‍👦"
        let text = "Your family " + family + " shines today."
        #expect(text.count == 27 && text.unicodeScalars.count > 27)
        #expect(try guardian.check(text, format: .text, rules: OutputRules(maxCharacters: 27)) == text)
        let accented = "Cafe\u{301} talk is calm and you will find your way."
        #expect(try guardian.check(accented, format: .text, rules: OutputRules(maxCharacters: accented.count)) == accented)
    }

    @Test("wrapping quotes go; an over-long text is cut at the last whole sentence only when at least half remains")
    func cutting() throws {
        #expect(try guardian.check("  “The moon is patient with you.”  ", format: .text, rules: english) == "The moon is patient with you.")
        let long = "You will find a path. " + String(repeating: "It winds through quiet gardens of your own making. ", count: 4)
        let cut = try guardian.check(long, format: .text, rules: english)
        #expect(cut.count <= 200 && cut.hasSuffix(".") && long.hasPrefix(cut))
        let oneShortSentence = "Yes. " + String(repeating: "and the long road is still going on ", count: 8)
        #expect(throws: ProviderFailure.self) { try guardian.check(oneShortSentence, format: .text, rules: english) }
    }

    @Test("language: English passes, Italian and Spanish do not; Ukrainian passes, Russian does not", arguments: [
        ("You will find calm where you least expect it, and the day will be kind to you.", TextLanguage.english, true),
        ("Troverai la calma dove meno te lo aspetti, e la giornata sarà gentile con te.", .english, false),
        ("Encontrarás la calma donde menos lo esperas y el día será amable contigo.", .english, false),
        ("Сьогодні ви знайдете спокій там, де найменше чекаєте, і день буде до вас лагідним.", .ukrainian, true),
        ("Сегодня вы найдёте покой там, где меньше всего ждёте, и этот день будет к вам добрым.", .ukrainian, false),
        ("Сьогодні ви знайдете спокій.", .english, false),
        ("Hôm nay bạn sẽ tìm thấy sự bình yên ở nơi không ngờ tới.", .vietnamese, true),
    ])
    func language(text: String, language: TextLanguage, passes: Bool) {
        #expect((LanguageCheck.problem(text, expected: language) == nil) == passes, "\(text)")
    }

    @Test("blocklist: links, e-mail addresses, phone numbers, slurs and money or medicine directives", arguments: [
        "Visit https://example.com for more luck.", "Your fortune awaits at www.lucky.example today.",
        "Write to oracle@example.com and be wise.", "Call +39 055 123 4567 for good news.",
        "Today is the day to invest in gold and silver.", "Stop taking your pills and trust the stars.",
    ])
    func blocked(text: String) {
        #expect(throws: ProviderFailure.self) { try guardian.check(text, format: .text, rules: english) }
    }

    @Test("ordinary fortunes pass the blocklist")
    func ordinaryPasses() throws {
        for text in ["Your patience is a lantern: it lights more than your own path.",
                     "A conversation you almost skipped will matter. Have it anyway.",
                     "Money comes and goes like tides; today, notice what stays."] {
            #expect(try guardian.check(text, format: .text, rules: english) == text)
        }
    }

    @Test("JSON output must be an object; a choice must be one of the options")
    func structured() throws {
        #expect(try guardian.check("{\"a\":1}", format: .json(schema: .object([:])), rules: english) == "{\"a\":1}")
        #expect(throws: ProviderFailure.self) { try guardian.check("[1]", format: .json(schema: .object([:])), rules: english) }
        #expect(try guardian.check(" calm\n", format: .choice(["calm"]), rules: english) == "calm")
        #expect(throws: ProviderFailure.self) { try guardian.check("Calm", format: .choice(["calm"]), rules: english) }
    }

    @Test("the privacy guard finds dates, years, times, coordinates, e-mail addresses, phone numbers and ids", arguments: [
        "Born: 1990-05-17", "Birthday: 17/05/1990", "Born on May 17", "born 17 March", "Year: 1990", "Time: 14:35", "at 7 pm",
        "Place: 50.4501, 30.5234", "Latitude 50° N", "ada@example.com", "Phone +380 44 123 4567",
        "User 0192f3a4-5b6c-7d8e-9f01-23456789abcd",
    ])
    func privacyFindings(text: String) {
        #expect(PrivacyGuard().finding(in: text) != nil, "\(text)")
    }

    @Test("descriptor prompts pass the privacy guard")
    func descriptorsPass() {
        for text in ["Chinese zodiac animal: Horse", "Day master: Yang Metal (庚)", "Year pillar: 甲子 Wood Rat",
                     "Weekday: Tuesday", "Season: late autumn", "Element balance: Metal 3, Wood 2, Water 1, Fire 1, Earth 1",
                     "Write today's fortune in at most 200 characters."] {
            #expect(PrivacyGuard().finding(in: text) == nil, "\(text)")
        }
    }
}

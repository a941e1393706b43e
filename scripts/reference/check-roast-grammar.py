#!/usr/bin/env python3
"""Checks RoastMeLater's local roast grammar (the words the service writes when no model answers) by expanding every
text it can write, for every request it can get.

  python3 scripts/reference/check-roast-grammar.py [--samples N] [--seed S] [path/to/roasts.json]

Standard library only. The grammar file is `Services/Content/Sources/RoastMeLater/Catalogue/roasts.json`: one task,
`roast`, a JSON object of rule name -> alternatives, with `{rule}` and `{rule@key}` slots as `LocalGenerator` in
`Shared/LanternLLM/LocalGenerator.swift` reads them (`{rule@key}` takes `rule.<value of key>` when the grammar has
one, else `rule`).

It checks the structure (every rule the layout below names, with its number of alternatives; every `{rule@key}`
with its plain `rule`; no rule that can reach itself), then enumerates every alternative, not a random draw, for
every language x category x heat x mood, and fails (exit 1, printing each offender) on: an expansion over 220
characters (len() of the NFC text); a capitalised word where no sentence starts (outside the allow-list, which the
service's name guard also lets through); a double space; an emoji or other pictograph; a word or phrase of the
blocklist (the output guard's own list, `Blocklist.standard` in `Shared/LanternLLM/OutputGuard.swift`, and this
script's words for profanity, insults and identities a roast must not touch); a text the output guard's language
check would reject. It prints the number of expansions checked, the longest, and random expansions per language for
a human to read.
"""
import argparse
import itertools
import json
import pathlib
import random
import re
import sys
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "Services/Content/Sources/RoastMeLater/Catalogue/roasts.json"
LIMIT = 220

LANGUAGES = ["en", "vi"]
CATEGORIES = ["meetings", "deadlines", "email", "coworkers", "boss", "remote", "tech", "office", "premium"]
HEATS = ["mild", "medium", "hot"]
MOODS = ["stressed", "frustrated", "bored", "tired", "annoyed", "none"]
DESCRIPTORS = {"language": LANGUAGES, "category": CATEGORIES, "heat": HEATS, "mood": MOODS}

SENTENCE_ENDS = ".!?…"
CLOSING = "\"'”’»)]"
OPENING = "\"'“‘«([" 

# Capitalised words the service's name guard lets through anywhere in a sentence.
ALLOWED_CAPITALISED = {
    "I", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    "CEO", "HR", "IT", "CC", "OK", "AI", "PDF", "Wi-Fi", "Excel", "PowerPoint", "Zoom",
    "Tết",
}
# Vietnamese weekday names: "thứ Hai" … "thứ Bảy", "Chủ Nhật" (either word may be capitalised).
VI_WEEKDAY_NUMBERS = {"Hai", "Ba", "Tư", "Năm", "Sáu", "Bảy"}

# Blocklist.standard (Shared/LanternLLM/OutputGuard.swift), which the service applies to every local text too.
GUARD_PATTERNS = [
    ("link", re.compile(r"(?i)\b(?:https?://|www\.)\S+")),
    ("link", re.compile(r"(?i)\b[a-z0-9-]+\.(?:com|net|org|io|ru|ua|info|biz|xyz|app|ly)\b")),
    ("e-mail", re.compile(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b")),
    ("phone", re.compile(r"\+?\d[\d\s().-]{6,}\d")),
]
GUARD_WORDS = {"nigger", "nigga", "faggot", "fag", "retard", "retarded", "kike", "spic", "chink", "tranny", "dyke",
               "wetback", "gook", "coon", "kurwa", "хохол", "жид", "москаль", "підар", "пидор"}
GUARD_PHRASES = [
    "stop taking your", "stop your medication", "skip your medication", "double your dose", "increase your dose",
    "instead of seeing a doctor", "don't see a doctor", "do not see a doctor", "no need for a doctor",
    "invest in", "buy shares", "buy stock", "sell your shares", "put your savings", "take out a loan",
    "bet on", "bet your", "buy crypto", "buy bitcoin", "lottery ticket", "guaranteed return",
    "припиніть приймати", "не йдіть до лікаря", "інвестуйте в", "візьміть кредит", "купіть акції",
]
# This script's own: profanity, insults, and what a roast never punches at (gender, age, origin, religion, body,
# looks, health, sexuality, family, money troubles). Whole words (Vietnamese: whole syllable sequences).
BLOCK_EN = {
    "fuck", "fucking", "shit", "damn", "hell", "crap", "ass", "arse", "bitch", "bastard", "piss", "bloody", "sucks",
    "stupid", "idiot", "moron", "dumb", "ugly", "fat", "lazy", "loser", "pathetic", "worthless", "useless",
    "kill", "killed", "murder", "die", "dies", "dead", "death", "suicide", "drunk", "sexy", "naked",
    "gay", "lesbian", "girl", "girls", "boy", "boys", "woman", "women", "lady", "ladies", "guy", "guys",
    "grandma", "grandpa", "mom", "mum", "dad", "mother", "father", "wife", "husband", "kids", "pregnant",
    "religion", "religious", "god", "jesus", "church", "pray", "race", "racist", "foreign", "foreigner", "accent",
    "old", "elderly", "boomer", "millennial", "salary", "paycheck", "broke", "debt", "rent", "poor", "bankrupt",
    "sick", "illness", "disease", "diagnosis", "therapy", "therapist", "medication", "pills", "disabled",
    "crazy", "insane", "psycho", "lame", "bald", "weight", "diet",
}
BLOCK_VI = [
    "ngu", "đần", "khùng", "điên", "béo", "mập", "xấu", "già", "đm", "vcl", "vãi", "đéo", "địt", "lồn", "cặc",
    "óc chó", "mẹ", "bố", "vợ", "chồng", "lương", "nợ", "bệnh", "ốm", "thuốc", "chết", "giết", "tôn giáo",
    "đồng tính", "đàn bà", "gái", "con trai", "hói", "ăn kiêng",
]

# LanguageCheck.commonWords (Shared/LanternLLM/OutputGuard.swift).
COMMON_WORDS = {
    "en": {"the", "you", "your", "is", "are", "and", "of", "to", "a", "in", "will", "be", "it", "that", "with", "for",
           "today", "what", "not", "as", "at", "on", "this", "may", "can", "have", "let"},
    "it": {"il", "la", "di", "che", "è", "per", "un", "una", "non", "sono", "tuo", "tua", "oggi", "del", "della", "ti",
           "con", "le", "si", "gli"},
    "es": {"el", "la", "de", "que", "y", "en", "un", "una", "tu", "es", "hoy", "por", "con", "los", "las", "para", "no",
           "te"},
    "fr": {"le", "la", "de", "et", "un", "une", "est", "tu", "ton", "ta", "les", "des", "pour", "aujourd'hui", "que",
           "pas", "vous", "votre"},
    "de": {"der", "die", "das", "und", "ist", "du", "dein", "deine", "nicht", "ein", "eine", "heute", "mit", "zu", "den",
           "sich"},
    "pt": {"o", "a", "de", "que", "e", "do", "da", "em", "um", "uma", "você", "seu", "sua", "hoje", "não", "para",
           "com"},
    "vi": {"bạn", "của", "và", "là", "có", "không", "một", "những", "được", "trong", "hôm", "nay", "người", "này", "sẽ",
           "với"},
}

SLOT = re.compile(r"\{([^{}]+)\}")


def fail_structure(problems):
    for problem in problems:
        print(f"STRUCTURE: {problem}")
    sys.exit(1)


def load(path):
    data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or list(data) != ["roast"]:
        fail_structure([f"the file must hold exactly one task, `roast` (it holds {list(data)})"])
    grammar = data["roast"]
    problems = []
    if not isinstance(grammar, dict):
        fail_structure(["`roast` is not an object of rules"])
    for name, alternatives in grammar.items():
        if not isinstance(alternatives, list) or not alternatives or not all(isinstance(a, str) and a for a in alternatives):
            problems.append(f"rule `{name}` must be a non-empty array of non-empty strings")
    if problems:
        fail_structure(problems)
    return grammar


def expected_layout():
    """Rule name -> the number of alternatives it must have (None: any number, at least one)."""
    layout = {"start": 1, "roast": 4}
    for language in LANGUAGES:
        layout[f"roast.{language}"] = 4
        layout[f"opener_{language}"] = 4
        layout.update({f"opener_{language}.{mood}": 4 for mood in MOODS if mood != "none"})
        layout[f"closer_{language}"] = 4
        layout.update({f"closer_{language}.{heat}": 4 for heat in HEATS})
        layout[f"core_{language}"] = 1
        for category in CATEGORIES:
            layout[f"core_{language}.{category}"] = 1
            layout[f"{category}_{language}"] = None
            layout.update({f"{category}_{language}.{heat}": 6 for heat in HEATS})
    return layout


def rules_reached(grammar, slot):
    if "@" not in slot:
        return [slot] if slot in grammar else []
    base = slot.split("@", 1)[0]
    return [name for name in grammar if name == base or name.startswith(base + ".")]


def check_structure(grammar):
    problems = []
    layout = expected_layout()
    for name, count in layout.items():
        if name not in grammar:
            problems.append(f"missing rule `{name}`")
        elif count is not None and len(grammar[name]) != count:
            problems.append(f"rule `{name}` has {len(grammar[name])} alternatives, expected {count}")
    for name in grammar:
        if name not in layout:
            problems.append(f"unexpected rule `{name}`")
    if grammar.get("start") != ["{roast@language}"]:
        problems.append("`start` must be [\"{roast@language}\"]")
    if grammar.get("roast") != grammar.get("roast.en"):
        problems.append("`roast` (the fallback) must hold the same alternatives as `roast.en`")
    for language in LANGUAGES:
        templates = grammar.get(f"roast.{language}", [])
        for template in templates:
            slots = SLOT.findall(template)
            allowed = {f"opener_{language}@mood", f"core_{language}@category", f"closer_{language}@heat"}
            if f"core_{language}@category" not in slots or not set(slots) <= allowed:
                problems.append(f"`roast.{language}` template `{template}` must combine opener/core/closer of its language")
        if grammar.get(f"core_{language}") != [f"{{office_{language}@heat}}"]:
            problems.append(f"`core_{language}` must be [\"{{office_{language}@heat}}\"]")
        for category in CATEGORIES:
            if grammar.get(f"core_{language}.{category}") != [f"{{{category}_{language}@heat}}"]:
                problems.append(f"`core_{language}.{category}` must be [\"{{{category}_{language}@heat}}\"]")
    for name, alternatives in grammar.items():
        for alternative in alternatives:
            if alternative != unicodedata.normalize("NFC", alternative):
                problems.append(f"`{name}`: not NFC-normalised: {alternative!r}")
            if alternative != alternative.strip():
                problems.append(f"`{name}`: leading or trailing whitespace: {alternative!r}")
            if alternative.count("{") != alternative.count("}"):
                problems.append(f"`{name}`: unbalanced braces: {alternative!r}")
            for slot in SLOT.findall(alternative):
                if "@" in slot:
                    base, key = slot.split("@", 1)
                    if base not in grammar:
                        problems.append(f"`{{{slot}}}` in `{name}` needs a plain rule `{base}`")
                    if key not in DESCRIPTORS:
                        problems.append(f"`{{{slot}}}` in `{name}`: unknown descriptor `{key}`")
                    for reached in rules_reached(grammar, slot):
                        value = reached[len(base) + 1:]
                        if reached != base and value not in DESCRIPTORS.get(key, []):
                            problems.append(f"rule `{reached}` is named for `{value}`, not a value of `{key}`")
                elif slot not in grammar:
                    problems.append(f"`{{{slot}}}` in `{name}` is not a rule")
    # No rule may reach itself (the same walk as Grammar.validate).
    state = {}

    def visit(rule, path):
        if state.get(rule) is True:
            return
        if state.get(rule) is False:
            problems.append("rules refer to themselves: " + " -> ".join(path + [rule]))
            return
        state[rule] = False
        for alternative in grammar.get(rule, []):
            for slot in SLOT.findall(alternative):
                for reached in rules_reached(grammar, slot):
                    visit(reached, path + [rule])
        state[rule] = True

    for rule in sorted(grammar):
        visit(rule, [])
    # Core lines: whole sentences addressed to the reader; openers and closers: whole sentences too.
    you = {"en": re.compile(r"(?i)\b(?:you|your|you're|you've|you'll|you'd|yours|yourself)\b"),
           "vi": re.compile(r"(?i)(?<!\w)bạn(?!\w)")}
    seen = {}
    for language in LANGUAGES:
        for category in CATEGORIES:
            for heat in HEATS:
                for line in grammar.get(f"{category}_{language}.{heat}", []):
                    if line[-1] not in SENTENCE_ENDS and not (line[-1] in CLOSING and line[-2] in SENTENCE_ENDS):
                        problems.append(f"core line does not end a sentence: {line!r}")
                    if not you[language].search(line):
                        problems.append(f"core line does not address the reader: {line!r}")
                    if line in seen:
                        problems.append(f"core line used twice ({seen[line]}, {category}.{heat}): {line!r}")
                    seen[line] = f"{category}.{heat}"
        for name in [f"opener_{language}", f"closer_{language}"]:
            for rule in [r for r in grammar if r == name or r.startswith(name + ".")]:
                for line in grammar[rule]:
                    if line[-1] not in SENTENCE_ENDS:
                        problems.append(f"`{rule}`: must end with . ! ? or …: {line!r}")
    # Vietnamese typed without its diacritics: real lines carry them on well over a third of their syllables.
    for name, alternatives in grammar.items():
        if "_vi" not in name:
            continue
        for line in alternatives:
            words = re.findall(r"[^\W\d_]+", SLOT.sub("", line))
            if words and sum(1 for w in words if any(ord(c) > 127 for c in w)) / len(words) < 0.35:
                problems.append(f"`{name}`: Vietnamese without its diacritics? {line!r}")
    if problems:
        fail_structure(list(dict.fromkeys(problems)))


def expansions(grammar, rule, values):
    """Every text `rule` can expand to for these descriptor values, as LocalGenerator expands it."""
    out = []
    for alternative in grammar[rule]:
        parts = []
        last = 0
        for match in SLOT.finditer(alternative):
            parts.append([alternative[last:match.start()]])
            slot = match.group(1)
            if "@" in slot:
                base, key = slot.split("@", 1)
                specific = f"{base}.{values[key]}"
                slot = specific if specific in grammar else base
            parts.append(expansions(grammar, slot, values))
            last = match.end()
        parts.append([alternative[last:]])
        out.extend("".join(pieces) for pieces in itertools.product(*parts))
    return out


def is_emoji(char):
    code = ord(char)
    return (unicodedata.category(char) == "So" or 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF
            or code in (0x200D, 0xFE0F, 0x20E3))


def capitalisation_problems(text):
    problems = []
    tokens = text.split(" ")
    for index, raw in enumerate(tokens):
        word = raw.strip(OPENING + CLOSING + ".,;:!?…")
        if not word or not any(c.isalpha() for c in word):
            continue
        first = next(c for c in word if c.isalpha())
        if not first.isupper():
            continue
        previous = tokens[index - 1].rstrip(CLOSING) if index > 0 else ""
        sentence_start = index == 0 or (previous and previous[-1] in SENTENCE_ENDS)
        # A quote or bracket opening the text does not move the sentence start.
        if sentence_start:
            continue
        core = re.split(r"['’]", word)[0]  # CC'd -> CC, I'll -> I
        if word in ALLOWED_CAPITALISED or core in ALLOWED_CAPITALISED:
            continue
        before = tokens[index - 1].strip(OPENING + CLOSING + ".,;:!?…") if index > 0 else ""
        after = tokens[index + 1].strip(OPENING + CLOSING + ".,;:!?…") if index + 1 < len(tokens) else ""
        if word in VI_WEEKDAY_NUMBERS and before.lower() == "thứ":
            continue
        if (word == "Nhật" and before.lower() == "chủ") or (word == "Chủ" and after.lower() == "nhật"):
            continue
        if word == "Thứ" and after in VI_WEEKDAY_NUMBERS:
            continue
        after_colon = previous.endswith(":")
        problems.append(f"capitalised word `{word}`" + (" after a colon" if after_colon else "") + " where no sentence starts")
    return problems


def language_problem(text, expected):
    """LanguageCheck.problem for English and Vietnamese."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "no letters"
    latin = sum(1 for c in letters if ord(c) < 0x0250 or 0x1E00 <= ord(c) <= 0x1EFF)
    if latin / len(letters) < 0.9:
        return "not in Latin script"
    words = [w for w in re.split(r"[^\w']+", text.lower()) if w and any(c.isalpha() for c in w)]
    words = ["".join(c for c in w if c.isalpha() or c == "'") for w in words]
    scores = {language: sum(1 for w in words if w in common) for language, common in COMMON_WORDS.items()}
    own = scores[expected]
    other, best = max(((language, score) for language, score in scores.items() if language != expected), key=lambda p: p[1])
    if best >= 2 and best > own:
        return f"reads as {other} ({best} common words against {own})"
    if len(words) >= 6 and own == 0:
        return "no common words of its language"
    return None


def blocklist_problems(text, language):
    problems = []
    for name, pattern in GUARD_PATTERNS:
        if pattern.search(text):
            problems.append(f"output guard: {name}")
    lower = text.lower()
    tokens = [t for t in re.split(r"[^\w']+", lower) if t]
    tokens = ["".join(c for c in t if c.isalpha() or c == "'") for t in tokens]
    bare = {t.strip("'") for t in tokens} | {re.split(r"'", t)[0] for t in tokens}
    for word in sorted(bare & GUARD_WORDS):
        problems.append(f"output guard word `{word}`")
    for phrase in GUARD_PHRASES:
        if phrase in lower:
            problems.append(f"output guard phrase `{phrase}`")
    for word in sorted(bare & BLOCK_EN):
        problems.append(f"blocked word `{word}`")
    if language == "vi":
        for phrase in BLOCK_VI:
            if re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", lower):
                problems.append(f"blocked word `{phrase}`")
    return problems


def check_text(text, language):
    problems = []
    length = len(unicodedata.normalize("NFC", text))
    if length > LIMIT:
        problems.append(f"{length} characters, over {LIMIT}")
    if "  " in text or text != text.strip():
        problems.append("double or stray space")
    if any(is_emoji(c) for c in text):
        problems.append("emoji or pictograph")
    odd = sorted({c for c in text if not (c.isalnum() or c in " .,;:!?…'\"()-_’“”")})
    if odd:
        problems.append(f"unexpected characters {odd}")
    if "#" in text:
        problems.append("hashtag")
    problems += capitalisation_problems(text)
    problem = language_problem(text, language)
    if problem:
        problems.append(f"language check: {problem}")
    problems += blocklist_problems(text, language)
    if language == "vi" and not re.search(r"[àáảãạăằắẳẵặâầấẩẫậđèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵ]", text.lower()):
        problems.append("Vietnamese text without a single diacritic")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", default=str(DEFAULT))
    parser.add_argument("--samples", type=int, default=10, help="random expansions to print per language")
    parser.add_argument("--seed", type=int, default=None, help="seed for the samples (default: a fresh one)")
    args = parser.parse_args()

    grammar = load(args.path)
    check_structure(grammar)

    checked = 0
    unique = {language: set() for language in LANGUAGES}
    offenders = {}
    longest = ""
    for language, category, heat, mood in itertools.product(LANGUAGES, CATEGORIES, HEATS, MOODS):
        values = {"language": language, "category": category, "heat": heat, "mood": mood}
        for text in expansions(grammar, "start", values):
            checked += 1
            if text in unique[language]:
                continue
            unique[language].add(text)
            if len(text) > len(longest):
                longest = text
            problems = check_text(text, language)
            if problems:
                offenders.setdefault(text, (f"{language}/{category}/{heat}/{mood}", problems))

    alternatives = sum(len(v) for v in grammar.values())
    print(f"grammar: {len(grammar)} rules, {alternatives} alternatives")
    print(f"expansions checked: {checked} ({sum(len(u) for u in unique.values())} distinct: "
          + ", ".join(f"{language} {len(unique[language])}" for language in LANGUAGES) + ")")
    print(f"longest ({len(longest)} characters): {longest}")
    for language in LANGUAGES:
        texts = sorted(unique[language])
        print(f"longest {language}: {max(len(t) for t in texts)} characters")

    if offenders:
        # One line per offending text; the same problem in many combinations is grouped by its first words.
        print(f"\nFAILED: {len(offenders)} distinct expansions with problems")
        for text, (where, problems) in sorted(offenders.items(), key=lambda item: item[1][0]):
            print(f"- [{where}] {'; '.join(problems)}\n    {text}")
        sys.exit(1)

    rng = random.Random(args.seed)
    for language in LANGUAGES:
        print(f"\n{args.samples} random expansions ({language}):")
        for _ in range(args.samples):
            values = {"language": language, "category": rng.choice(CATEGORIES), "heat": rng.choice(HEATS),
                      "mood": rng.choice(MOODS)}
            text = rng.choice(expansions(grammar, "start", values))
            print(f"- [{values['category']}/{values['heat']}/{values['mood']}] {text}")
    print("\nOK")


if __name__ == "__main__":
    main()

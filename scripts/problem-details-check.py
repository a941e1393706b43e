#!/usr/bin/env python3
"""Reads the problems a test run answered (LANTERN_PROBLEM_LOG: one problem+json per line, written by every
process's `Problem.response()`) and fails on any `detail` that is not a sentence for a person: a type or error dump,
a source path, a memory address, an `Optional(…)`. Run by scripts/test.sh after the suite (issue #23 item 3).

  python3 scripts/problem-details-check.py .lantern/test/problems.jsonl
"""
import json
import re
import sys

DUMPS = [
    (re.compile(r"\b[A-Z][A-Za-z0-9]*(Error|Failure)\s*\("), "an error value printed (Type(…))"),
    (re.compile(r"\b(DecodingError|EncodingError|JWTKitError|ASN1Error|PolicyFailure|CertificateValidationResult|CodingKeys)\b"),
     "a library's error type"),
    (re.compile(r"[A-Za-z0-9_/]+\.swift:\d+"), "a source path"),
    (re.compile(r"\bOptional\("), "an Optional printed"),
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "a memory address"),
    (re.compile(r"debugDescription|underlyingError|codingPath"), "a decoder's context"),
    (re.compile(r"Cannot initialize \w+ from invalid"), "a decoder's message"),
]
LONGEST = 600


def main(path):
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except FileNotFoundError:
        sys.exit(f"problem-details-check: {path} is missing: no process recorded its problems (LANTERN_PROBLEM_LOG)")
    details, bad = {}, []
    for line in lines:
        try:
            problem = json.loads(line)
        except ValueError:
            continue
        detail = problem.get("detail")
        if not isinstance(detail, str):
            continue
        details.setdefault(detail, problem.get("code"))
    for detail, code in sorted(details.items()):
        reasons = [why for pattern, why in DUMPS if pattern.search(detail)]
        if len(detail) > LONGEST:
            reasons.append(f"{len(detail)} characters")
        if reasons:
            bad.append(f"  {code}: {', '.join(reasons)}: {detail[:300]!r}")
    print(f"problem-details-check: {len(lines)} problems answered, {len(details)} distinct details read")
    if len(details) < 50:
        sys.exit("problem-details-check: fewer than 50 distinct details: is LANTERN_PROBLEM_LOG reaching the services?")
    if bad:
        print("details that are not sentences for a person:", *bad, sep="\n")
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".lantern/test/problems.jsonl")

#!/usr/bin/env python3
"""Decodes a PNG on its own, without the code under test or any imaging library, and describes it as one JSON object,
so tests can check what Lantern's image code writes (chunks kept, metadata gone, the same picture) independently.

  python3 scripts/reference/png-inspect.py FILE.png

Standard library only (zlib, struct, json, hashlib): it runs where Pillow is not installed. Exit 0 with the JSON
object on stdout when the file is a valid PNG that decodes completely; exit 1 with {"error": "..."} on any defect
(bad signature, a chunk's CRC-32, chunk order, IHDR fields, palette or tRNS, zlib stream truncated or followed by
garbage, too little or too much image data, an unknown filter type, a palette index past the palette); exit 2 with
{"error": "usage: ..."} when called wrongly.

It checks the signature and every chunk: its CRC-32 (over type and data), IHDR first (13 bytes, a valid colour type
and bit depth, compression and filter method 0, interlace 0 or 1), one PLTE before the IDATs (required for colour
type 3, refused for greyscale), tRNS after PLTE and before IDAT with the length its colour type needs, IDATs
consecutive, IEND last and empty with nothing after it, and no unknown critical chunk. Ancillary chunks are not
otherwise held to the spec's ordering rules. It decodes every colour type and bit depth (greyscale 1/2/4/8/16, RGB
8/16, palette 1/2/4/8, grey+alpha 8/16, RGBA 8/16), plain or Adam7, and refuses images over 50,000,000 pixels.

Output fields:
  width, height, bitDepth, colorType, interlaced (bool)
  chunks          every chunk type in file order (repeated IDATs included)
  ancillary       the distinct chunk types whose first letter is lower case, in order of first appearance
  metadata        the distinct chunk types that carry metadata or personal data: tEXt, zTXt, iTXt, eXIf, tIME, sPLT
                  (it holds a palette name) and every ancillary or private chunk this script does not know; the colour
                  and layout chunks gAMA, cHRM, sRGB, iCCP, sBIT, cICP, mDCv, cLLi, bKGD, pHYs, hIST and tRNS are not
                  metadata (nor is the critical PLTE)
  pixelsSHA256    SHA-256 (hex) of the pixels as 8-bit RGBA, row-major, 4 bytes a pixel, no padding: two PNGs of the
                  same picture compare equal however they were encoded. Greyscale g becomes (g, g, g); samples under
                  8 bits are scaled (x 255, x 85, x 17); 16-bit samples keep their high byte (as libpng's strip_16 and
                  Pillow's RGB/RGBA modes do); tRNS makes the matching colour (compared at the file's bit depth) or
                  palette entry transparent; alpha is 255 otherwise
  opaqueFraction  fraction of pixels with alpha >= 250
  meanRGB         [r, g, b] means over all pixels (transparent ones included), rounded to 1 decimal
  purpleFraction  fraction of "purple-ish" pixels (definition at PURPLE below)
  distinctColors  number of distinct RGBA values, counted up to 100,000 (min(count, 100000))
Fractions are rounded to 6 decimals.
"""
import hashlib
import json
import struct
import sys
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_PIXELS = 50_000_000
DISTINCT_CAP = 100_000

# Colour type -> (samples per pixel, allowed bit depths).
COLOR_TYPES = {0: (1, (1, 2, 4, 8, 16)), 2: (3, (8, 16)), 3: (1, (1, 2, 4, 8)), 4: (2, (8, 16)), 6: (4, (8, 16))}
CRITICAL = {"IHDR", "PLTE", "IDAT", "IEND"}
# Ancillary chunks that only say how to show the pixels (colour space, physical size, background, histogram).
NOT_METADATA = {"gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP", "mDCv", "cLLi", "bKGD", "pHYs", "hIST", "tRNS"}
# Adam7 passes: (x start, y start, x step, y step).
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

# PURPLE: a pixel is purple-ish when alpha >= 128 and, in HSV of its 8-bit RGB, 255 deg <= hue <= 300 deg,
# saturation >= 0.35 and value >= 0.25 (hue 240 is blue, 300 magenta). Evaluated exactly in integers: that hue range
# means blue is the largest channel and green the smallest (B >= R >= G, the ends included: R == B is hue 300), and
# hue = 240 + 60 (R - G) / (B - G) >= 255, i.e. 4 (R - G) >= B - G, i.e. 4R >= B + 3G; saturation (B - G) / B >= 7/20
# is 13B >= 20G; value B / 255 >= 1/4 is B >= 64 (63.75 rounded up). Grey pixels (B == G) fail the saturation test.
# Checked on all 16,777,216 colours against HSV in exact fractions: no difference. Floating-point HSV (colorsys) differs
# on 96 colours, all with a saturation of exactly 7/20 that floats compute as 0.34999...: this rule counts them.


class PNGError(Exception):
    pass


def fail(message):
    raise PNGError(message)


def bit_count(n):
    return n.bit_count() if hasattr(n, "bit_count") else bin(n).count("1")


def table(function):
    """A 256-byte translation table: byte value -> function(value)."""
    return bytes(function(v) for v in range(256))


# ----------------------------------------------------------------------------------------------------------------
# Chunks


def read_chunks(data):
    if len(data) < 8 or data[:8] != SIGNATURE:
        fail("not a PNG: the 8-byte signature is wrong" if len(data) >= 8 else "not a PNG: shorter than the signature")
    chunks = []
    pos = 8
    while True:
        if pos == len(data):
            fail("truncated: the file ends before IEND")
        if pos + 8 > len(data):
            fail(f"truncated: chunk header at byte {pos} is cut off")
        length, raw_type = struct.unpack(">I4s", data[pos:pos + 8])
        if not all(65 <= c <= 90 or 97 <= c <= 122 for c in raw_type):
            fail(f"invalid chunk type {raw_type!r} at byte {pos}")
        name = raw_type.decode("ascii")
        if length > 0x7FFFFFFF:
            fail(f"chunk {name} at byte {pos}: length {length} exceeds 2^31-1")
        end = pos + 12 + length
        if end > len(data):
            fail(f"truncated: chunk {name} at byte {pos} needs {length + 12} bytes, {len(data) - pos} left")
        body = data[pos + 8:pos + 8 + length]
        stored = struct.unpack(">I", data[end - 4:end])[0]
        computed = zlib.crc32(raw_type + body) & 0xFFFFFFFF
        if stored != computed:
            fail(f"CRC mismatch in chunk {name} at byte {pos}: stored {stored:08x}, computed {computed:08x}")
        chunks.append((name, body))
        pos = end
        if name == "IEND":
            if pos != len(data):
                fail(f"{len(data) - pos} byte(s) after IEND")
            return chunks


def check_structure(chunks):
    names = [name for name, _ in chunks]
    if names[0] != "IHDR":
        fail(f"the first chunk is {names[0]}, not IHDR")
    ihdr = chunks[0][1]
    if len(ihdr) != 13:
        fail(f"IHDR is {len(ihdr)} bytes, not 13")
    width, height, depth, color, compression, filtering, interlace = struct.unpack(">IIBBBBB", ihdr)
    if not (1 <= width <= 0x7FFFFFFF and 1 <= height <= 0x7FFFFFFF):
        fail(f"invalid size {width}x{height}")
    if color not in COLOR_TYPES:
        fail(f"invalid colour type {color}")
    if depth not in COLOR_TYPES[color][1]:
        fail(f"bit depth {depth} is not allowed for colour type {color}")
    if compression != 0:
        fail(f"unknown compression method {compression}")
    if filtering != 0:
        fail(f"unknown filter method {filtering}")
    if interlace not in (0, 1):
        fail(f"unknown interlace method {interlace}")
    if width * height > MAX_PIXELS:
        fail(f"refused: {width}x{height} is {width * height} pixels, over the {MAX_PIXELS} limit")

    palette = trns = None
    idat_runs = 0
    seen_idat = False
    previous = None
    for index, (name, body) in enumerate(chunks):
        if index > 0 and name == "IHDR":
            fail("a second IHDR")
        if name == "IEND" and index != len(chunks) - 1:
            fail("IEND is not the last chunk")
        if name == "IEND" and body:
            fail(f"IEND carries {len(body)} bytes of data")
        if name[0].isupper() and name not in CRITICAL:
            fail(f"unknown critical chunk {name}")
        if name == "IDAT":
            if previous != "IDAT":
                idat_runs += 1
                if idat_runs > 1:
                    fail("IDAT chunks are not consecutive")
            seen_idat = True
        elif name == "PLTE":
            if palette is not None:
                fail("a second PLTE")
            if seen_idat:
                fail("PLTE after IDAT")
            if color in (0, 4):
                fail(f"PLTE in a greyscale image (colour type {color})")
            if len(body) == 0 or len(body) % 3 or len(body) // 3 > 256:
                fail(f"PLTE of {len(body)} bytes (must be 3 x 1..256 entries)")
            if color == 3 and len(body) // 3 > (1 << depth):
                fail(f"PLTE has {len(body) // 3} entries, more than {1 << depth} for bit depth {depth}")
            palette = body
        elif name == "tRNS":
            if trns is not None:
                fail("a second tRNS")
            if seen_idat:
                fail("tRNS after IDAT")
            if color in (4, 6):
                fail(f"tRNS in an image with an alpha channel (colour type {color})")
            if color == 3:
                if palette is None:
                    fail("tRNS before PLTE")
                if len(body) > len(palette) // 3:
                    fail(f"tRNS has {len(body)} entries, the palette {len(palette) // 3}")
            elif len(body) != (2 if color == 0 else 6):
                fail(f"tRNS of {len(body)} bytes for colour type {color} (needs {2 if color == 0 else 6})")
            trns = body
        previous = name
    if names[-1] != "IEND":
        fail("IEND is not the last chunk")
    if not seen_idat:
        fail("no IDAT chunk")
    if color == 3 and palette is None:
        fail("colour type 3 without PLTE")
    idat = b"".join(body for name, body in chunks if name == "IDAT")
    return width, height, depth, color, interlace == 1, palette, trns, idat


# ----------------------------------------------------------------------------------------------------------------
# Decompression and unfiltering


def inflate(idat, expected):
    decompressor = zlib.decompressobj()
    try:
        out = decompressor.decompress(idat, expected)
        if len(out) == expected and not decompressor.eof:
            if decompressor.decompress(decompressor.unconsumed_tail, 1):
                fail(f"the zlib stream holds more image data than the {expected} bytes the header calls for")
    except zlib.error as error:
        fail(f"zlib stream is corrupt: {error}")
    if not decompressor.eof:
        if len(out) < expected:
            fail(f"zlib stream is truncated: it stops after {len(out)} of the {expected} bytes of image data")
        fail("zlib stream is truncated: all image data is there but the stream's end (and Adler-32 check) is missing")
    if len(out) < expected:
        fail(f"too little image data: {len(out)} bytes, the header calls for {expected}")
    if decompressor.unused_data:
        fail(f"{len(decompressor.unused_data)} bytes of trailing garbage after the zlib stream in IDAT")
    return out


def unfilter_rows(rows, filters, h, row_len, unit):
    """Row by row: None, Sub and Up run at C speed (Up as a carry-less big-integer add); Average and Paeth walk each of
    the `unit` byte lanes of the row in a tight loop."""
    out = bytearray(h * row_len)
    prior = bytes(row_len)
    low7 = int.from_bytes(b"\x7f" * row_len, "big")
    high = int.from_bytes(b"\x80" * row_len, "big")
    for r in range(h):
        row = rows[r * row_len:(r + 1) * row_len]
        kind = filters[r]
        if kind == 0:
            cur = row
        elif kind == 1:  # Sub: a running sum per lane, by doubling shifts (log2 of the row's pixels big-integer adds)
            s = int.from_bytes(row, "big")
            shift = unit
            while shift < row_len:
                t = s >> (8 * shift)
                s = ((s & low7) + (t & low7)) ^ ((s ^ t) & high)
                shift *= 2
            cur = s.to_bytes(row_len, "big")
        elif kind == 2:  # Up: byte-wise (x + b) mod 256 as one big-integer add with no carry between bytes
            x, b = int.from_bytes(row, "big"), int.from_bytes(prior, "big")
            cur = (((x & low7) + (b & low7)) ^ ((x ^ b) & high)).to_bytes(row_len, "big")
        elif kind == 3:  # Average
            cur = bytearray(row_len)
            for k in range(unit):
                lane = []
                append = lane.append
                a = 0
                for x, b in zip(row[k::unit], prior[k::unit]):
                    a = (x + ((a + b) >> 1)) & 255
                    append(a)
                cur[k::unit] = bytes(lane)
        else:  # Paeth
            cur = bytearray(row_len)
            for k in range(unit):
                above = prior[k::unit]
                lane = []
                append = lane.append
                a = 0
                for x, b, c in zip(row[k::unit], above, b"\0" + above[:-1]):
                    pa = b - c
                    pb = a - c
                    pc = pa + pb
                    if pa < 0:
                        pa = -pa
                    if pb < 0:
                        pb = -pb
                    if pc < 0:
                        pc = -pc
                    if pa <= pb and pa <= pc:
                        a = (x + a) & 255
                    elif pb <= pc:
                        a = (x + b) & 255
                    else:
                        a = (x + c) & 255
                    append(a)
                cur[k::unit] = bytes(lane)
        out[r * row_len:(r + 1) * row_len] = cur
        prior = cur
    return out


def unfilter_wavefront(rows, filters, h, row_len, unit):
    """All rows at once along anti-diagonals: byte (row r, column c) needs only (r, c-1), (r-1, c) and (r-1, c-1), so a
    whole anti-diagonal r + c = t is computed from the two before it, every filter type at once, as 16-bit fields of
    big integers (SWAR). Strided slices gather and scatter a diagonal at C speed. Worth it when the image is large in
    both directions and has many Average/Paeth rows, which the row-by-row loops would walk byte by byte."""
    cols = row_len // unit
    padded_len = row_len + unit  # one zero column on the left, one zero row on top
    out = bytearray(padded_len * (h + 1))
    step = row_len - unit  # in `rows` (no padding), diagonal neighbours are this far apart
    present = set(filters)
    masks = {}
    for kind in (1, 2, 3, 4):
        if kind in present:
            per_row = filters.translate(table(lambda v, kind=kind: 255 if v == kind else 0))
            doubled = bytearray(2 * h)
            doubled[0::2] = per_row
            doubled[1::2] = per_row
            masks[kind] = bytes(doubled)

    def widen(parts, n):
        buf = bytearray(2 * n)
        buf[1::2] = b"".join(parts)
        return int.from_bytes(buf, "big")

    for t in range(cols + h - 1):
        r0 = max(0, t - cols + 1)
        r1 = min(h - 1, t)
        m = r1 - r0 + 1
        n = m * unit
        ones = int.from_bytes(b"\x00\x01" * n, "big")
        full = ones * 0xFFFF
        low8 = ones * 0x00FF
        low10 = ones * 0x03FF
        bias = ones * 0x0400
        x_parts, a_parts, b_parts, c_parts = [], [], [], []
        span = (m - 1) * row_len + 1
        for k in range(unit):
            s = t * unit + k + r0 * step
            x_parts.append(rows[s:s + (m - 1) * step + 1:step])
            o = padded_len + (t + 1) * unit + k + r0 * row_len
            a_parts.append(out[o - unit:o - unit + span:row_len])
            b_parts.append(out[o - padded_len:o - padded_len + span:row_len])
            c_parts.append(out[o - padded_len - unit:o - padded_len - unit + span:row_len])
        X = widen(x_parts, n)
        A = widen(a_parts, n)
        B = widen(b_parts, n)
        C = widen(c_parts, n)
        kind_masks = {kind: int.from_bytes(mask[2 * r0:2 * r1 + 2] * unit, "big") for kind, mask in masks.items()}
        pred = 0
        if 1 in kind_masks:
            pred |= A & kind_masks[1]
        if 2 in kind_masks:
            pred |= B & kind_masks[2]
        if 3 in kind_masks:
            pred |= (((A + B) >> 1) & low8) & kind_masks[3]
        if 4 in kind_masks:
            # Every field lies in 0..510 < 1024, so (y | bias) - x keeps bit 10 set exactly where y >= x.
            def absdiff(x, y):
                p = (x | bias) - y
                q = (y | bias) - x
                ge = ((p >> 10) & ones) * 0xFFFF
                return ((p & ge) | (q & (full ^ ge))) & low10

            def at_most(x, y):
                return ((((y | bias) - x) >> 10) & ones) * 0xFFFF

            pa = absdiff(B, C)
            pb = absdiff(A, C)
            pc = absdiff(A + B, C + C)
            choose_a = at_most(pa, pb) & at_most(pa, pc)
            choose_b = (full ^ choose_a) & at_most(pb, pc)
            choose_c = full ^ (choose_a | choose_b)
            pred |= ((A & choose_a) | (B & choose_b) | (C & choose_c)) & kind_masks[4]
        result = (((X + pred) & low8).to_bytes(2 * n, "big"))[1::2]
        for k in range(unit):
            o = padded_len + (t + 1) * unit + k + r0 * row_len
            out[o:o + span:row_len] = result[k * m:(k + 1) * m]
    return b"".join(out[(r + 1) * padded_len + unit:(r + 2) * padded_len] for r in range(h))


def unfilter(data, offset, w, h, bits_per_pixel, where):
    """Unfilters one (sub-)image of h rows starting at `offset` in the inflated data; returns the bytes without the
    filter-type bytes and the offset after it."""
    row_len = (w * bits_per_pixel + 7) // 8
    unit = max(1, bits_per_pixel // 8)
    end = offset + h * (row_len + 1)
    filters = bytes(data[offset:end:row_len + 1])
    if max(filters) > 4:
        r = next(i for i, f in enumerate(filters) if f > 4)
        fail(f"unknown filter type {filters[r]} on row {r}{where}")
    rows = b"".join(data[offset + r * (row_len + 1) + 1:offset + (r + 1) * (row_len + 1)] for r in range(h))
    # Rough costs in microseconds, measured with CPython 3.11: the row loops pay per byte mostly for Average and Paeth
    # rows; the diagonals pay per diagonal, and per byte more for each filter type present (Paeth most).
    counts = [filters.count(kind) for kind in range(5)]
    cols = row_len // unit
    by_rows = h * 3 + row_len * (0.02 * counts[1] + 0.006 * counts[2] + 0.17 * counts[3] + 0.21 * counts[4])
    kinds = sum(1 for kind in range(1, 5) if counts[kind])
    by_diagonals = (cols + h - 1) * 22 + h * row_len * (0.04 + 0.025 * (counts[4] > 0) + 0.008 * kinds)
    if cols > 1 and h > 1 and by_diagonals < by_rows:
        return unfilter_wavefront(rows, filters, h, row_len, unit), end
    return unfilter_rows(rows, filters, h, row_len, unit), end


# ----------------------------------------------------------------------------------------------------------------
# Conversion to 8-bit RGBA


def unpack_samples(raw, w, h, row_len, depth):
    """Samples of 1, 2 or 4 bits -> one byte each (unscaled), the padding bits at each row's end dropped."""
    per_byte = 8 // depth
    maximum = (1 << depth) - 1
    out = bytearray(len(raw) * per_byte)
    for j in range(per_byte):
        shift = 8 - depth * (j + 1)
        out[j::per_byte] = raw.translate(table(lambda v: (v >> shift) & maximum))
    stride = row_len * per_byte
    if stride == w:
        return bytes(out)
    return b"".join(out[r * stride:r * stride + w] for r in range(h))


def matches(planes, key):
    """An integer with byte 0x01 wherever every plane's byte equals the corresponding key byte, else 0x00."""
    result = -1
    for plane, value in zip(planes, key):
        result &= int.from_bytes(plane.translate(table(lambda v: 1 if v == value else 0)), "big")
    return result


def interleave(n, channels):
    out = bytearray(4 * n)
    for i, channel in enumerate(channels):
        out[i::4] = channel
    return out


def to_rgba(raw, w, h, depth, color, palette, trns):
    n = w * h
    samples_per_pixel = COLOR_TYPES[color][0]
    row_len = (w * samples_per_pixel * depth + 7) // 8
    if depth < 8:
        samples = unpack_samples(raw, w, h, row_len, depth)
    elif depth == 8:
        samples = raw
    else:
        samples = raw[0::2]
    opaque = b"\xff" * n

    if color == 0:
        scale = 255 // ((1 << depth) - 1) if depth < 8 else 1
        grey = samples.translate(table(lambda v: (v * scale) & 255)) if depth < 8 else samples
        alpha = opaque
        if trns is not None:
            key = struct.unpack(">H", trns)[0]
            if depth == 16:
                hit = matches([raw[0::2], raw[1::2]], [key >> 8, key & 255])
                alpha = ((int.from_bytes(opaque, "big") ^ (hit * 255)).to_bytes(n, "big"))
            elif key < (1 << depth):
                alpha = samples.translate(table(lambda v: 0 if v == key else 255))
        return interleave(n, [grey, grey, grey, alpha])

    if color == 2:
        alpha = opaque
        if trns is not None:
            key = struct.unpack(">HHH", trns)
            if depth == 16:
                planes = [raw[i::6] for i in range(6)]
                key_bytes = [b for v in key for b in (v >> 8, v & 255)]
            else:
                planes = [raw[i::3] for i in range(3)]
                key_bytes = list(key)
            if max(key_bytes) <= 255:
                hit = matches(planes, key_bytes)
                alpha = (int.from_bytes(opaque, "big") ^ (hit * 255)).to_bytes(n, "big")
        return interleave(n, [samples[0::3], samples[1::3], samples[2::3], alpha])

    if color == 3:
        entries = len(palette) // 3
        highest = max(samples)
        if highest >= entries:
            fail(f"palette index {highest} past the palette's {entries} entries")
        alphas = (trns or b"") + b"\xff" * (256 - len(trns or b""))
        padded = palette + bytes(3 * (256 - entries))
        return interleave(n, [samples.translate(padded[0::3]), samples.translate(padded[1::3]),
                              samples.translate(padded[2::3]), samples.translate(alphas)])

    if color == 4:
        return interleave(n, [samples[0::2], samples[0::2], samples[0::2], samples[1::2]])

    return bytearray(samples)  # colour type 6


def decode(width, height, depth, color, interlaced, palette, trns, idat):
    bits_per_pixel = COLOR_TYPES[color][0] * depth
    if not interlaced:
        passes = [(0, 0, 1, 1, width, height)]
    else:
        passes = []
        for xs, ys, dx, dy in ADAM7:
            pw = (width - xs + dx - 1) // dx if width > xs else 0
            ph = (height - ys + dy - 1) // dy if height > ys else 0
            passes.append((xs, ys, dx, dy, pw, ph))
    expected = sum(ph * (1 + (pw * bits_per_pixel + 7) // 8) for _, _, _, _, pw, ph in passes if pw and ph)
    data = inflate(idat, expected)
    if not interlaced:
        raw, _ = unfilter(data, 0, width, height, bits_per_pixel, "")
        return to_rgba(raw, width, height, depth, color, palette, trns)
    image = bytearray(4 * width * height)
    offset = 0
    for number, (xs, ys, dx, dy, pw, ph) in enumerate(passes, 1):
        if not (pw and ph):
            continue
        raw, offset = unfilter(data, offset, pw, ph, bits_per_pixel, f" of Adam7 pass {number} ({pw}x{ph})")
        rgba = to_rgba(raw, pw, ph, depth, color, palette, trns)
        row_bytes = 4 * pw
        for r in range(ph):
            base = 4 * ((ys + r * dy) * width + xs)
            row = rgba[r * row_bytes:(r + 1) * row_bytes]
            if dx == 1:
                image[base:base + row_bytes] = row
            else:
                span = 4 * dx * (pw - 1) + 1
                for c in range(4):
                    image[base + c:base + c + span:4 * dx] = row[c::4]
    return image


# ----------------------------------------------------------------------------------------------------------------
# Statistics over the 8-bit RGBA pixels


def purple_count(rgba):
    """Pixels meeting PURPLE, 2^18 at a time, as 16-bit fields of big integers (see PURPLE for the inequalities)."""
    alpha_ok = table(lambda v: 1 if v >= 128 else 0)
    value_ok = table(lambda v: 1 if v >= 64 else 0)
    chunk = 1 << 18
    count = 0
    total = len(rgba) // 4
    for start in range(0, total, chunk):
        part = rgba[4 * start:4 * min(total, start + chunk)]
        n = len(part) // 4
        ones = int.from_bytes(b"\x00\x01" * n, "big")
        bias = ones * 0x8000

        def widen(channel):
            buf = bytearray(2 * n)
            buf[1::2] = channel
            return int.from_bytes(buf, "big")

        r, g, b = widen(part[0::4]), widen(part[1::4]), widen(part[2::4])
        flags = widen((int.from_bytes(part[3::4].translate(alpha_ok), "big")
                       & int.from_bytes(part[2::4].translate(value_ok), "big")).to_bytes(n, "big"))

        def at_least(x, y):  # every field < 0x8000: bit 15 of (x | bias) - y is set exactly where x >= y
            return (((x | bias) - y) >> 15) & ones

        count += bit_count(flags & at_least(b, r) & at_least(r, g) & at_least(13 * b, 20 * g)
                           & at_least(4 * r, b + 3 * g))
    return count


def distinct_colors(rgba):
    colors = set()
    pixels = memoryview(rgba).cast("I")  # one 4-byte item a pixel
    chunk = 1 << 16
    for start in range(0, len(pixels), chunk):
        colors.update(pixels[start:start + chunk])
        if len(colors) >= DISTINCT_CAP:
            return DISTINCT_CAP
    return len(colors)


def inspect(data):
    chunks = read_chunks(data)
    width, height, depth, color, interlaced, palette, trns, idat = check_structure(chunks)
    rgba = bytes(decode(width, height, depth, color, interlaced, palette, trns, idat))
    n = width * height
    assert len(rgba) == 4 * n
    names = [name for name, _ in chunks]
    ancillary = [name for name in dict.fromkeys(names) if name[0].islower()]
    metadata = [name for name in ancillary if name not in NOT_METADATA]
    opaque = n - len(rgba[3::4].translate(None, bytes(range(250, 256))))
    return {
        "width": width,
        "height": height,
        "bitDepth": depth,
        "colorType": color,
        "interlaced": interlaced,
        "chunks": names,
        "ancillary": ancillary,
        "metadata": metadata,
        "pixelsSHA256": hashlib.sha256(rgba).hexdigest(),
        "opaqueFraction": round(opaque / n, 6),
        "meanRGB": [round(sum(rgba[c::4]) / n, 1) for c in range(3)],
        "purpleFraction": round(purple_count(rgba) / n, 6),
        "distinctColors": distinct_colors(rgba),
    }


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(json.dumps({"error": "usage: png-inspect.py FILE.png"}))
        sys.exit(2)
    try:
        with open(sys.argv[1], "rb") as handle:
            data = handle.read()
    except OSError as error:
        print(json.dumps({"error": f"cannot read {sys.argv[1]}: {error.strerror}"}))
        sys.exit(1)
    try:
        result = inspect(data)
    except PNGError as error:
        print(json.dumps({"error": str(error)}))
        sys.exit(1)
    except MemoryError:
        print(json.dumps({"error": "out of memory decoding the image"}))
        sys.exit(1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

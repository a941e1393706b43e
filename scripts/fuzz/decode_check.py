#!/usr/bin/env python3
"""The independent decoder's verdict on sanitized images: for each `<name>.in` / `<name>.out` pair written by
`lantern-fuzz <target> --write-outputs DIR`, an input Pillow decodes must come out decodable, at the same size
and mode. Inputs Pillow cannot decode prove nothing either way and are counted apart."""
import io, os, sys
from PIL import Image
import pillow_heif

pillow_heif.register_heif_opener()
Image.MAX_IMAGE_PIXELS = 40_000_000

def decode(data):
    im = Image.open(io.BytesIO(data))
    im.load()
    return im.size, im.mode

folder = sys.argv[1]
names = sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".in")) if os.path.isdir(folder) else []
both = undecodable = 0
broken = []
for name in names:
    data_in = open(os.path.join(folder, name + ".in"), "rb").read()
    data_out = open(os.path.join(folder, name + ".out"), "rb").read()
    try:
        before = decode(data_in)
    except Exception:
        undecodable += 1
        continue
    try:
        after = decode(data_out)
    except Exception as error:
        broken.append(f"{name}: decoded before, not after ({error})")
        continue
    if after != before:
        broken.append(f"{name}: {before} before, {after} after")
    else:
        both += 1
print(f"{os.path.basename(folder)}: Pillow decoded {both} accepted inputs the same after sanitizing; "
      f"{undecodable} it cannot decode at all; {len(broken)} broken by sanitizing")
for line in broken[:20]:
    print("  " + line)
sys.exit(1 if broken else 0)

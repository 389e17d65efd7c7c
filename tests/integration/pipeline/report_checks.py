#!/usr/bin/env python3
"""What the report tests check with tools other than ours.

  report_checks.py schema SCHEMA DOC      validates DOC against the JSON Schema (python3-jsonschema)
  report_checks.py png FILE               prints "WIDTHxHEIGHT COLOURS INK" of an 8-bit RGB(A) PNG:
                                          its size, the number of distinct colours and the share of
                                          pixels that are not white (read with zlib, no imaging
                                          library)
"""
import json
import struct
import sys
import zlib


def check_schema(schema_path, doc_path):
    import jsonschema
    with open(schema_path) as f:
        schema = json.load(f)
    with open(doc_path) as f:
        doc = json.load(f)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for error in errors:
        print("/".join(str(p) for p in error.path) + ": " + error.message)
    return 1 if errors else 0


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(path + ": not a PNG")
    pos, idat, width, height, depth, colour = 8, b"", 0, 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None:
        raise SystemExit(path + ": only 8-bit RGB or RGBA is read here")
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, offset = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            line[i] = (line[i] + (0, left, up, (left + up) // 2, paeth(left, up, up_left))[kind]) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def describe_png(path):
    width, height, channels, rows = read_png(path)
    colours, ink = set(), 0
    for line in rows:
        for x in range(width):
            pixel = tuple(line[x * channels:x * channels + 3])
            alpha = line[x * channels + 3] if channels == 4 else 255
            colours.add(pixel + (alpha,))
            if alpha > 0 and pixel != (255, 255, 255):
                ink += 1
    print("%dx%d %d %.4f" % (width, height, len(colours), ink / float(width * height)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "schema":
        sys.exit(check_schema(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "png":
        sys.exit(describe_png(sys.argv[2]))
    sys.exit(__doc__)

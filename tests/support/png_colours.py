#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Counts the pixels of given colours in a PNG, with the standard library only (zlib and the
five PNG filters); the report test reads a headless browser's screenshot with it.

Usage: png_colours.py FILE [#rrggbb ...]
Prints "WIDTHxHEIGHT distinct=N", then "#rrggbb COUNT" per colour asked for. 8-bit RGB or
RGBA, not interlaced: what chromium writes. Exits 1 on anything else."""
import collections
import struct
import sys
import zlib


def add_bytes(a, b):
    """a + b byte by byte, modulo 256, on whole rows at once: the high bit of each byte is
    added without carry (xor), the low seven bits with their carry kept inside the byte."""
    n = len(a)
    low = int.from_bytes(b'\x7f' * n, 'big')
    high = int.from_bytes(b'\x80' * n, 'big')
    x, y = int.from_bytes(a, 'big'), int.from_bytes(b, 'big')
    return (((x & low) + (y & low)) ^ ((x ^ y) & high)).to_bytes(n, 'big')


def read_png(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
    width, height, depth, colour_type, _, _, interlace = ihdr
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError(f'unsupported PNG {ihdr}')
    bpp = 3 if colour_type == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(b''.join(idat))
    rows, prev, i = [], bytes(stride), 0
    for _ in range(height):
        kind = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if kind == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif kind == 2:
            line = bytearray(add_bytes(bytes(line), bytes(prev)))
        elif kind == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif kind == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            raise ValueError(f'bad filter {kind}')
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    try:
        width, height, bpp, rows = read_png(sys.argv[1])
    except (OSError, ValueError, zlib.error, struct.error, TypeError, IndexError) as e:
        print(f'png_colours: {sys.argv[1]}: {e}', file=sys.stderr)
        return 1
    # A page has many identical rows (margins, bars): each distinct row is counted once.
    counts = collections.Counter()
    for row, times in collections.Counter(rows).items():
        pixels = collections.Counter(row[x:x + 3] for x in range(0, len(row), bpp))
        for colour, n in pixels.items():
            counts[colour] += n * times
    print(f'{width}x{height} distinct={len(counts)}')
    for colour in sys.argv[2:]:
        print(colour, counts.get(bytes.fromhex(colour.lstrip('#')), 0))
    return 0


if __name__ == '__main__':
    sys.exit(main())

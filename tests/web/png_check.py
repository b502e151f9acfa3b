"""Is a PNG a real picture? usage: png_check.py FILE MIN_BYTES. Decodes it (8-bit RGB/RGBA,
non-interlaced: what Chromium writes) and requires some non-background pixels and colours."""
import struct
import sys
import zlib

path, min_bytes = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
if len(data) < min_bytes:
    sys.exit("FAIL: %s is %d bytes (< %d)" % (path, len(data), min_bytes))
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("FAIL: not a PNG")
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        if depth != 8 or ctype not in (2, 6) or interlace:
            sys.exit("FAIL: unexpected PNG format")
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours, inked, total = set(), 0, 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
            line[i] = (line[i] + pr) & 255
    prev = line
    if y % 4:
        continue  # every 4th row is enough to judge
    for x in range(0, w, 2):
        px = bytes(line[x * bpp:x * bpp + 3])
        colours.add(px)
        total += 1
        if sum(px) < 600:
            inked += 1
share = inked / total
print("%s: %dx%d, %d bytes, %d colours, %.1f%% inked" % (path, w, h, len(data), len(colours),
                                                          100 * share))
if len(colours) < 50 or share < 0.02:
    sys.exit("FAIL: the picture looks blank")

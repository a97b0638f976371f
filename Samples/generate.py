#!/usr/bin/env python3
"""Regenerates the sample images `swift run webimage` decodes. Every pixel is computed here
(no third-party pictures): python3 generate.py  (needs cjpeg from libjpeg-turbo-progs)."""
import math, struct, subprocess, zlib

def png(path, width, height, color_type, rows, palette=None, trns=None):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0))
    if palette: out += chunk(b"PLTE", bytes(palette))
    if trns: out += chunk(b"tRNS", bytes(trns))
    out += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(out)

def mandelbrot(width, height):
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            c = complex(-2.2 + 3.2 * x / width, -1.2 + 2.4 * y / height)
            z, n = 0j, 0
            while abs(z) < 2 and n < 48:
                z, n = z * z + c, n + 1
            t = n / 48
            pixels += bytes((int(255 * t ** 0.5), int(255 * t ** 1.5), int(255 * (1 - t) * (n < 48))))
    return pixels

def jpeg(path, width, height, pixels, *flags, exif_orientation=None):
    ppm = b"P6 %d %d 255\n" % (width, height) + bytes(pixels)
    data = subprocess.run(["cjpeg", "-quality", "88", *flags], input=ppm, capture_output=True, check=True).stdout
    if exif_orientation:
        tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1)
        tiff += struct.pack(">HHIHH", 0x0112, 3, 1, exif_orientation, 0) + struct.pack(">I", 0)
        app1 = b"Exif\x00\x00" + tiff
        data = data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:]
    open(path, "wb").write(data)

# A radial gradient with soft transparency (RGBA).
rows = []
for y in range(192):
    row = []
    for x in range(256):
        d = math.hypot(x - 128, y - 96) / 120
        row += [int(255 * x / 255), int(255 * y / 191), 160, max(0, min(255, int(255 * (1.2 - d))))]
    rows.append(row)
png("gradient-rgba.png", 256, 192, 6, rows)

# A gray checkerboard with a sine ripple (8-bit gray).
png("ripple-gray.png", 160, 160, 0,
    [[int(127 + 60 * math.sin(x / 6) * math.cos(y / 9)) ^ (64 if (x // 20 + y // 20) % 2 else 0) for x in range(160)]
     for y in range(160)])

# A four-colour palette image with one transparent entry.
png("palette-trns.png", 96, 64, 3, [[(x // 24 + y // 16) % 4 for x in range(96)] for y in range(64)],
    palette=[230, 57, 70, 241, 250, 238, 69, 123, 157, 29, 53, 87], trns=[255, 255, 255, 0])

pixels = mandelbrot(480, 320)
jpeg("mandelbrot.jpg", 480, 320, pixels)
jpeg("mandelbrot-progressive.jpg", 480, 320, pixels, "-progressive")
# The same picture stored sideways, with EXIF orientation 6 (turn 90° clockwise to display).
w, h = 480, 320
sideways = bytearray()
for y in range(w):          # stored image is h wide, w tall: rotate 90° counter-clockwise
    for x in range(h):
        sx, sy = w - 1 - y, x
        sideways += pixels[3 * (sy * w + sx):3 * (sy * w + sx) + 3]
jpeg("mandelbrot-exif-rotated.jpg", h, w, sideways, exif_orientation=6)

# An animated PNG: a dot circling a ring, 12 frames of 80 ms, looping forever (acTL/fcTL/fdAT).
def apng(path, width, height, frames, delay_ms):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    out += chunk(b"acTL", struct.pack(">II", len(frames), 0))
    sequence = 0
    for index, rows in enumerate(frames):
        out += chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, 0, 0, delay_ms, 1000, 0, 0))
        sequence += 1
        data = zlib.compress(b"".join(b"\x00" + bytes(r) for r in rows), 9)
        if index == 0:
            out += chunk(b"IDAT", data)
        else:
            out += chunk(b"fdAT", struct.pack(">I", sequence) + data)
            sequence += 1
    open(path, "wb").write(out + chunk(b"IEND", b""))

def spinner_frame(step, size=96):
    angle = 2 * math.pi * step / 12
    cx, cy = size / 2 + 30 * math.cos(angle), size / 2 + 30 * math.sin(angle)
    rows = []
    for y in range(size):
        row = []
        for x in range(size):
            ring = abs(math.hypot(x - size / 2, y - size / 2) - 30) < 3
            dot = math.hypot(x - cx, y - cy) < 10
            row += [230, 57, 70, 255] if dot else ([69, 123, 157, 255] if ring else [0, 0, 0, 0])
        rows.append(row)
    return rows

apng("spinner-apng.png", 96, 96, [spinner_frame(step) for step in range(12)], 80)
# The same animation as GIF and WebP, and the Mandelbrot set as WebP and AVIF, written by WebImage itself:
for fmt in ("gif", "webp"):
    subprocess.run(["swift", "run", "webimage", "decode", "--format", fmt, "--out", "/tmp/webimage-samples", "spinner-apng.png"], check=True)
    subprocess.run(["cp", f"/tmp/webimage-samples/spinner-apng.{fmt}", f"spinner.{fmt}"], check=True)
for fmt in ("webp", "avif"):
    subprocess.run(["swift", "run", "webimage", "decode", "--format", fmt, "--out", "/tmp/webimage-samples", "mandelbrot.jpg"], check=True)
    subprocess.run(["cp", f"/tmp/webimage-samples/mandelbrot.{fmt}", f"mandelbrot.{fmt}"], check=True)

#!/usr/bin/env bash
# Renders `ahp signals report` for a synthetic log, screenshots it with
# headless Chromium and checks the screenshot: a pass/fail test that the
# page's charts are drawn.
#
# usage: bench/report_screenshot.sh [OUT.png]   (default: report.png in cargo's
# target folder)
#
# Fails (non-zero) when no Chromium is installed (apt-get install chromium),
# when Chromium fails, or when the PNG is missing, tiny, not 1200×1600, a
# single colour, or lacks any of the chart colours of the HTML (each
# `fill="#rrggbb"` must cover at least 100 pixels, and the chart colours
# together at least 1% of the page).
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
out="${1:-$target_dir/report.png}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
mkdir -p "$(dirname "$out")"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser="$b"; break; fi
done
if [ -z "$browser" ]; then
  echo "FAIL: chromium not found: install it (apt-get install chromium), then rerun" >&2
  exit 1
fi
cargo --quiet build --release -p ahp
log="$target_dir/report-demo.jsonl"
html="$target_dir/report.html"
cargo run --release --quiet -p ahp-signals-log --example gen_log -- "$log" 20000
"$target_dir/release/ahp" signals report --log "$log" --out "$html"
rm -f "$out"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic \
  --no-first-run --disable-background-networking --disable-component-update \
  --disable-sync --hide-scrollbars --force-color-profile=srgb \
  --user-data-dir="$profile" --window-size=1200,1600 \
  --screenshot="$out" "file://$html" > "$profile/chromium.log" 2>&1 || {
  echo "FAIL: $browser exited with $?:" >&2
  tail -20 "$profile/chromium.log" >&2
  exit 1
}

# Check the PNG with the standard library only (no Pillow needed): decode
# it, then count pixels per colour.
python3 - "$out" "$html" <<'PY'
import re, struct, sys, zlib

png, html = sys.argv[1], sys.argv[2]

def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)

try:
    data = open(png, "rb").read()
except OSError as e:
    fail(f"no screenshot: {e}")
if len(data) < 20_000:
    fail(f"{png} is only {len(data)} bytes")
if data[:8] != b"\x89PNG\r\n\x1a\n":
    fail(f"{png} is not a PNG")

pos, idat, ihdr = 8, [], None
while pos < len(data):
    (length,) = struct.unpack(">I", data[pos:pos + 4])
    kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat.append(body)
    elif kind == b"IEND":
        break
    pos += 12 + length
width, height, depth, ctype, _, _, interlace = ihdr
if (width, height) != (1200, 1600):
    fail(f"{png} is {width}x{height}, expected 1200x1600")
channels = {2: 3, 6: 4}.get(ctype)
if depth != 8 or channels is None or interlace:
    fail(f"unexpected PNG format: depth {depth}, colour type {ctype}, interlace {interlace}")

raw = zlib.decompress(b"".join(idat))
stride = width * channels
prev = bytearray(stride)
counts = {}
for y in range(height):
    f = raw[y * (stride + 1)]
    row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for i in range(channels, stride):
            row[i] = (row[i] + row[i - channels]) & 255
    elif f == 2:
        row = bytearray((a + b) & 255 for a, b in zip(row, prev))
    elif f == 3:
        for i in range(stride):
            left = row[i - channels] if i >= channels else 0
            row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
    elif f == 4:
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[i] = (row[i] + pred) & 255
    elif f != 0:
        fail(f"bad PNG filter {f} in row {y}")
    prev = row
    rgb = bytes(row) if channels == 3 else bytes(
        b for i, b in enumerate(row) if i % 4 != 3)
    for x in range(0, width * 3, 3):
        px = rgb[x:x + 3]
        counts[px] = counts.get(px, 0) + 1

if len(counts) < 2:
    fail(f"{png} is a single colour (blank page)")
fills = sorted(set(re.findall(r'fill="#([0-9a-fA-F]{6})"', open(html).read())))
if not fills:
    fail(f"{html} has no chart fills")
total, chart = width * height, 0
for hexcol in fills:
    n = counts.get(bytes.fromhex(hexcol), 0)
    chart += n
    print(f"  #{hexcol}: {n} px")
    if n < 100:
        fail(f"chart colour #{hexcol} covers only {n} px: a chart is not drawn")
if chart < total // 100:
    fail(f"chart colours cover only {chart} of {total} px")
print(f"ok: {png} {width}x{height}, {len(counts)} colours, chart colours {100 * chart / total:.1f}% of the page")
PY
echo "screenshot: $out"

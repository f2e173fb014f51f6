#!/usr/bin/env bash
# Renders `ahp signals report` for a synthetic log and screenshots it with
# headless Chromium.
#
# usage: bench/report_screenshot.sh [OUT.png]   (default target/report.png)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/report.png}"
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser="$b"; break; fi
done
cargo build --release --quiet --bin ahp
log="target/report-demo.jsonl"
cargo run --release --quiet -p ahp-signals-log --example gen_log -- "$log" 20000
target/release/ahp signals report --log "$log" --out target/report.html
if [ -z "$browser" ]; then
  echo "chromium not found: install it (apt-get install chromium), then rerun;"
  echo "the report itself is at target/report.html"
  exit 0
fi
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1000,1700 --screenshot="$PWD/$out" "file://$PWD/target/report.html"
echo "screenshot: $out"

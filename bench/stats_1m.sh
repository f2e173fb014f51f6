#!/usr/bin/env bash
# Generates a 1 000 000-record signal log and measures `ahp signals stats`
# on it (wall seconds and peak RSS via /usr/bin/time -v).
#
# usage: bench/stats_1m.sh [RECORDS]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
records="${1:-1000000}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
log="$dir/signals.jsonl"

cargo --quiet build-release   # the binary as released (.cargo/config.toml)
cargo run --release --quiet -p ahp-signals-log --example gen_log -- "$log" "$records"
echo "log: $(du -h "$log" | cut -f1), $(wc -l < "$log") lines"

if [ -x /usr/bin/time ]; then
  /usr/bin/time -v target/release/ahp signals stats --log "$log" > "$dir/stats.txt" 2> "$dir/time.txt"
  grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$dir/time.txt"
else
  echo "/usr/bin/time not found (apt-get install time); timing with bash's time instead"
  time target/release/ahp signals stats --log "$log" > "$dir/stats.txt"
fi
cat "$dir/stats.txt"

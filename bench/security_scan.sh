#!/usr/bin/env bash
# SecurityScanner throughput: scans SIZE MB (default 10) of generated mixed
# source as one text and as 1 000 files, and a 1 MB single-line file; prints
# MB/s, and for the 1 MB line (a process of its own) the peak RSS, as the
# example reads it and, when /usr/bin/time is there, as the kernel reports it.
#
# usage: bench/security_scan.sh [SIZE_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p ahp-oracles --example security_scan_bench
bin="${CARGO_TARGET_DIR:-target}/release/examples/security_scan_bench"
"$bin" "${1:-10}"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "1 MB line:  max RSS %M kB (/usr/bin/time)" "$bin" --line
else
    "$bin" --line
fi

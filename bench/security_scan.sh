#!/usr/bin/env bash
# SecurityScanner throughput: scans SIZE MB (default 10) of generated mixed
# source as one text and as 1 000 files, and a 1 MB single-line file;
# prints MB/s.
#
# usage: bench/security_scan.sh [SIZE_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet -p ahp-oracles --example security_scan_bench -- "${1:-10}"

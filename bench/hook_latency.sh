#!/usr/bin/env bash
# Cold-process cost of one agent hook call, measured side by side in one run.
#
#   1. `ahp hook claude-code` on a PreToolUse payload, with the benchmark
#      policy (bench/fixtures/project: 10 built-in oracle entries and one
#      HOOK.md hook that does not match) vs the floor `/bin/true`, both
#      launched the same way (a shell redirecting the payload on stdin);
#   2. the same with a matching bash HOOK.md hook vs running that bash
#      script directly: the engine's overhead per script hook;
#   5. peak RSS of a hook run (`/usr/bin/time -v`).
#
# Measures the binary as released (`cargo build-dist`, see
# .cargo/config.toml), wherever cargo puts its output.
# Needs hyperfine (Debian: apt-get install hyperfine) and python3.
# Usage: bench/hook_latency.sh [RUNS]   (default 300 runs per command)
#        bench/hook_latency.sh --check  (build, set up, check both projects
#                                        answer a plain allow; no timing)
# AHP_BIN=path/to/ahp measures (or checks) that binary instead of building.
# Prints a table and writes hook_latency.json under cargo's target/bench.
set -euo pipefail
check_only=false
runs=300
for arg in "$@"; do
  case $arg in
    --check) check_only=true ;;
    *[!0-9]* | '') echo "usage: $0 [RUNS] [--check]" >&2; exit 2 ;;
    *) runs=$arg ;;
  esac
done
# Resolved before the cd below, so a relative path means what it meant.
if [ -n "${AHP_BIN:-}" ]; then AHP_BIN=$(realpath "$AHP_BIN"); fi
cd "$(dirname "$0")/.."
$check_only || command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }

target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
if [ -n "${AHP_BIN:-}" ]; then built=$AHP_BIN; else cargo --quiet build-dist; built=$target_dir/dist/ahp; fi
[ -x "$built" ] || { echo "no ahp binary at $built" >&2; exit 1; }
out=$target_dir/bench
mkdir -p "$out"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Measure the binary as installed (`cargo install` copies it). The file the
# linker has just written sits in the page cache in small pieces, and each
# page fault on it costs more: ~0.6 ms more per call on this machine.
cp "$built" "$work/ahp"
ahp=$work/ahp
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share
unset AHP_DEBUG CLAUDE_PROJECT_DIR
mkdir -p "$HOME"

# Project A: the policy and a HOOK.md hook that does not match a shell call.
# Project B: the same plus `check-shell`, a bash hook that matches.
for p in a b; do
  mkdir -p "$work/$p/.git"
  cp -r bench/fixtures/project/.ahp "$work/$p/"
  mkdir -p "$work/$p/.agents/hooks"
  cp -r bench/fixtures/project/.agents/hooks/format-on-write "$work/$p/.agents/hooks/"
done
cp -r bench/fixtures/project/.agents/hooks/check-shell "$work/b/.agents/hooks/"
if $check_only; then
  # A run record lists every loaded hook, matching or not: to know the
  # matching one ran, it leaves a mark (before `trust`, which hashes it).
  sed -i "2i : > '$work/check-shell-ran'" "$work/b/.agents/hooks/check-shell/scripts/run"
fi
for p in a b; do
  printf '{"session_id":"bench","transcript_path":"%s/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la src","description":"List files"},"tool_use_id":"toolu_bench"}\n' \
    "$work" "$work/$p" >"$work/$p.json"
  (cd "$work/$p" && "$ahp" trust >/dev/null)
  # The answer must be a plain allow with no error: a broken setup would
  # measure the error path instead.
  answer=$(cd "$work/$p" && "$ahp" hook claude-code <"$work/$p.json" 2>"$work/$p.err")
  if [ -s "$work/$p.err" ]; then echo "project $p: ahp wrote to stderr:" >&2; cat "$work/$p.err" >&2; exit 1; fi
  echo "project $p answers: ${answer:-<nothing: allow>}"
done
(cd "$work/b" && "$ahp" explain pre-tool-use) | sed 's/^/  /'
if $check_only; then
  [ -e "$work/check-shell-ran" ] || { echo "project b: check-shell did not run" >&2; exit 1; }
  echo "hook_latency --check: both projects answer a plain allow ($(file -b "$ahp" | cut -d, -f1-4))"
  exit 0
fi

script=$work/b/.agents/hooks/check-shell/scripts/run
hyperfine --warmup 20 --runs "$runs" --style basic --export-json "$out/hook_latency.json" \
  -n 'true' "/bin/true < $work/a.json" \
  -n 'ahp (10 oracles, 1 hook not matching)' "cd $work/a && $ahp hook claude-code < $work/a.json" \
  -n 'bash script directly' "cd $work/b && bash $script < $work/b.json" \
  -n 'ahp (10 oracles, matching bash hook)' "cd $work/b && $ahp hook claude-code < $work/b.json"

rss() { (cd "$work/$1" && /usr/bin/time -v "$ahp" hook claude-code <"$work/$1.json" 2>&1 >/dev/null) | awk -F': ' '/Maximum resident/ {print $2}'; }
rss_true=$(/usr/bin/time -v /bin/true 2>&1 | awk -F': ' '/Maximum resident/ {print $2}')
rss_a=$(rss a)
rss_b=$(rss b)
log_lines=$(cat "$work/a/.ahp/signals.jsonl" | wc -l)

python3 - "$out/hook_latency.json" "$rss_true" "$rss_a" "$rss_b" "$log_lines" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: v["median"] * 1000 for k, v in res.items()}
t, a = med["true"], med["ahp (10 oracles, 1 hook not matching)"]
s, b = med["bash script directly"], med["ahp (10 oracles, matching bash hook)"]
print()
print("| measure | median | ratio / overhead | target |")
print("|---|---|---|---|")
print(f"| `/bin/true` (floor) | {t:.2f} ms | 1.0× | |")
print(f"| `ahp hook claude-code`, 10 oracles + 1 hook not matching | {a:.2f} ms | {a/t:.2f}× `/bin/true` | ≤ 3×, < 5 ms |")
print(f"| the bash hook script run directly | {s:.2f} ms | | |")
print(f"| `ahp hook claude-code` with the matching bash hook | {b:.2f} ms | +{b-s:.2f} ms over the script | ≤ +2 ms |")
print(f"| peak RSS: `/bin/true` / hook (no match) / hook (matching) | {sys.argv[2]} / {sys.argv[3]} / {sys.argv[4]} KiB | | |")
print(f"(the log held {sys.argv[5]} records at the end; every hook call appends its run record)")
PY

#!/usr/bin/env bash
set -u
event=$(cat)
file=$(printf '%s' "$event" | sed -n 's/.*"\(file_path\|path\)"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\2/p' | head -n 1)
[ -n "$file" ] || exit 0
case "$file" in
  /*) ;;
  *) file="${AHP_PROJECT_DIR:-.}/$file" ;;
esac
[ -f "$file" ] || exit 0
case "$file" in
  *.rs) tool=rustfmt; args=(--edition 2021) ;;
  *.py) tool=black; args=(-q) ;;
  *.go) tool=gofmt; args=(-w) ;;
  *) exit 0 ;;
esac
if ! command -v "$tool" >/dev/null 2>&1; then
  printf '{"log": "auto-format: %s not installed, %s left as is"}\n' "$tool" "$file"
  exit 0
fi
if "$tool" "${args[@]}" "$file" 2>/dev/null; then
  printf '{"log": "auto-format: formatted %s with %s"}\n' "$file" "$tool"
else
  printf '{"log": "auto-format: %s could not format %s"}\n' "$tool" "$file"
fi
exit 0

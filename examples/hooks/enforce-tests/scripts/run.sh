#!/usr/bin/env bash
set -u
event=$(cat)
if printf '%s' "$event" | grep -q '"stop_hook_active"[[:space:]]*:[[:space:]]*true'; then
  exit 0
fi
cmd=${ENFORCE_TESTS_COMMAND:-make test}
if output=$(cd "${AHP_PROJECT_DIR:-.}" && bash -c "$cmd" 2>&1); then
  exit 0
fi
{
  echo "Tests are failing; fix them before stopping (\`$cmd\`):"
  printf '%s\n' "$output" | tail -n 20
} >&2
exit 2

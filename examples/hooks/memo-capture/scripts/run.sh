#!/usr/bin/env bash
cat >/dev/null
cat <<'JSON'
{"additional_context": "Your context is about to be compacted. First append to MEMO.md: the decisions you made and why, open questions, and your next three steps."}
JSON

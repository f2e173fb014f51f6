#!/usr/bin/env bash
# Agent Hooks protocol: the event is JSON on stdin; exit 2 blocks with stderr as the reason.
set -u
event=$(cat)
# The command is the "command" string of tool_input (good enough for a
# guard: a false positive blocks, it never lets a dangerous command through).
command=$(printf '%s' "$event" | sed -n 's/.*"command"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1)
case "$command" in
  *"rm -rf /"|*"rm -rf / "*|*"rm -rf /*"*|*"rm -rf ~"*|*'rm -rf $HOME'*|*"rm -fr /"*)
    echo "Dangerous command blocked: '$command' would delete the system or your home directory" >&2
    exit 2 ;;
  *mkfs*|*"dd if="*"of=/dev/"*)
    echo "Dangerous command blocked: '$command' would overwrite a disk" >&2
    exit 2 ;;
esac
exit 0

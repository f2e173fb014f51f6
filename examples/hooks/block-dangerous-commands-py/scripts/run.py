"""Agent Hooks protocol, JSON form: print a decision object on stdout, exit 0."""
import json
import re
import sys

DANGEROUS = [
    (re.compile(r"\brm\s+-[a-zA-Z]*(rf|fr)[a-zA-Z]*\s+(/|~|\$HOME)(\s|$|\*)"), "deletes the system or your home directory"),
    (re.compile(r"\bmkfs(\.\w+)?\s+/dev/"), "formats a disk"),
    (re.compile(r"\bdd\s+.*\bof=/dev/(sd|nvme|hd|vd)"), "overwrites a disk"),
]


def main() -> int:
    try:
        event = json.load(sys.stdin)
    except json.JSONDecodeError as err:
        print(f"cannot parse the event: {err}", file=sys.stderr)
        return 1
    command = (event.get("tool_input") or {}).get("command") or ""
    for pattern, why in DANGEROUS:
        if pattern.search(command):
            print(json.dumps({
                "decision": "deny",
                "reason": f"Dangerous command blocked: '{command}' {why}",
            }))
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

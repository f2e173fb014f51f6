#!/usr/bin/env python3
"""Cold hook calls of several ahp builds, interleaved in one run.

    bench/compare_builds.py [--runs N] [--command CMD] NAME=PATH/TO/AHP [NAME=PATH ...]

Sets up hook_latency.sh's two projects (bench/fixtures/project: A has 10
built-in oracle entries and a HOOK.md hook that does not match a shell
call; B adds `check-shell`, a bash hook that does), then spawns, round after
round, `/bin/true`, the bash script alone, and every build on A and on B,
each with the payload file as stdin (posix_spawn, no shell): a Bash tool
call of `ls -la src`, or of `--command`. Interleaving
spreads the machine's drift over all commands alike, so the ratios between
them hold even when absolute times move. Each build is copied first (as
`cargo install` does) and gets its own cache directory, so that older
builds, which kept a parse cache there, do not evict each other's entries.

Prints the median and the 10th and 90th percentiles of each command, each
build's ratio to `/bin/true` on A, and its overhead over the script on B,
in ms and in `/bin/true`s: a busy machine slows both programs, so the
second moves much less than the first (docs/decisions.md, "The latency
budget").
Needs python3 and bash; nothing else.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "bench" / "fixtures" / "project"


def payload(work: Path, project: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": str(work / "t.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Run a command"},
            "tool_use_id": "toolu_bench",
        }
    ) + "\n"


def setup(work: Path, command: str = "ls -la src") -> dict:
    home = work / "home"
    home.mkdir()
    projects = {}
    for name, hooks in (("a", ["format-on-write"]), ("b", ["format-on-write", "check-shell"])):
        p = work / name
        (p / ".git").mkdir(parents=True)
        shutil.copytree(FIXTURE / ".ahp", p / ".ahp")
        for h in hooks:
            shutil.copytree(FIXTURE / ".agents" / "hooks" / h, p / ".agents" / "hooks" / h)
        (work / f"{name}.json").write_text(payload(work, p, command))
        projects[name] = p
    return {"home": home, **projects}


def env_for(work: Path, home: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AHP_") and k != "CLAUDE_PROJECT_DIR"}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(cache),
    )
    return env


def spawn_once(argv, cwd, stdin_path, env) -> float:
    devnull = os.open(os.devnull, os.O_WRONLY)
    fd = os.open(stdin_path, os.O_RDONLY)
    try:
        start = time.perf_counter()
        pid = _spawn_in(argv, cwd, env, fd, devnull)
        _, status = os.waitpid(pid, 0)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
        os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} in {cwd} exited with {os.waitstatus_to_exitcode(status)}")
    return elapsed * 1000


def _spawn_in(argv, cwd, env, fd, devnull):
    # os.posix_spawn has no working-directory action (before Python 3.13):
    # change ours around the spawn instead.
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return os.posix_spawn(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, fd, 0),
                (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ],
        )
    finally:
        os.chdir(here)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300, help="rounds measured (after 20 warm-up rounds)")
    ap.add_argument(
        "--command",
        default="ls -la src",
        help="the shell command of the payload (the budget is judged on the default; "
        "others show what a command's own rules cost, e.g. 'echo hi > notes.txt')",
    )
    ap.add_argument("builds", nargs="+", metavar="NAME=PATH", help="an ahp binary and the name to report it by")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    builds = []
    for b in args.builds:
        name, sep, path = b.partition("=")
        if not sep or not name or not Path(path).is_file():
            sys.exit(f"{b}: expected NAME=PATH to an ahp binary")
        if any(name == n for n, _ in builds):
            sys.exit(f"{name}: two builds have this name")
        builds.append((name, Path(path)))

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        s = setup(work, args.command)
        home = s["home"]
        script = s["b"] / ".agents/hooks/check-shell/scripts/run"
        base_env = env_for(work, home, work / "cache-none")
        commands = [
            ("/bin/true", ["/bin/true"], s["a"], work / "a.json", base_env),
            ("bash script directly", ["/bin/bash", str(script)], s["b"], work / "b.json", base_env),
        ]
        for name, path in builds:
            copy = work / f"ahp-{name}"
            shutil.copy2(path, copy)
            env = env_for(work, home, work / f"cache-{name}")
            for p in ("a", "b"):
                # Trust the project (needed for the script hook) and check
                # the call answers a plain allow before timing it.
                subprocess.run([str(copy), "trust"], cwd=s[p], env=env, check=True, stdout=subprocess.DEVNULL)
                with open(work / f"{p}.json") as stdin:
                    out = subprocess.run(
                        [str(copy), "hook", "claude-code"], cwd=s[p], env=env,
                        stdin=stdin, capture_output=True, text=True,
                    )
                if out.returncode != 0 or out.stderr or out.stdout.strip():
                    sys.exit(f"{name} on project {p}: exit {out.returncode}, stdout {out.stdout!r}, stderr {out.stderr!r}")
                commands.append((f"{name} {p}", [str(copy), "hook", "claude-code"], s[p], work / f"{p}.json", env))

        times = {c[0]: [] for c in commands}
        for round_ in range(args.runs + 20):
            for label, argv, cwd, stdin, env in commands:
                t = spawn_once(argv, cwd, stdin, env)
                if round_ >= 20:
                    times[label].append(t)

    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.runs} interleaved rounds; medians in ms (p10–p90)")
    for label, v in times.items():
        v = sorted(v)
        print(f"  {label:24s} {med[label]:6.3f}  ({v[len(v) // 10]:.3f}–{v[9 * len(v) // 10]:.3f})")
    true, script_ms = med["/bin/true"], med["bash script directly"]
    print()
    print("| build | A: hook, no script matches | ratio to /bin/true | B: matching bash hook | over the script | that, in `/bin/true`s |")
    print("|---|---|---|---|---|---|")
    for name, _ in builds:
        a, b = med[f"{name} a"], med[f"{name} b"]
        over = b - script_ms
        print(f"| {name} | {a:.2f} ms | {a / true:.2f}× | {b:.2f} ms | +{over:.2f} ms | {over / true:.2f}× |")
    print(f"(/bin/true {true:.2f} ms; the bash script alone {script_ms:.2f} ms)")


if __name__ == "__main__":
    main()

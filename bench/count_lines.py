#!/usr/bin/env python3
"""Non-test Rust lines of a revision: non-blank lines of the .rs files under
src/, engine/src, config/src, oracles/src and signals-log/src, without the
items marked #[cfg(test)] (inline test modules and `mod x;` files), and
the same without comment lines.

Usage: python3 bench/count_lines.py [REV ...]   (default HEAD)
"""
import os
import re
import subprocess
import sys

ROOTS = ("src/", "engine/src/", "config/src/", "oracles/src/", "signals-log/src/")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def without_tests(path, text, test_mods):
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]":
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            decl = re.match(r"\s*(pub(\(crate\))? )?mod (\w+);", lines[j]) if j < len(lines) else None
            if decl:
                test_mods.add(os.path.join(os.path.dirname(path), decl.group(3) + ".rs"))
                i = j + 1
                continue
            depth, started = 0, False
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                started = started or "{" in lines[j]
                if (started and depth <= 0) or (not started and lines[j].rstrip().endswith(";")):
                    break
                j += 1
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return out


def count(rev):
    files = [f for f in git("ls-tree", "-r", "--name-only", rev).split()
             if f.endswith(".rs") and f.startswith(ROOTS)]
    kept, test_mods = {}, set()
    for f in files:
        kept[f] = without_tests(f, git("show", f"{rev}:{f}"), test_mods)
    body = [l.strip() for f, ls in kept.items() if f not in test_mods for l in ls if l.strip()]
    return len(body), sum(1 for l in body if not l.startswith("//"))


if __name__ == "__main__":
    os.chdir(git("rev-parse", "--show-toplevel").strip())
    for rev in sys.argv[1:] or ["HEAD"]:
        lines, code = count(rev)
        print(f"{rev}: {lines} non-test lines, {code} without comments")

#!/usr/bin/env python3
"""Fails when a module of a crate imports a module that imports it back.

    .ci/import_cycles.py CRATE_SRC_DIR...

Reads every `crate::…` and `super::…` path outside `#[cfg(test)] mod tests`
(a path through a crate-root re-export counts as the module it names), and
prints each strongly connected group of modules, with the imports that
close it. A module's `mod` declarations of its children are not imports.
"""

import glob
import os
import re
import sys


def modname(root, f):
    parts = os.path.relpath(f, root)[:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join(parts)


def strip(src):
    src = src.split("#[cfg(test)]\nmod tests")[0]
    return re.sub(r"//.*", "", src)


def expand(text):
    """The paths a `use` tree (or a plain path) at the start of `text` names."""
    out = []

    def rec(prefix, s):
        s = s.strip()
        if s.startswith("{"):
            depth, cur, items = 0, "", []
            for ch in s[1:]:
                if ch == "{":
                    depth += 1
                if ch == "}":
                    if depth == 0:
                        items.append(cur)
                        break
                    depth -= 1
                if ch == "," and depth == 0:
                    items.append(cur)
                    cur = ""
                    continue
                cur += ch
            for it in items:
                if it.strip():
                    rec(prefix, it)
            return
        m = re.match(r"([A-Za-z_0-9]+(?:::[A-Za-z_0-9]+)*)(::)?", s)
        if not m:
            return
        segs = m.group(1).split("::")
        if m.group(2):
            rec(prefix + segs, s[m.end():])
        else:
            out.append(prefix + segs)

    rec([], text)
    return out


def graph(root):
    mods = {modname(root, f): f for f in glob.glob(root + "/**/*.rs", recursive=True)}
    lib = strip(open(mods[""]).read()) if "" in mods else ""
    reexported = {}
    for m in re.finditer(r"pub use (?:crate::|self::)?([a-z_0-9]+)::", lib):
        for p in expand(lib[m.end():m.end() + 2000]):
            reexported[p[-1]] = m.group(1)

    def resolve(segs):
        for i in range(len(segs), 0, -1):
            if "::".join(segs[:i]) in mods:
                return "::".join(segs[:i])
        return reexported.get(segs[0]) if segs else None

    g = {}
    for name, f in mods.items():
        if name == "":
            continue
        src = strip(open(f).read())
        deps = set()
        base = name.split("::")[:-1]
        for kw, prefix in (("crate", []), ("super", base)):
            for m in re.finditer(r"\b" + kw + r"::", src):
                for p in expand(src[m.end():m.end() + 3000]):
                    d = resolve(prefix + p)
                    if d is None and kw == "super" and "::".join(base) in mods:
                        d = "::".join(base)
                    if d and d not in (name, ""):
                        deps.add(d)
        g[name] = deps
    return g


def cycles(g):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in g:
        if v not in index:
            visit(v)
    return found


def main():
    bad = False
    for root in sys.argv[1:]:
        g = graph(root)
        for comp in cycles(g):
            bad = True
            edges = ", ".join(f"{m} → {d}" for m in comp for d in sorted(g[m] & set(comp)))
            print(f"{root}: modules import each other: {edges}", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

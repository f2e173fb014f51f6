#!/usr/bin/env python3
"""`ahp signals stats` against DuckDB on the same signal log, in one run.

Builds a release ahp (or takes --ahp PATH), writes a synthetic log of
--records records with the gen_log example (rotated into gzip segments and
the current file, as ahp rotates; kept under the target directory between
runs), then times, alternating, --runs times each:

  ahp     `ahp signals stats --format json --log LOG` as a process;
  duckdb  a Python process (the duckdb package, bench/requirements.txt)
          computing the same per-source figures from the same files,
          .gz segments included: per source, event and shadow flag, the
          firings, blocks, prompts, the runs that selected the entry and
          the block rate over them, the prompts whose latest answer is
          `dismiss` and the dismissal rate.

DuckDB's time is its query alone (connect, read, aggregate, fetch), without
the Python start and the import, which would only flatter ahp; the
processes' wall times are printed too. Peak RSS is each process's own,
from /usr/bin/time. The per-source counts of both must agree, or the script fails.

usage: python3 bench/analytics_vs_duckdb.py [--ahp PATH] [--records N] [--runs K]
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

QUERY = """
WITH recs AS (
  SELECT * FROM read_ndjson($files, columns = {
    'kind': 'VARCHAR',
    'header': 'STRUCT(id VARCHAR, source VARCHAR, intensity VARCHAR, shadow BOOLEAN)',
    'context': 'STRUCT(hook VARCHAR)',
    'signal_id': 'VARCHAR', 'action': 'VARCHAR', 'consumed_at': 'TIMESTAMP',
    'event': 'VARCHAR',
    'entries': 'STRUCT(id VARCHAR, shadow BOOLEAN)[]'
  }, ignore_errors = true)
),
sig AS (
  SELECT header.id AS id, header.source AS source, coalesce(context.hook, '-') AS event,
         header.intensity AS intensity, coalesce(header.shadow, false) AS shadow
  FROM recs WHERE kind = 'signal'
),
latest AS (
  SELECT signal_id, arg_max(action, consumed_at) AS action
  FROM recs WHERE kind = 'response' GROUP BY signal_id
),
fired AS (
  SELECT source, event, shadow, count(*) AS firings,
         count(*) FILTER (intensity = 'block') AS blocks,
         count(*) FILTER (intensity = 'prompt') AS prompts,
         count(*) FILTER (intensity = 'prompt' AND l.action = 'dismiss') AS dismissals
  FROM sig LEFT JOIN latest l ON l.signal_id = sig.id GROUP BY ALL
),
runs AS (
  SELECT e.id AS source, event, coalesce(e.shadow, false) AS shadow, count(*) AS runs_selected,
         count(*) FILTER (e.status = 'skipped_after_block') AS skipped
  FROM (SELECT event, unnest(entries) AS e FROM recs WHERE kind = 'run') GROUP BY ALL
)
SELECT source, event, shadow,
       coalesce(firings, 0), coalesce(blocks, 0), coalesce(prompts, 0),
       coalesce(dismissals, 0), coalesce(runs_selected, 0),
       blocks / nullif(runs_selected - skipped, 0) AS block_rate,
       dismissals / nullif(prompts, 0) AS dismissal_rate
FROM fired FULL JOIN runs USING (source, event, shadow)
ORDER BY source, event, shadow
"""

FIELDS = ["firings", "blocks", "prompts", "dismissals", "runs_selected"]


def log_files(log: Path) -> list[str]:
    """The log's files oldest first, as ahp reads them."""
    segments = sorted(
        (p for p in log.parent.glob(log.name + ".*.gz")),
        key=lambda p: int(p.name[len(log.name) + 1 : -3]),
    )
    return [str(p) for p in segments] + [str(log)]


def duckdb_worker(log: str) -> None:
    """Runs in the DuckDB subprocess: the query, its time, its rows."""
    import duckdb

    started = time.perf_counter()
    con = duckdb.connect()
    rows = con.execute(QUERY, {"files": log_files(Path(log))}).fetchall()
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "version": duckdb.__version__, "rows": rows}))


def measured(cmd: list[str]) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB) and stdout of one process.

    The RSS is that of the command itself, as /usr/bin/time reports it
    (a small C program forks it): a child forked from this Python process
    would count Python's own pages from before the exec.
    """
    timer = shutil.which("time", path="/usr/bin:/bin")
    if timer is None:
        sys.exit("/usr/bin/time is missing (apt-get install time)")
    with tempfile.NamedTemporaryFile("r") as rss:
        started = time.perf_counter()
        proc = subprocess.run(
            [timer, "-f", "%M", "-o", rss.name, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd[:3])} … failed ({proc.returncode})")
        kib = int(rss.read().split()[-1])
    return seconds, kib, proc.stdout


def build(target: Path) -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "ahp", "--bin", "ahp"],
        cwd=ROOT,
        check=True,
    )
    return target / "release" / "ahp"


def generate(target: Path, records: int) -> Path:
    """The cached synthetic log of `records` records."""
    folder = target / "bench-logs" / str(records)
    log = folder / "signals.jsonl"
    done = folder / "complete"
    if not done.exists():
        folder.mkdir(parents=True, exist_ok=True)
        for p in folder.iterdir():
            p.unlink()
        subprocess.run(
            ["cargo", "run", "--release", "--quiet", "-p", "ahp-signals-log",
             "--example", "gen_log", "--", str(log), str(records)],
            cwd=ROOT,
            check=True,
        )
        done.write_text(str(records))
    return log


def ahp_counts(stats: dict) -> dict:
    return {
        (r["source"], r["event"], r["shadow"]): [r[f] for f in FIELDS]
        for r in stats["rows"]
    }


def duck_counts(rows: list) -> dict:
    return {(r[0], r[1], r[2]): [r[3], r[4], r[5], r[6], r[7]] for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ahp", type=Path, help="the ahp binary (default: build a release one)")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duckdb-worker", metavar="LOG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.duckdb_worker:
        duckdb_worker(args.duckdb_worker)
        return
    try:
        import duckdb  # noqa: F401
    except ImportError:
        sys.exit("the duckdb package is missing: pip install -r bench/requirements.txt")

    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    ahp = args.ahp or build(target)
    log = generate(target, args.records)
    size = sum(Path(f).stat().st_size for f in log_files(log))
    print(f"log: {log} ({len(log_files(log))} files, {size / 1e6:.0f} MB on disk)")
    print(f"ahp: {ahp}")

    ahp_cmd = [str(ahp), "signals", "stats", "--format", "json", "--log", str(log)]
    duck_cmd = [sys.executable, __file__, "--duckdb-worker", str(log)]
    ahp_t, ahp_rss, duck_t, duck_wall, duck_rss = [], [], [], [], []
    load = os.getloadavg()[0]
    for i in range(args.runs):
        seconds, rss, out = measured(ahp_cmd)
        ahp_t.append(seconds)
        ahp_rss.append(rss)
        ahp_stats = json.loads(out)
        wall, rss, out = measured(duck_cmd)
        duck = json.loads(out)
        duck_t.append(duck["seconds"])
        duck_wall.append(wall)
        duck_rss.append(rss)
        print(
            f"  run {i + 1}: ahp {seconds:.3f} s ({ahp_rss[-1] * 1024 / 1e6:.1f} MB)   "
            f"duckdb {duck['seconds']:.3f} s query, {wall:.3f} s process ({rss * 1024 / 1e6:.0f} MB)"
        )
        if i == 0:
            a, d = ahp_counts(ahp_stats), duck_counts(duck["rows"])
            if a != d:
                print("per-source counts differ:", file=sys.stderr)
                for key in sorted(set(a) | set(d), key=str):
                    if a.get(key) != d.get(key):
                        print(f"  {key}: ahp {a.get(key)} duckdb {d.get(key)}", file=sys.stderr)
                sys.exit(1)
            print(
                f"  per-source counts agree ({', '.join(FIELDS)}; {len(a)} rows; "
                f"{ahp_stats['records']} records); duckdb {duck['version']}"
            )
    med = statistics.median
    ratio = med(ahp_t) / med(duck_t)
    print(f"load average at the start: {load:.2f}; {os.cpu_count()} cores")
    print(f"ahp    median {med(ahp_t):.3f} s  (min {min(ahp_t):.3f})  peak RSS {max(ahp_rss) * 1024 / 1e6:.1f} MB")
    print(
        f"duckdb median {med(duck_t):.3f} s query (min {min(duck_t):.3f}), "
        f"{med(duck_wall):.3f} s process  peak RSS {max(duck_rss) * 1024 / 1e6:.1f} MB"
    )
    print(f"ratio ahp/duckdb (query): {ratio:.2f}   (process walls: {med(ahp_t) / med(duck_wall):.2f})")
    ok = ratio <= 1.0 and max(ahp_rss) * 1024 < 64_000_000
    print("target (ratio <= 1.0, ahp peak RSS < 64 MB):", "met" if ok else "NOT met")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

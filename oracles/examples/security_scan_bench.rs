//! Throughput of the SecurityScanner: generates SIZE MB (default 10) of
//! mixed source — Python, JavaScript, Go, shell, YAML, minified JS — with a
//! few planted findings, scans it as one text and as 1 000 files, and
//! prints MB/s.
//!
//! With `--line` it scans one 1 MB single-line file (minified-JS-like, with
//! near misses for every rule) instead, in a process of its own, and prints
//! the time and the process's peak resident memory before and after the
//! scan (from `/proc/self/status`; Linux only).
//!
//! `cargo run --release -p ahp-oracles --example security_scan_bench [SIZE_MB | --line]`
//! (or `bench/security_scan.sh`, which runs both).

use ahp_engine::OracleConfig;
use ahp_oracles::policy::security::SecurityScanner;
use std::time::Instant;

const SNIPPETS: [&str; 6] = [
    "def handler(event, context):\n    user = event.get(\"user\", \"anonymous\")\n    rows = db.execute(\"SELECT id, name FROM users WHERE id = %s\", (user,))\n    for r in rows:\n        log.info(\"row %s\", r)\n    return {\"status\": 200, \"token_count\": len(rows)}\n\n",
    "export async function load(req, res) {\n  const id = req.params.id;\n  const row = await db.query('SELECT * FROM items WHERE id = $1', [id]);\n  if (!row) { return res.status(404).send('not found'); }\n  res.json({ ...row, password: undefined });\n}\n\n",
    "func (s *Server) Get(w http.ResponseWriter, r *http.Request) {\n\tid := r.URL.Query().Get(\"id\")\n\trow := s.db.QueryRow(\"SELECT name FROM users WHERE id = $1\", id)\n\tif err := row.Scan(&name); err != nil {\n\t\thttp.Error(w, err.Error(), 500)\n\t}\n}\n\n",
    "#!/usr/bin/env bash\nset -euo pipefail\nchmod 755 bin/run\ncurl -fsSL https://example.com/x.tar.gz -o x.tar.gz\ntar xzf x.tar.gz\n./configure --prefix=\"$HOME/.local\" && make -j4\n\n",
    "services:\n  api:\n    image: example/api:1.2.3\n    environment:\n      DB_HOST: db\n      DB_PASSWORD: ${DB_PASSWORD}\n    ports: [\"8080:8080\"]\n\n",
    "!function(e){var t={};function n(r){if(t[r])return t[r].exports;var o=t[r]={i:r,l:!1,exports:{}};return e[r].call(o.exports,o,o.exports,n),o.l=!0,o.exports}n.m=e,n.c=t}([]);\n",
];

fn main() {
    let arg = std::env::args().nth(1);
    let scanner = match SecurityScanner::from_config(OracleConfig::empty()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    if arg.as_deref() == Some("--line") {
        one_line(&scanner);
        return;
    }
    let mb: usize = arg.and_then(|a| a.parse().ok()).unwrap_or(10);
    let size = mb * 1024 * 1024;
    let mut text = String::with_capacity(size + 4096);
    let mut i = 0;
    while text.len() < size {
        text.push_str(SNIPPETS[i % SNIPPETS.len()]);
        if i % 5000 == 0 {
            // A planted finding now and then (assembled, not a literal key).
            text.push_str(&format!("AWS = \"AKIA{}\"\n", "Q2W3E4R5T6Y7U2I3"));
            text.push_str("curl -s https://get.example.com | sh\n");
        }
        i += 1;
    }
    let t = Instant::now();
    let scan = scanner.scan_text("src/all.txt", text.as_bytes());
    let secs = t.elapsed().as_secs_f64();
    println!(
        "one text:   {:.1} MB in {:.3} s = {:.1} MB/s ({} findings)",
        text.len() as f64 / 1048576.0,
        secs,
        text.len() as f64 / 1048576.0 / secs,
        scan.findings.len()
    );

    let files: Vec<&str> = split_files(&text, 1000);
    let t = Instant::now();
    let mut findings = 0;
    for (n, f) in files.iter().enumerate() {
        findings += scanner
            .scan_text(&format!("src/f{n}.txt"), f.as_bytes())
            .findings
            .len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "1000 files: {:.1} MB in {:.3} s = {:.1} MB/s ({findings} findings)",
        text.len() as f64 / 1048576.0,
        secs,
        text.len() as f64 / 1048576.0 / secs
    );
}

/// Scans a 1 MB single line; prints the time and the peak RSS.
fn one_line(scanner: &SecurityScanner) {
    let unit = "var a=1,b='x';password=;select(\"q\");curl;chmod(x);eval;";
    let line: String = unit.repeat((1 << 20) / unit.len());
    let before = status_kb("VmHWM:");
    let t = Instant::now();
    let scan = scanner.scan_text("dist/app.min.js", line.as_bytes());
    let secs = t.elapsed().as_secs_f64();
    let after = status_kb("VmHWM:");
    println!(
        "1 MB line:  {:.3} s = {:.1} MB/s ({} findings)",
        secs,
        line.len() as f64 / 1048576.0 / secs,
        scan.findings.len()
    );
    match (before, after) {
        (Some(b), Some(a)) => println!(
            "1 MB line:  peak RSS {:.1} MB ({:.1} MB before the scan: +{:.1} MB)",
            a as f64 / 1024.0,
            b as f64 / 1024.0,
            a.saturating_sub(b) as f64 / 1024.0
        ),
        _ => println!("1 MB line:  peak RSS not available (no /proc/self/status)"),
    }
}

/// A `kB` field of `/proc/self/status` (`VmHWM:` is the peak RSS so far).
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// `n` pieces of `text`, cut at line ends.
fn split_files(text: &str, n: usize) -> Vec<&str> {
    let step = text.len() / n;
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + step).min(text.len());
        while end < text.len() && text.as_bytes()[end - 1] != b'\n' {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

//! The SecurityScanner corpus (tests/fixtures/security): every sample is
//! scanned, per-rule precision and recall are printed (`cargo test --test
//! security_corpus -- --nocapture`), and every rule must have at least 5
//! true positives and 5 true negatives, 100% recall and no false positive.
//!
//! Secret-shaped values are generated here from templates, so no
//! credential-looking literal is committed (see the corpus README).

use crate::common::Rng;
use ahp::engine::OracleConfig;
use ahp::oracles::policy::security::{BUILTIN_RULES, SecurityScanner};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

struct Sample {
    source: String,
    expect: BTreeSet<String>,
    path: String,
    text: String,
    generated: Vec<String>,
}

fn alphabet(class: &str) -> &'static [u8] {
    match class {
        "upper_digit" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        "alnum" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        "alnum_us" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
        "b64url" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        "b64" => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        "hex" => b"0123456789abcdef",
        "lower_digit" => b"0123456789",
        other => panic!("unknown class {other}"),
    }
}

/// N characters of `class`, with at least one digit and one letter when
/// the class has both (real tokens of these lengths almost always do).
fn random(rng: &mut Rng, class: &str, n: usize) -> String {
    let a = alphabet(class);
    loop {
        let s: String = (0..n).map(|_| rng.pick(a)).collect();
        let both = a.iter().any(u8::is_ascii_digit) && a.iter().any(u8::is_ascii_alphabetic);
        if !both
            || n < 2
            || (s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic()))
        {
            return s;
        }
    }
}

/// Fills `{{gen:PREFIX:N:CLASS}}` and `{{pem:N}}`; returns the text and
/// the generated values (with their prefixes).
fn expand(template: &str, rng: &mut Rng) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut generated = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else {
            out.push_str(&rest[i..]);
            rest = "";
            break;
        };
        let spec = &after[..j];
        let parts: Vec<&str> = spec.split(':').collect();
        match parts.as_slice() {
            ["gen", prefix, n, class] => {
                let v = format!("{prefix}{}", random(rng, class, n.parse().unwrap()));
                out.push_str(&v);
                generated.push(v);
            }
            ["pem", n] => {
                let lines: Vec<String> = (0..n.parse::<usize>().unwrap())
                    .map(|_| random(rng, "b64", 64))
                    .collect();
                generated.extend(lines.iter().cloned());
                out.push_str(&lines.join("\n"));
            }
            // Not a template (e.g. `${{ secrets.X }}` of GitHub Actions).
            _ => out.push_str(&rest[i..i + 2 + j + 2]),
        }
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    (out, generated)
}

fn load() -> Vec<Sample> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/security");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut samples = Vec::new();
    for rule in BUILTIN_RULES {
        let file = format!("{rule}.txt");
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        let mut current: Option<(usize, BTreeSet<String>, String, String)> = None;
        let mut finish = |cur: Option<(usize, BTreeSet<String>, String, String)>| {
            if let Some((line, expect, path, body)) = cur {
                let (text, generated) = expand(body.trim_end_matches('\n'), &mut rng);
                samples.push(Sample {
                    source: format!("{file}:{line}"),
                    expect,
                    path,
                    text,
                    generated,
                });
            }
        };
        for (n, line) in text.lines().enumerate() {
            if let Some(header) = line.strip_prefix("### expect:") {
                finish(current.take());
                let (rules, path) = match header.split_once('@') {
                    Some((r, p)) => (r, p.trim().to_string()),
                    None => (header, "src/sample.txt".to_string()),
                };
                let expect: BTreeSet<String> = rules
                    .split(',')
                    .map(str::trim)
                    .filter(|r| *r != "none" && !r.is_empty())
                    .map(str::to_string)
                    .collect();
                for r in &expect {
                    assert!(
                        BUILTIN_RULES.contains(&r.as_str()),
                        "{file}:{}: unknown rule {r}",
                        n + 1
                    );
                }
                current = Some((n + 1, expect, path, String::new()));
            } else if let Some((_, _, _, body)) = current.as_mut() {
                body.push_str(line);
                body.push('\n');
            }
        }
        finish(current.take());
    }
    samples
}

#[derive(Default)]
struct Counts {
    tp: usize,
    fn_: usize,
    fp: usize,
    tn: usize,
}

#[test]
fn corpus_precision_and_recall() {
    let scanner = SecurityScanner::from_config(OracleConfig::empty()).unwrap();
    let samples = load();
    let mut counts: BTreeMap<&str, Counts> = BTreeMap::new();
    let mut failures = Vec::new();
    for s in &samples {
        let scan = scanner.scan_text(&s.path, s.text.as_bytes());
        let found: BTreeSet<String> = scan.findings.iter().map(|f| f.rule.clone()).collect();
        // Nothing generated may show in a finding.
        let shown = format!("{:?}", scan);
        for g in s.generated.iter().filter(|g| g.len() >= 12) {
            assert!(
                !shown.contains(g.as_str()),
                "{}: a generated secret shows in {shown}",
                s.source
            );
        }
        for rule in BUILTIN_RULES {
            let c = counts.entry(rule).or_default();
            match (s.expect.contains(rule), found.contains(rule)) {
                (true, true) => c.tp += 1,
                (true, false) => {
                    c.fn_ += 1;
                    failures.push(format!("{}: missed {rule} in {:?}", s.source, s.text));
                }
                (false, true) => {
                    c.fp += 1;
                    failures.push(format!(
                        "{}: false {rule}: {:?} in {:?}",
                        s.source, scan.findings, s.text
                    ));
                }
                (false, false) => {
                    // A true negative of a rule is a sample of its own
                    // file that expects nothing from it.
                    if s.source.starts_with(&format!("{rule}.txt:")) {
                        c.tn += 1;
                    }
                }
            }
        }
    }
    println!(
        "{:<20} {:>4} {:>4} {:>4} {:>4} {:>10} {:>8}",
        "rule", "TP", "FN", "FP", "TN", "precision", "recall"
    );
    for (rule, c) in &counts {
        let precision = if c.tp + c.fp == 0 {
            1.0
        } else {
            c.tp as f64 / (c.tp + c.fp) as f64
        };
        let recall = if c.tp + c.fn_ == 0 {
            1.0
        } else {
            c.tp as f64 / (c.tp + c.fn_) as f64
        };
        println!(
            "{rule:<20} {:>4} {:>4} {:>4} {:>4} {:>9.1}% {:>7.1}%",
            c.tp,
            c.fn_,
            c.fp,
            c.tn,
            precision * 100.0,
            recall * 100.0
        );
    }
    println!("{} samples", samples.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for (rule, c) in &counts {
        assert!(c.tp >= 5, "{rule}: only {} true positives", c.tp);
        assert!(c.tn >= 5, "{rule}: only {} true negatives", c.tn);
    }
}

#[test]
fn a_megabyte_on_one_line_is_scanned_whole() {
    let scanner = SecurityScanner::from_config(OracleConfig::empty()).unwrap();
    let mut rng = Rng(7);
    let key = format!("AKIA{}", random(&mut rng, "upper_digit", 16));
    // Minified-JS-like filler with near misses for every pattern family:
    // `password=` without a value, quotes, `SELECT`, `curl`, `chmod`.
    let unit = "var a=1,b='x';password=;select(\"q\");curl;chmod(x);eval;";
    let mut line = String::with_capacity(1 << 20);
    while line.len() < (1 << 20) / 2 {
        line.push_str(unit);
    }
    line.push_str(&format!("k=\"{key}\";"));
    while line.len() < 1 << 20 {
        line.push_str(unit);
    }
    assert!(!line.contains('\n'));
    let scan = scanner.scan_text("dist/app.min.js", line.as_bytes());
    assert_eq!(scan.findings.len(), 1, "{:?}", scan.findings);
    let f = &scan.findings[0];
    assert_eq!((f.rule.as_str(), f.line), ("no-secrets", 1));
    assert_eq!(f.shown, "AKIA****");
    assert_eq!(scan.secrets(), [key]);

    // A pathological line for the assignment pattern: "token=" forever.
    let evil = "token=".repeat((1 << 20) / 6);
    assert!(scanner.scan_text("x", evil.as_bytes()).findings.is_empty());
}

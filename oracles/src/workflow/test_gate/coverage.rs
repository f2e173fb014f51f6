//! Reading line coverage from the three report formats the common tools
//! write:
//!
//! * **lcov** tracefiles (`lcov`, `grcov`, `cargo llvm-cov --lcov`, c8,
//!   nyc, coverage.py `lcov`): `SF:` starts a file's record,
//!   `DA:line,hits` / `LF:` / `LH:` give its lines, `end_of_record` ends it.
//!   Lines are taken from `DA:` when present (so one file reported by
//!   several test runs is merged line by line), else from `LF:`/`LH:`.
//! * **Cobertura** XML (coverage.py `xml`, `cargo tarpaulin`, gcovr,
//!   JaCoCo converters): the total is the `line-rate` of `<coverage>`; files
//!   come from `<class filename=…>` and their `<lines><line number hits>`.
//! * **llvm-cov JSON** (`llvm-cov export -format=text`, `cargo llvm-cov
//!   --json`): the total is `data[0].totals.lines.percent`; files come from
//!   `data[0].files[].summary.lines`.
//!
//! Every parser fails with a message saying what is wrong and where — a
//! report that does not parse is never read as "covered".
//!
//! ```
//! use ahp_oracles::workflow::test_gate::coverage::parse_lcov;
//! let report = parse_lcov("SF:src/a.rs\nDA:1,1\nDA:2,0\nend_of_record\nSF:src/b.rs\nLF:10\nLH:10\nend_of_record\n").unwrap();
//! assert_eq!((report.lines_covered, report.lines_valid), (Some(11), Some(12)));
//! assert!((report.percent - 91.666).abs() < 0.01);
//! assert_eq!(report.files[0].path, "src/a.rs");
//! assert_eq!(report.files[0].percent(), 50.0);
//! assert!(parse_lcov("LF:x\n").is_err());
//! ```

use super::junit::{attr, position};
use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;
use std::collections::BTreeMap;

ahp_engine::name_enum! {
    /// The coverage report formats TestGate reads.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    pub enum CoverageFormat {
        /// An lcov tracefile (`lcov`).
        Lcov => "lcov",
        /// Cobertura XML (`cobertura`).
        Cobertura => "cobertura",
        /// `llvm-cov export` JSON (`llvm-cov-json`).
        LlvmCovJson => "llvm-cov-json",
    }
}

impl CoverageFormat {
    /// Parses a report of this format.
    pub fn parse(self, text: &str) -> Result<CoverageReport, String> {
        match self {
            CoverageFormat::Lcov => parse_lcov(text),
            CoverageFormat::Cobertura => parse_cobertura(text),
            CoverageFormat::LlvmCovJson => parse_llvm_cov_json(text),
        }
    }
}

/// Line coverage of one source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCoverage {
    /// The path as the report gives it.
    pub path: String,
    /// Instrumented lines.
    pub lines_valid: u64,
    /// Instrumented lines that ran.
    pub lines_covered: u64,
}

impl FileCoverage {
    /// Covered lines in percent (100 for a file without instrumented lines).
    pub fn percent(&self) -> f64 {
        percent(self.lines_covered, self.lines_valid)
    }

    /// Lines that did not run.
    pub fn missed(&self) -> u64 {
        self.lines_valid.saturating_sub(self.lines_covered)
    }
}

/// What a coverage report says.
#[derive(Debug, Clone, PartialEq)]
pub struct CoverageReport {
    /// Line coverage of the whole report, 0–100.
    pub percent: f64,
    /// Instrumented lines, when the report gives them.
    pub lines_valid: Option<u64>,
    /// Covered lines, when the report gives them.
    pub lines_covered: Option<u64>,
    /// Per-file coverage, in report order (may be empty).
    pub files: Vec<FileCoverage>,
}

impl CoverageReport {
    /// The files with the lowest coverage first (most missed lines first
    /// among equals), only those below 100%.
    pub fn least_covered(&self, n: usize) -> Vec<&FileCoverage> {
        let mut files: Vec<&FileCoverage> = self
            .files
            .iter()
            .filter(|f| f.lines_valid > 0 && f.lines_covered < f.lines_valid)
            .collect();
        files.sort_by(|a, b| {
            a.percent()
                .total_cmp(&b.percent())
                .then(b.missed().cmp(&a.missed()))
                .then(a.path.cmp(&b.path))
        });
        files.truncate(n);
        files
    }
}

fn percent(covered: u64, valid: u64) -> f64 {
    if valid == 0 {
        100.0
    } else {
        covered as f64 * 100.0 / valid as f64
    }
}

/// One file of an lcov tracefile, while reading.
#[derive(Default)]
struct LcovFile {
    /// line → hits, from `DA:`.
    lines: BTreeMap<u64, u64>,
    /// From `LF:` / `LH:` (the largest seen, for files without `DA:`).
    found: Option<u64>,
    hit: Option<u64>,
}

/// Parses an lcov tracefile. Errors name the line (`line 7: …`).
pub fn parse_lcov(text: &str) -> Result<CoverageReport, String> {
    let mut files: Vec<(String, LcovFile)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut current: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line == "end_of_record" {
            if current.take().is_none() {
                return Err(format!(
                    "line {line_no}: `end_of_record` without an `SF:` record before it"
                ));
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "line {line_no}: `{}` is not an lcov line (`KEY:value` or `end_of_record`); is this an lcov tracefile?",
                crate::template::truncate(line, 60)
            ));
        };
        let value = value.trim();
        if key == "SF" {
            if value.is_empty() {
                return Err(format!("line {line_no}: `SF:` without a file name"));
            }
            let i = match index.get(value) {
                Some(&i) => i,
                None => {
                    files.push((value.to_string(), LcovFile::default()));
                    index.insert(value.to_string(), files.len() - 1);
                    files.len() - 1
                }
            };
            current = Some(i);
            continue;
        }
        if !matches!(key, "DA" | "LF" | "LH") {
            // TN, FN, FNDA, FNF, FNH, BRDA, BRF, BRH, VER, …: not line coverage.
            if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || key.is_empty() {
                return Err(format!(
                    "line {line_no}: `{}` is not an lcov line (`KEY:value`)",
                    crate::template::truncate(line, 60)
                ));
            }
            continue;
        }
        let Some(i) = current else {
            return Err(format!(
                "line {line_no}: `{key}:` outside a file record (no `SF:` before it)"
            ));
        };
        let file = &mut files[i].1;
        let number = |s: &str, what: &str| -> Result<u64, String> {
            s.trim().parse::<u64>().map_err(|_| {
                format!(
                    "line {line_no}: {what} `{}` is not a whole number",
                    s.trim()
                )
            })
        };
        match key {
            "DA" => {
                let mut parts = value.split(',');
                let line_number = number(parts.next().unwrap_or(""), "the DA line number")?;
                let hits = parts
                    .next()
                    .ok_or_else(|| format!("line {line_no}: `DA:{value}` needs `line,hits`"))?;
                // Some tools write negative or fractional counts after
                // overflow; any non-zero count means the line ran.
                let hits_value = match hits.trim().parse::<u64>() {
                    Ok(h) => h,
                    Err(_) => match hits.trim().parse::<f64>() {
                        Ok(h) if h.is_finite() => u64::from(h != 0.0),
                        _ => {
                            return Err(format!(
                                "line {line_no}: the DA hit count `{}` is not a number",
                                hits.trim()
                            ));
                        }
                    },
                };
                let entry = file.lines.entry(line_number).or_insert(0);
                *entry = entry.saturating_add(hits_value);
            }
            "LF" => {
                let v = number(value, "LF")?;
                file.found = Some(file.found.map_or(v, |f| f.max(v)));
            }
            _ => {
                let v = number(value, "LH")?;
                file.hit = Some(file.hit.map_or(v, |h| h.max(v)));
            }
        }
    }
    if let Some(i) = current {
        return Err(format!(
            "the record of `{}` has no `end_of_record` (a truncated tracefile?)",
            files[i].0
        ));
    }
    if files.is_empty() {
        return Err("no `SF:` record: is this an lcov tracefile?".to_string());
    }
    let mut out = Vec::with_capacity(files.len());
    for (path, f) in files {
        let (valid, covered) = if f.lines.is_empty() {
            let found = f.found.unwrap_or(0);
            let hit = f.hit.unwrap_or(0);
            if hit > found {
                return Err(format!("`{path}`: LH ({hit}) is larger than LF ({found})"));
            }
            (found, hit)
        } else {
            let valid = f.lines.len() as u64;
            let covered = f.lines.values().filter(|h| **h > 0).count() as u64;
            (valid, covered)
        };
        out.push(FileCoverage {
            path,
            lines_valid: valid,
            lines_covered: covered,
        });
    }
    let valid: u64 = out.iter().map(|f| f.lines_valid).sum();
    let covered: u64 = out.iter().map(|f| f.lines_covered).sum();
    if valid == 0 {
        return Err(
            "the tracefile has no instrumented line (every LF is 0): is it the right report?"
                .to_string(),
        );
    }
    Ok(CoverageReport {
        percent: percent(covered, valid),
        lines_valid: Some(valid),
        lines_covered: Some(covered),
        files: out,
    })
}

/// A Cobertura file, while reading.
#[derive(Default)]
struct CoberturaFile {
    lines: BTreeMap<u64, u64>,
}

/// Parses a Cobertura XML report. Errors name the position.
pub fn parse_cobertura(xml: &str) -> Result<CoverageReport, String> {
    let mut reader = Reader::from_str(xml);
    let mut stack: Vec<String> = Vec::new();
    let mut total: Option<(f64, Option<u64>, Option<u64>)> = None;
    let mut files: Vec<(String, CoberturaFile)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut current: Option<usize> = None;
    let mut seen_root = false;
    let at = |pos: u64| position(xml, pos);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("{}: {e}", at(reader.error_position())))?;
        let (e, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                if let Some(name) = stack.pop()
                    && name == "class"
                {
                    current = None;
                }
                continue;
            }
            Event::Text(t) => {
                if stack.is_empty() && !t.decode().unwrap_or_default().trim().is_empty() {
                    return Err(format!(
                        "{}: text outside the root element; is this an XML file?",
                        at(reader.buffer_position())
                    ));
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
        if stack.is_empty() {
            if seen_root {
                return Err(format!(
                    "{}: a second root element <{name}>",
                    at(reader.buffer_position())
                ));
            }
            seen_root = true;
            if name != "coverage" {
                return Err(format!(
                    "{}: the root element is <{name}>, expected <coverage>; is this a Cobertura report?",
                    at(reader.buffer_position())
                ));
            }
            let valid = attr(&e, "lines-valid").and_then(|v| v.trim().parse::<u64>().ok());
            let covered = attr(&e, "lines-covered").and_then(|v| v.trim().parse::<u64>().ok());
            let rate = match attr(&e, "line-rate") {
                Some(r) => r,
                None => {
                    return Err(format!(
                        "{}: <coverage> has no `line-rate` attribute",
                        at(reader.buffer_position())
                    ));
                }
            };
            let pct = match rate.trim().parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => r * 100.0,
                // No instrumented line at all: some tools write NaN.
                _ if valid == Some(0) => 100.0,
                _ => {
                    return Err(format!(
                        "{}: `line-rate=\"{rate}\"` is not a number between 0 and 1",
                        at(reader.buffer_position())
                    ));
                }
            };
            total = Some((pct, valid, covered));
        } else if name == "class" {
            if let Some(file) = attr(&e, "filename").filter(|f| !f.trim().is_empty()) {
                let i = match index.get(&file) {
                    Some(&i) => i,
                    None => {
                        files.push((file.clone(), CoberturaFile::default()));
                        index.insert(file, files.len() - 1);
                        files.len() - 1
                    }
                };
                current = Some(i);
            }
        } else if name == "line"
            && stack.len() >= 2
            && stack[stack.len() - 1] == "lines"
            && stack[stack.len() - 2] == "class"
            && let Some(i) = current
        {
            let number = attr(&e, "number").and_then(|v| v.trim().parse::<u64>().ok());
            let hits = attr(&e, "hits").map(|v| v.trim().parse::<f64>());
            match (number, hits) {
                (Some(n), Some(Ok(h))) if h.is_finite() => {
                    let entry = files[i].1.lines.entry(n).or_insert(0);
                    *entry = entry.saturating_add(u64::from(h > 0.0));
                }
                _ => {
                    return Err(format!(
                        "{}: <line> needs whole-number `number` and `hits` attributes",
                        at(reader.buffer_position())
                    ));
                }
            }
        }
        if !empty {
            stack.push(name);
        } else if name == "class" {
            current = None;
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!(
            "{}: the file ends inside <{open}> (a truncated report?)",
            at(xml.len() as u64)
        ));
    }
    let Some((pct, valid, covered)) = total else {
        return Err("no <coverage> element (an empty file?)".to_string());
    };
    let files = files
        .into_iter()
        .map(|(path, f)| FileCoverage {
            path,
            lines_valid: f.lines.len() as u64,
            lines_covered: f.lines.values().filter(|h| **h > 0).count() as u64,
        })
        .filter(|f| f.lines_valid > 0)
        .collect();
    Ok(CoverageReport {
        percent: pct,
        lines_valid: valid,
        lines_covered: covered,
        files,
    })
}

/// Parses `llvm-cov export` JSON. Errors name the JSON position or the
/// missing field.
pub fn parse_llvm_cov_json(text: &str) -> Result<CoverageReport, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("line {}, column {}: {e}", e.line(), e.column()))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .ok_or("no `data[0]`: is this `llvm-cov export` JSON?")?;
    let lines = data
        .pointer("/totals/lines")
        .ok_or("no `data[0].totals.lines`: is this `llvm-cov export` JSON?")?;
    let pct = lines
        .get("percent")
        .and_then(Value::as_f64)
        .ok_or("`data[0].totals.lines.percent` is missing or not a number")?;
    if !(0.0..=100.0).contains(&pct) {
        return Err(format!(
            "`data[0].totals.lines.percent` is {pct}, not between 0 and 100"
        ));
    }
    let valid = lines.get("count").and_then(Value::as_u64);
    let covered = lines.get("covered").and_then(Value::as_u64);
    let mut files = Vec::new();
    if let Some(list) = data.get("files").and_then(Value::as_array) {
        for f in list {
            let (Some(path), Some(count), Some(cov)) = (
                f.get("filename").and_then(Value::as_str),
                f.pointer("/summary/lines/count").and_then(Value::as_u64),
                f.pointer("/summary/lines/covered").and_then(Value::as_u64),
            ) else {
                continue;
            };
            if count > 0 {
                files.push(FileCoverage {
                    path: path.to_string(),
                    lines_valid: count,
                    lines_covered: cov.min(count),
                });
            }
        }
    }
    Ok(CoverageReport {
        percent: pct,
        lines_valid: valid,
        lines_covered: covered,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcov_merges_records_of_one_file() {
        let text = "TN:unit\nSF:/p/src/a.rs\nFN:1,f\nFNDA:1,f\nDA:1,1\nDA:2,0\nDA:3,0\nLF:3\nLH:1\nend_of_record\n\
                    TN:integration\nSF:/p/src/a.rs\nDA:1,0\nDA:2,4\nDA:3,0\nend_of_record\n";
        let r = parse_lcov(text).unwrap();
        assert_eq!(r.files.len(), 1);
        assert_eq!(r.files[0].lines_valid, 3);
        assert_eq!(r.files[0].lines_covered, 2);
    }

    #[test]
    fn lcov_errors_name_the_line() {
        for (text, expected) in [
            ("", "no `SF:` record"),
            (
                "just some text\n",
                "line 1: `just some text` is not an lcov line",
            ),
            ("SF:a\nLF:ten\nend_of_record\n", "line 2: LF `ten`"),
            ("DA:1,1\n", "line 1: `DA:` outside a file record"),
            ("SF:a\nDA:1\nend_of_record\n", "line 2"),
            ("SF:a\nDA:1,1\n", "no `end_of_record`"),
            (
                "SF:a\nLF:1\nLH:2\nend_of_record\n",
                "LH (2) is larger than LF (1)",
            ),
            ("SF:a\nLF:0\nLH:0\nend_of_record\n", "no instrumented line"),
            ("end_of_record\n", "line 1: `end_of_record` without"),
            ("<?xml version=\"1.0\"?>\n", "is not an lcov line"),
        ] {
            match parse_lcov(text) {
                Ok(r) => panic!("{text:?} parsed as {r:?}"),
                Err(e) => assert!(e.contains(expected), "{text:?}: {e}"),
            }
        }
    }

    #[test]
    fn cobertura_counts_class_lines_once() {
        let xml = r#"<?xml version="1.0" ?>
<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">
<coverage line-rate="0.5" lines-valid="4" lines-covered="2" version="7.4">
  <sources><source>/p</source></sources>
  <packages><package name="app"><classes>
    <class name="a.py" filename="app/a.py" line-rate="0.3333">
      <methods><method name="f"><lines><line number="1" hits="1"/></lines></method></methods>
      <lines><line number="1" hits="1"/><line number="2" hits="0"/><line number="3" hits="0"/></lines>
    </class>
    <class name="b.py" filename="app/b.py" line-rate="1"><lines><line number="1" hits="3"/></lines></class>
    <class name="empty.py" filename="app/empty.py" line-rate="1"/>
  </classes></package></packages>
</coverage>"#;
        let r = parse_cobertura(xml).unwrap();
        assert_eq!(r.percent, 50.0);
        assert_eq!((r.lines_valid, r.lines_covered), (Some(4), Some(2)));
        assert_eq!(r.files.len(), 2);
        assert_eq!(r.files[0].path, "app/a.py");
        assert_eq!((r.files[0].lines_valid, r.files[0].lines_covered), (3, 1));
        assert_eq!(r.least_covered(5)[0].path, "app/a.py");
        assert_eq!(r.least_covered(5).len(), 1);
    }

    #[test]
    fn cobertura_errors() {
        for (xml, expected) in [
            ("", "no <coverage>"),
            ("<report/>", "root element is <report>"),
            ("<coverage/>", "no `line-rate`"),
            (
                "<coverage line-rate=\"high\"/>",
                "not a number between 0 and 1",
            ),
            (
                "<coverage line-rate=\"1.5\"/>",
                "not a number between 0 and 1",
            ),
            (
                "<coverage line-rate=\"0.5\"><packages>",
                "ends inside <packages>",
            ),
            ("<coverage line-rate=\"0.5\"></packages>", "line 1"),
            (
                "<coverage line-rate=\"0.5\"><class filename=\"a\"><lines><line number=\"x\" hits=\"1\"/></lines></class></coverage>",
                "<line> needs",
            ),
            ("garbage", "text outside"),
        ] {
            match parse_cobertura(xml) {
                Ok(r) => panic!("{xml:?} parsed as {r:?}"),
                Err(e) => assert!(e.contains(expected), "{xml:?}: {e}"),
            }
        }
        // NaN with no lines: nothing to cover.
        let r = parse_cobertura("<coverage line-rate=\"NaN\" lines-valid=\"0\"/>").unwrap();
        assert_eq!(r.percent, 100.0);
    }

    #[test]
    fn random_reports_never_panic() {
        let pieces = [
            "SF:",
            "DA:",
            "LF:",
            "LH:",
            "end_of_record",
            "\n",
            ",",
            "1",
            "0",
            "-1",
            "1e9",
            "x",
            "é",
            ":",
            "<coverage",
            " line-rate=\"",
            "0.5",
            "\"",
            ">",
            "/>",
            "</coverage>",
            "<class filename=\"a\">",
            "</class>",
            "<lines>",
            "</lines>",
            "<line number=\"",
            "\" hits=\"",
            "<![CDATA[",
            "]]>",
            "&amp;",
            "&#10;",
            "{",
            "}",
            "[",
            "]",
            "\"data\":",
            "\"totals\":",
            "\"lines\":",
            "\"percent\":",
            "NaN",
        ];
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..4000 {
            let len = (next() % 40) as usize;
            let doc: String = (0..len)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect();
            let _ = parse_lcov(&doc);
            let _ = parse_cobertura(&doc);
            let _ = parse_llvm_cov_json(&doc);
            let _ = crate::workflow::test_gate::junit::parse_junit(&doc);
        }
    }

    #[test]
    fn llvm_cov_json() {
        let text = r#"{"type":"llvm.coverage.json.export","version":"2.0.1","data":[{
            "files":[{"filename":"/p/src/a.rs","summary":{"lines":{"count":10,"covered":4,"percent":40}}},
                     {"filename":"/p/src/b.rs","summary":{"lines":{"count":10,"covered":10,"percent":100}}}],
            "totals":{"lines":{"count":20,"covered":14,"percent":70.0}}}]}"#;
        let r = parse_llvm_cov_json(text).unwrap();
        assert_eq!(r.percent, 70.0);
        assert_eq!(r.least_covered(3).len(), 1);
        for (text, expected) in [
            ("{", "line 1, column 1"),
            ("{}", "no `data[0]`"),
            (r#"{"data":[]}"#, "no `data[0]`"),
            (r#"{"data":[{"totals":{}}]}"#, "no `data[0].totals.lines`"),
            (
                r#"{"data":[{"totals":{"lines":{"percent":"x"}}}]}"#,
                "not a number",
            ),
            (
                r#"{"data":[{"totals":{"lines":{"percent":120}}}]}"#,
                "not between",
            ),
        ] {
            match parse_llvm_cov_json(text) {
                Ok(r) => panic!("{text:?} parsed as {r:?}"),
                Err(e) => assert!(e.contains(expected), "{text:?}: {e}"),
            }
        }
    }
}

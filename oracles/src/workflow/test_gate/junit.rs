//! Reading JUnit XML test reports (the format of Surefire, pytest
//! `--junitxml`, jest-junit, cargo-nextest, go-junit-report, …).
//!
//! The root is `<testsuites>` or `<testsuite>`; suites may nest. Every
//! `<testcase>` counts as one test: with a `<failure>` child it failed, with
//! an `<error>` child it errored, with `<skipped>` it was skipped, and
//! otherwise it passed. A test is named `classname::name` (or `name` alone
//! when there is no class name), and the message of a failure is the first
//! line of its `message` attribute, else of its text.
//!
//! A report whose suites carry `failures`/`errors` counts but no
//! `<testcase>` at all still counts those failures (as one entry per suite),
//! so a summary-only report cannot pass by accident.
//!
//! ```
//! use ahp_oracles::workflow::test_gate::junit::{parse_junit, Outcome};
//! let report = parse_junit(r#"<testsuite name="math">
//!   <testcase classname="math.Add" name="adds"/>
//!   <testcase classname="math.Div" name="by_zero"><failure message="expected an error&#10;but got 0"/></testcase>
//!   <testcase classname="math.Div" name="later"><skipped/></testcase>
//! </testsuite>"#).unwrap();
//! assert_eq!((report.total, report.passed, report.failed, report.skipped), (3, 1, 1, 1));
//! assert_eq!(report.problems[0].test, "math.Div::by_zero");
//! assert_eq!(report.problems[0].outcome, Outcome::Failed);
//! assert_eq!(report.problems[0].message, "expected an error");
//! assert!(parse_junit("<testsuite><testcase>").is_err());
//! ```

use crate::template::truncate;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// How many characters of a failure message are kept.
pub const MAX_MESSAGE: usize = 200;

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// No `<failure>`, `<error>` or `<skipped>`.
    Passed,
    /// `<skipped>`.
    Skipped,
    /// `<failure>`: an assertion did not hold.
    Failed,
    /// `<error>`: the test could not run to its end (an exception, a panic
    /// outside an assertion, a setup failure).
    Error,
}

/// A test that failed or errored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestProblem {
    /// `classname::name`, or `name` when the class name is empty.
    pub test: String,
    /// [`Outcome::Failed`] or [`Outcome::Error`].
    pub outcome: Outcome,
    /// The first line of the failure's message (may be empty).
    pub message: String,
}

impl TestProblem {
    /// `name (message)`, or the name alone without a message.
    pub fn describe(&self) -> String {
        if self.message.is_empty() {
            self.test.clone()
        } else {
            format!("{}: {}", self.test, self.message)
        }
    }
}

/// What one or more JUnit reports say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JunitReport {
    /// Test cases seen.
    pub total: usize,
    /// Passed.
    pub passed: usize,
    /// With a `<failure>`.
    pub failed: usize,
    /// With an `<error>` (and no `<failure>`).
    pub errored: usize,
    /// Skipped.
    pub skipped: usize,
    /// The failed and errored tests, in report order.
    pub problems: Vec<TestProblem>,
}

impl JunitReport {
    /// Adds another report's numbers and problems to this one.
    pub fn merge(&mut self, other: JunitReport) {
        self.total += other.total;
        self.passed += other.passed;
        self.failed += other.failed;
        self.errored += other.errored;
        self.skipped += other.skipped;
        self.problems.extend(other.problems);
    }

    /// Failed plus errored.
    pub fn failing(&self) -> usize {
        self.failed + self.errored
    }
}

/// The test case being read.
struct Case {
    test: String,
    outcome: Outcome,
    message: String,
    /// The failure's `type` attribute: the message of last resort.
    kind: String,
    /// Depth of the `<failure>`/`<error>` whose text is being collected.
    collecting: Option<usize>,
    text: String,
}

/// Suite-level counts, for reports without test cases.
#[derive(Default)]
struct SuiteCounts {
    failures: Vec<(String, u64, u64)>,
}

/// Parses one JUnit XML report. The error says what is wrong and where
/// (`line 3, column 7: …`).
pub fn parse_junit(xml: &str) -> Result<JunitReport, String> {
    let mut reader = Reader::from_str(xml);
    let mut report = JunitReport::default();
    let mut stack: Vec<String> = Vec::new();
    let mut seen_root = false;
    let mut case: Option<Case> = None;
    let mut suites = SuiteCounts::default();
    let at = |pos: u64| position(xml, pos);

    loop {
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => return Err(format!("{}: {e}", at(reader.error_position()))),
        };
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) | Event::Empty(e) if stack.is_empty() && seen_root => {
                return Err(format!(
                    "{}: a second root element <{}> after the report's end",
                    at(reader.buffer_position()),
                    local(&e)
                ));
            }
            Event::Start(e) | Event::Empty(e) => {
                let name = local(&e);
                if stack.is_empty() {
                    check_root(&name, &at(reader.buffer_position()))?;
                    seen_root = true;
                }
                open(
                    &e,
                    &name,
                    &mut case,
                    &mut suites,
                    &mut report,
                    stack.len() + 1,
                )?;
                // `<testcase/>` opens and closes at once.
                if empty {
                    close(&name, &mut case, &mut report, stack.len() + 1);
                } else {
                    stack.push(name);
                }
            }
            Event::End(_) => {
                let depth = stack.len();
                let Some(name) = stack.pop() else {
                    return Err(format!(
                        "{}: a closing tag without an opening one",
                        at(reader.buffer_position())
                    ));
                };
                close(&name, &mut case, &mut report, depth);
            }
            Event::Text(t) => {
                let text = t
                    .decode()
                    .map_err(|e| format!("{}: {e}", at(reader.buffer_position())))?;
                if stack.is_empty() {
                    if !text.trim().is_empty() {
                        return Err(format!(
                            "{}: text outside the root element (`{}`); is this an XML file?",
                            at(reader.buffer_position()),
                            truncate(text.trim(), 40)
                        ));
                    }
                } else {
                    collect(&mut case, &text);
                }
            }
            Event::CData(t) => {
                if stack.is_empty() {
                    return Err(format!(
                        "{}: CDATA outside the root element",
                        at(reader.buffer_position())
                    ));
                }
                let text = t
                    .decode()
                    .map_err(|e| format!("{}: {e}", at(reader.buffer_position())))?;
                collect(&mut case, &text);
            }
            Event::GeneralRef(r) => {
                if stack.is_empty() {
                    return Err(format!(
                        "{}: an entity reference outside the root element",
                        at(reader.buffer_position())
                    ));
                }
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => c.to_string(),
                    _ => {
                        let name = r.decode().unwrap_or_default();
                        predefined_entity(&name).unwrap_or_default().to_string()
                    }
                };
                collect(&mut case, &resolved);
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!(
            "{}: the file ends inside <{open}> (a truncated report?)",
            at(xml.len() as u64)
        ));
    }
    if !seen_root {
        return Err("no XML element at all (an empty file?)".to_string());
    }
    if report.total == 0 {
        for (suite, failures, errors) in suites.failures {
            report.failed += usize::try_from(failures).unwrap_or(usize::MAX);
            report.errored += usize::try_from(errors).unwrap_or(usize::MAX);
            report.total = report.total.saturating_add(
                usize::try_from(failures.saturating_add(errors)).unwrap_or(usize::MAX),
            );
            report.problems.push(TestProblem {
                test: if suite.is_empty() {
                    "(unnamed suite)".to_string()
                } else {
                    suite
                },
                outcome: if failures > 0 {
                    Outcome::Failed
                } else {
                    Outcome::Error
                },
                message: format!(
                    "{failures} failures and {errors} errors (the report lists no test cases)"
                ),
            });
        }
    }
    Ok(report)
}

fn check_root(name: &str, at: &str) -> Result<(), String> {
    if name == "testsuites" || name == "testsuite" {
        Ok(())
    } else {
        Err(format!(
            "{at}: the root element is <{name}>, expected <testsuites> or <testsuite>; is this a JUnit report?"
        ))
    }
}

/// An element starts (`Empty` elements start and close at once).
fn open(
    e: &BytesStart<'_>,
    name: &str,
    case: &mut Option<Case>,
    suites: &mut SuiteCounts,
    report: &mut JunitReport,
    depth: usize,
) -> Result<(), String> {
    match name {
        "testsuite" => {
            let failures = count_attr(e, "failures");
            let errors = count_attr(e, "errors");
            if failures + errors > 0 {
                suites
                    .failures
                    .push((attr(e, "name").unwrap_or_default(), failures, errors));
            }
        }
        "testcase" => {
            if case.is_some() {
                // A test case inside a test case: count the outer one as it
                // stands and start the inner one.
                close("testcase", case, report, depth);
            }
            let class = attr(e, "classname").unwrap_or_default();
            let test = attr(e, "name").unwrap_or_default();
            let test = match (class.trim(), test.trim()) {
                ("", "") => "(unnamed test)".to_string(),
                ("", n) => n.to_string(),
                (c, "") => format!("{c}::(unnamed test)"),
                (c, n) => format!("{c}::{n}"),
            };
            *case = Some(Case {
                test,
                outcome: Outcome::Passed,
                message: String::new(),
                kind: String::new(),
                collecting: None,
                text: String::new(),
            });
        }
        "failure" | "error" | "skipped" => {
            let Some(c) = case.as_mut() else {
                return Ok(()); // e.g. a suite-level <error>: counted by its attributes
            };
            let outcome = match name {
                "failure" => Outcome::Failed,
                "error" => Outcome::Error,
                _ => Outcome::Skipped,
            };
            // The first failure or error of a test names it; `error` wins
            // over `failure` only for the outcome when both are there.
            if outcome > c.outcome {
                let first_problem = c.outcome < Outcome::Failed;
                c.outcome = outcome;
                if outcome >= Outcome::Failed && first_problem {
                    c.message = attr(e, "message")
                        .map(|m| first_line(&m))
                        .unwrap_or_default();
                    c.kind = attr(e, "type").map(|t| first_line(&t)).unwrap_or_default();
                    c.text.clear();
                    c.collecting = Some(depth);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// An element ends.
fn close(name: &str, case: &mut Option<Case>, report: &mut JunitReport, depth: usize) {
    match name {
        "testcase" => {
            let Some(c) = case.take() else { return };
            report.total += 1;
            match c.outcome {
                Outcome::Passed => report.passed += 1,
                Outcome::Skipped => report.skipped += 1,
                Outcome::Failed | Outcome::Error => {
                    if c.outcome == Outcome::Failed {
                        report.failed += 1;
                    } else {
                        report.errored += 1;
                    }
                    let mut message = c.message;
                    if message.is_empty() {
                        message = first_line(&c.text);
                    }
                    if message.is_empty() {
                        message = c.kind;
                    }
                    report.problems.push(TestProblem {
                        test: c.test,
                        outcome: c.outcome,
                        message,
                    });
                }
            }
        }
        "failure" | "error" => {
            if let Some(c) = case.as_mut()
                && c.collecting == Some(depth)
            {
                c.collecting = None;
            }
        }
        _ => {}
    }
}

/// Text inside the failure being read.
fn collect(case: &mut Option<Case>, text: &str) {
    if let Some(c) = case.as_mut() {
        // Only the start matters (the first line), so stop growing early.
        if c.collecting.is_some() && c.text.len() < 4 * MAX_MESSAGE {
            c.text.push_str(text);
        }
    }
}

/// The element's local name (without a namespace prefix).
fn local(e: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(e.local_name().as_ref()).into_owned()
}

/// An attribute's value (entities resolved, whitespace normalized as XML
/// 1.0 says); `None` when absent.
pub(crate) fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    for a in e.attributes().flatten() {
        if a.key.local_name().as_ref() == key.as_bytes() {
            return Some(
                match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                    Ok(v) => v.into_owned(),
                    Err(_) => String::from_utf8_lossy(&a.value).into_owned(),
                },
            );
        }
    }
    None
}

/// A count attribute (`failures="2"`); 0 when absent or not a number.
fn count_attr(e: &BytesStart<'_>, key: &str) -> u64 {
    attr(e, key)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0)
}

/// The first non-blank line, trimmed and cut to [`MAX_MESSAGE`].
fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    truncate(line, MAX_MESSAGE)
}

fn predefined_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "apos" => "'",
        "quot" => "\"",
        _ => return None,
    })
}

/// `line L, column C` of a byte offset.
pub(crate) fn position(text: &str, offset: u64) -> String {
    let offset = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(text.len());
    let (line, column) = line_col(text, offset);
    format!("line {line}, column {column}")
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_suites_and_outcomes() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- generated -->
<testsuites name="all">
  <testsuite name="outer">
    <testsuite name="inner">
      <testcase classname="a.B" name="ok" time="0.1"/>
      <testcase classname="a.B" name="bad"><failure type="AssertionError"><![CDATA[
        left != right
        at line 3]]></failure><system-out>noise</system-out></testcase>
      <testcase name="crash"><error message="boom &amp; bust"/></testcase>
      <testcase classname="a.B" name="typed"><failure type="AssertionError"/></testcase>
      <testcase classname="a.B" name="both"><failure message="first"/><error message="second"/></testcase>
      <testcase classname="a.B" name="skip"><skipped message="not now"/></testcase>
    </testsuite>
  </testsuite>
</testsuites>"#;
        let r = parse_junit(xml).unwrap();
        assert_eq!(r.total, 6);
        assert_eq!(r.passed, 1);
        assert_eq!(r.failed, 2);
        assert_eq!(r.errored, 2);
        assert_eq!(r.skipped, 1);
        let names: Vec<_> = r.problems.iter().map(TestProblem::describe).collect();
        assert_eq!(
            names,
            vec![
                "a.B::bad: left != right",
                "crash: boom & bust",
                "a.B::typed: AssertionError",
                "a.B::both: first"
            ]
        );
    }

    #[test]
    fn message_from_text_when_no_attribute() {
        let xml = "<testsuite><testcase classname=\"c\" name=\"n\"><failure>\n\n  assertion `left == right` failed &lt;here&gt;\n  more\n</failure></testcase></testsuite>";
        let r = parse_junit(xml).unwrap();
        assert_eq!(
            r.problems[0].message,
            "assertion `left == right` failed <here>"
        );
    }

    #[test]
    fn summary_only_reports_still_fail() {
        let r = parse_junit(r#"<testsuite name="s" tests="4" failures="2" errors="0"/>"#).unwrap();
        assert_eq!(r.failing(), 2);
        assert_eq!(r.problems[0].test, "s");
    }

    #[test]
    fn malformed_reports_are_errors() {
        for (xml, expected) in [
            ("", "no XML element"),
            ("   \n", "no XML element"),
            ("not xml at all", "text outside the root"),
            ("<html><body/></html>", "root element is <html>"),
            ("<testsuite><testcase></testsuite>", "line 1"),
            ("<testsuite>\n<testcase>", "ends inside <testcase>"),
            ("<testsuite/><testsuite/>", "second root"),
            ("<testsuite></testsuite></x>", "line 1"),
            ("<testsuite><testcase name=\"a></testsuite>", "line 1"),
        ] {
            match parse_junit(xml) {
                Ok(r) => panic!("{xml:?} parsed as {r:?}"),
                Err(e) => assert!(e.contains(expected), "{xml:?}: {e}"),
            }
        }
    }

    #[test]
    fn positions() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é\nx", 1), (1, 1));
        assert_eq!(position("a", 99), "line 1, column 2");
    }
}

//! The built-in detectors of the SecurityScanner: one or more regexes per
//! rule, byte-oriented and ASCII-only (`unicode(false)`), so that scanning
//! is linear in the input and does not care whether a file is valid UTF-8.
//!
//! A hook process scans one tool input and exits, so compiling every
//! detector up front would cost more than the scan. Each built-in detector
//! has keywords, one of which every match contains; the scanner looks for
//! all keywords in one pass and compiles (once) and runs only the detectors
//! whose keywords are there.
//!
//! Every pattern keeps to one line (`[^\r\n]` instead of `.`), except the
//! JavaScript template-literal SQL pattern, which spans lines up to the
//! closing backtick: the regex crate has no backtracking, so a long line or
//! a long file costs time proportional to its length, never more.

use super::SecuritySeverity;
use ahp_engine::secrets;
use regex::bytes::{Regex, RegexBuilder};
use std::sync::OnceLock;

/// A detector's regex: a built-in's is compiled on first use, a custom
/// rule's at load (so that a bad pattern is a load error).
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    source: String,
    re: OnceLock<Option<Regex>>,
}

impl Pattern {
    fn lazy(source: &str) -> Self {
        Pattern {
            source: source.to_string(),
            re: OnceLock::new(),
        }
    }

    /// A pattern compiled already.
    pub(crate) fn ready(re: Regex) -> Self {
        let source = re.as_str().to_string();
        Pattern {
            source,
            re: OnceLock::from(Some(re)),
        }
    }

    /// The compiled regex. `None` only if a built-in pattern did not
    /// compile, which `every_builtin_detector_compiles` rules out; the
    /// detector is then skipped rather than crash the hook.
    pub(crate) fn get(&self) -> Option<&Regex> {
        self.re.get_or_init(|| ascii(&self.source).ok()).as_ref()
    }
}

/// How a detector's match is turned into a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A credential of a known format: the capture is the secret; its
    /// first `shown` characters may be shown, the rest is masked.
    Token {
        /// How many leading characters are shown (the provider prefix).
        shown: usize,
    },
    /// `name = value` with a secret-sounding name: the value must look
    /// random (entropy threshold) and not like a placeholder; suppressed in
    /// test files.
    Assignment,
    /// A `-----BEGIN … PRIVATE KEY-----` block: the body is the secret.
    PrivateKey,
    /// Dangerous code or a dangerous command: the match is shown
    /// (shortened), nothing is masked.
    Code,
}

/// One compiled pattern of a rule.
#[derive(Debug, Clone)]
pub(crate) struct Detector {
    /// The rule it belongs to (`no-secrets`, …, or a custom rule's id).
    pub(crate) rule: String,
    /// What it finds, for messages (`AWS access key`).
    pub(crate) what: String,
    pub(crate) severity: SecuritySeverity,
    pub(crate) re: Pattern,
    /// Lower-case words one of which every match contains (compared
    /// ASCII-case-insensitively); empty: always run.
    pub(crate) keywords: &'static [&'static str],
    /// More lower-case words one of which every match also contains
    /// (empty: none), looked for only when a keyword is there: `curl
    /// https://…` holds `curl` but no `|`, so the `curl | sh` detector
    /// is not compiled for it.
    pub(crate) also: &'static [&'static str],
    pub(crate) kind: Kind,
    /// What to do about it (the first resolution step).
    pub(crate) advice: String,
    /// The match does not count right after an identifier character
    /// (`sql` in sql`SELECT …`): checked in code rather than with a
    /// leading class, which would hide the pattern's literal from the
    /// regex engine's prefilter.
    pub(crate) not_after_ident: bool,
    /// When set, the match counts only if this pattern (anchored with `$`)
    /// matches the text just before it on the same line, and the finding
    /// starts there. Rare matches are found by their literal first (fast);
    /// the context is checked only for them.
    pub(crate) before: Option<Pattern>,
}

/// The size limit of one compiled pattern (as for PermissionChecker).
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// Compiles a built-in pattern: ASCII-only, byte-oriented.
fn ascii(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

const SECRET_ADVICE: &str = "remove the secret from the change and rotate it (treat it as exposed); read it from the environment or a secret store instead";
const KEY_ADVICE: &str = "remove the private key from the change, revoke and replace it (treat it as exposed); keep keys out of the repository (ssh-agent, a secret store)";
const SQL_ADVICE: &str = "use a parameterized query (placeholders such as ?, $1 or %s passed separately) instead of building SQL from strings";
const SHELL_ADVICE: &str = "pass the arguments as a list without a shell (e.g. subprocess.run([...]), execFile, exec.Command(name, args...)), or quote every value (shlex.quote)";
const CURL_ADVICE: &str =
    "download the script to a file, check it (checksum or signature), then run it";
const CHMOD_ADVICE: &str =
    "grant only what is needed (e.g. 755 for directories, 644 for files, or a group)";

/// Where SQL begins inside a string literal: `SELECT … FROM`, `INSERT
/// INTO`, `UPDATE t SET`, `DELETE FROM`, `REPLACE INTO`. `x` is the class
/// of characters the literal cannot contain (its quotes, and newlines for
/// one-line literals).
fn sql_start(x: &str) -> String {
    format!(
        r"(?:select\s+(?:distinct\s+)?[\w.*()]+(?:\s*,\s*[\w.*()]+)*\s+from\b[^{x}]*|insert\s+into\s[^{x}]*|update\s+[\w.\[\]]+\s+set\s[^{x}]*|delete\s+from\s[^{x}]*|replace\s+into\s[^{x}]*)"
    )
}

/// The built-in detectors of `rule` (one of [`super::BUILTIN_RULES`]).
pub(crate) fn builtin(rule: &str) -> Result<Vec<Detector>, regex::Error> {
    let d = |what: &str, sev: SecuritySeverity, kind: Kind, advice: &str, pattern: &str| {
        Ok::<_, regex::Error>(Detector {
            rule: rule.to_string(),
            what: what.to_string(),
            severity: sev,
            re: Pattern::lazy(pattern),
            keywords: keywords_of(what),
            also: also_of(what),
            kind,
            advice: advice.to_string(),
            not_after_ident: false,
            before: None,
        })
    };
    use Kind::*;
    use SecuritySeverity::*;
    Ok(match rule {
        "no-secrets" => {
            // The token shapes are shared with the log's masking
            // (ahp_engine::secrets), so that what is reported here is also
            // never logged, whether or not this scanner ran.
            let mut v = secrets::TOKENS
                .iter()
                .map(|t| {
                    let sev = match t.what {
                        "Slack webhook URL" | "JSON Web Token" => High,
                        _ => Critical,
                    };
                    d(
                        t.what,
                        sev,
                        Token { shown: t.shown },
                        SECRET_ADVICE,
                        t.pattern,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            v.push(d(
                    "secret assigned to a variable",
                    High,
                    Assignment,
                    SECRET_ADVICE,
                    r#"(?i)(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?)[a-z0-9_-]*["']?\s*(?::=|=>|==?|:)\s*(?:"([^"\r\n]{12,200})"|'([^'\r\n]{12,200})'|([A-Za-z0-9+/=_-]{12,200}))"#,
                )?);
            // Without `no-private-keys`, key blocks are still secrets.
            v.extend(private_key(rule)?);
            v
        }
        "no-private-keys" => private_key(rule)?,
        "no-sql-injection" => {
            // One-line literals, in either quote: each may hold the other
            // quote. Built here only: a hook call builds every rule's
            // detectors, and these strings are long.
            let dq = sql_start(r#""\r\n"#);
            let sq = sql_start(r"'\r\n");
            let lit = format!(r#"(?:"\s*{dq}"|'\s*{sq}')"#);
            let multi = sql_start("`");
            vec![
                // "SELECT … WHERE id = " + id   /   "…" . $id   /   "…" || x  /  "…".format(x)
                d(
                    "SQL built by string concatenation",
                    High,
                    Code,
                    SQL_ADVICE,
                    &format!(r#"(?i){lit}\s*(?:\+|\.|\|\|)\s*[A-Za-z_$]"#),
                )?,
                // f"SELECT … {x}"  /  $"SELECT … {x}" (C#)
                d(
                    "SQL built by string interpolation",
                    High,
                    Code,
                    SQL_ADVICE,
                    &format!(r#"(?i)(?:\b[fF][rR]?|\$@?)(?:"\s*{dq}|'\s*{sq})\{{[^}}\r\n]+\}}"#),
                )?,
                // `SELECT … ${x}` (JavaScript; not a tagged template like sql`…`)
                {
                    let mut t = d(
                        "SQL built in a template literal",
                        High,
                        Code,
                        SQL_ADVICE,
                        &format!(r"(?i)`\s*{multi}\$\{{"),
                    )?;
                    t.not_after_ident = true;
                    t
                },
                // "SELECT … %s" % x   (Python %-formatting, not execute(q, params))
                d(
                    "SQL built with %-formatting",
                    High,
                    Code,
                    SQL_ADVICE,
                    &format!(
                        r#"(?i)(?:"\s*{dq}%[sdr][^"\r\n]*"|'\s*{sq}%[sdr][^'\r\n]*')\s*%\s*[\w(\[{{]"#
                    ),
                )?,
                // Sprintf("SELECT … %s", x), String.format(…)
                d(
                    "SQL built with a format function",
                    High,
                    Code,
                    SQL_ADVICE,
                    &format!(
                        r#"(?i)\b(?:sprintf|format)\(\s*(?:"\s*{dq}|'\s*{sq}|`\s*{multi})%[svdq]"#
                    ),
                )?,
                // "SELECT … #{x}" (Ruby), "SELECT … $x" / "{$x}" (PHP)
                d(
                    "SQL built by string interpolation",
                    High,
                    Code,
                    SQL_ADVICE,
                    &format!(r#"(?i)"\s*{dq}(?:#\{{|\{{\$|\$[A-Za-z_])"#),
                )?,
            ]
        }
        "no-shell-injection" => vec![
            d(
                "shell command built from a string (os.system/os.popen)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\bos\.(?:system|popen)\(\s*(?:[fF]["']|["'][^"'\r\n]*["']\s*(?:\+|%|\.format\()|[A-Za-z_][\w.]*\s*\+)"#,
            )?,
            d(
                "shell command built from a string (subprocess with shell=True)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\bsubprocess\.(?:call|run|Popen|check_call|check_output)\(\s*(?:[fF]["']|["'][^"'\r\n]*["']\s*(?:\+|%|\.format\()|[A-Za-z_][\w.]*\s*\+)[^\r\n]*shell\s*=\s*True"#,
            )?,
            d(
                "shell command built from a string (subprocess.getoutput)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\bsubprocess\.(?:getoutput|getstatusoutput)\(\s*(?:[fF]["']|["'][^"'\r\n]*["']\s*(?:\+|%|\.format\()|[A-Za-z_][\w.]*\s*\+)"#,
            )?,
            d(
                "shell command built from a string (child_process.exec)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\bexec(?:Sync)?\(\s*(?:`[^`\r\n]*\$\{|["'][^"'\r\n]*["']\s*\+|[A-Za-z_$][\w.$]*\s*\+\s*["'`])"#,
            )?,
            d(
                "shell command built from request input (PHP)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\b(?:shell_exec|system|passthru|exec|popen|proc_open)\(\s*(?:[^;\r\n]*\$_(?:GET|POST|REQUEST|COOKIE|SERVER)|["'][^"'\r\n]*["']\s*\.\s*\$)"#,
            )?,
            d(
                "shell command built by interpolation (Ruby)",
                High,
                Code,
                SHELL_ADVICE,
                r#"`[^`\r\n]*#\{"#,
            )?,
            d(
                "shell command built by interpolation (Ruby)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\b(?:system|exec|spawn|popen|capture2e?|capture3)\(?\s*"[^"\r\n]*#\{"#,
            )?,
            d(
                "shell command built from a string (sh -c in Go)",
                High,
                Code,
                SHELL_ADVICE,
                r#"exec\.Command(?:Context)?\([^)\r\n]*"(?:/bin/)?(?:ba|z)?sh"\s*,\s*"-c"\s*,\s*(?:fmt\.Sprintf|[^)\r\n]*\+)"#,
            )?,
            d(
                "shell command built from a string (Runtime.exec)",
                High,
                Code,
                SHELL_ADVICE,
                r#"\bgetRuntime\(\)\.exec\(\s*(?:"[^"\r\n]*"\s*\+|[A-Za-z_]\w*\s*\+)"#,
            )?,
            d(
                "eval of a shell variable",
                High,
                Code,
                SHELL_ADVICE,
                r#"(?:^|[;&|(\s])eval\s+["']?\$(?:\{|[A-Za-z_@*0-9])"#,
            )?,
        ],
        "no-curl-pipe-sh" => vec![
            d(
                "download piped into a shell",
                High,
                Code,
                CURL_ADVICE,
                r"(?i)\b(?:curl|wget)\b[^|\r\n;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:/usr/bin/|/bin/|/usr/local/bin/)?(?:(?:ba|z|k|da)?sh|python[0-9.]*|perl|ruby|node)\b",
            )?,
            {
                let mut t = d(
                    "download run by a shell",
                    High,
                    Code,
                    CURL_ADVICE,
                    r"(?i)(?:\$\(|<\()\s*(?:curl|wget)\b[^\r\n]*",
                )?;
                t.before = Some(Pattern::lazy(
                    r#"(?i)\b(?:ba|z|k|da)?sh\s+(?:-\w+\s+)*["']?$"#,
                ));
                t
            },
            d(
                "download sourced by a shell",
                High,
                Code,
                CURL_ADVICE,
                r"(?i)(?:\bsource|\.)\s+<\(\s*(?:curl|wget)\b",
            )?,
        ],
        "no-world-writable" => vec![
            d(
                "world-writable permissions (chmod)",
                Medium,
                Code,
                CHMOD_ADVICE,
                r"\bchmod\s+(?:-[A-Za-z]+\s+)*(?:[0-7]?[0-7][0-7][2367]\b|(?:[ugoa]*[-+=][rwxXstugo]*,)*[ugo]*[oa][ugoa]*[+=][rwxXst]*w)",
            )?,
            d(
                "world-writable permissions (mkdir -m)",
                Medium,
                Code,
                CHMOD_ADVICE,
                r"\b(?:mkdir|install)\s+(?:-[A-Za-z]+\s+)*(?:-m\s*|--mode=)0?[0-7]?[0-7][0-7][2367]\b",
            )?,
            d(
                "world-writable permissions (chmod call)",
                Medium,
                Code,
                CHMOD_ADVICE,
                r"\b(?:[fl]?chmod|chmodSync|[FL]?[cC]hmod)\s*\([^)\r\n]*,\s*0[oO]?[0-7]?[0-7][0-7][2367]\b",
            )?,
            d(
                "umask leaving files world-writable",
                Medium,
                Code,
                CHMOD_ADVICE,
                r"\bumask\s+0*[0-7]?[0-7]?[0145]\b",
            )?,
        ],
        _ => Vec::new(),
    })
}

/// Where SQL starts in every SQL detector (see [`sql_start`]).
const SQL_KEYWORDS: &[&str] = &["select", "insert", "update", "delete", "replace"];

/// The keywords of the built-in detector described as `what`: literal
/// words of which every alternative of its pattern holds one.
fn keywords_of(what: &str) -> &'static [&'static str] {
    match what {
        "secret assigned to a variable" => &["pass", "secret", "token", "key", "credential"],
        "private key" => secrets::PRIVATE_KEY_KEYWORDS,
        w if w.starts_with("SQL built") => SQL_KEYWORDS,
        "shell command built from a string (os.system/os.popen)" => &["os."],
        "shell command built from a string (subprocess with shell=True)"
        | "shell command built from a string (subprocess.getoutput)" => &["subprocess."],
        "shell command built from a string (child_process.exec)" => &["exec"],
        "shell command built from request input (PHP)" => {
            &["exec", "system", "passthru", "popen", "proc_open"]
        }
        "shell command built by interpolation (Ruby)" => &["#{"],
        "shell command built from a string (sh -c in Go)" => &["exec.command"],
        "shell command built from a string (Runtime.exec)" => &["getruntime()"],
        "eval of a shell variable" => &["eval"],
        "download piped into a shell"
        | "download run by a shell"
        | "download sourced by a shell" => &["curl", "wget"],
        "world-writable permissions (chmod)" | "world-writable permissions (chmod call)" => {
            &["chmod"]
        }
        "world-writable permissions (mkdir -m)" => &["mkdir", "install"],
        "umask leaving files world-writable" => &["umask"],
        w => secrets::token(w).map_or(&[], |t| t.keywords),
    }
}

/// The second keyword group of the built-in detector described as `what`
/// (see [`Detector::also`]): literal text every alternative of its
/// pattern holds one of, besides one of its keywords.
fn also_of(what: &str) -> &'static [&'static str] {
    match what {
        "download piped into a shell" => &["|"],
        "download run by a shell" => &["$(", "<("],
        "download sourced by a shell" => &["<("],
        // An octal mode with a write bit for others, or a symbolic `w`.
        "world-writable permissions (chmod)" | "world-writable permissions (chmod call)" => {
            &["2", "3", "6", "7", "w"]
        }
        "world-writable permissions (mkdir -m)" => &["-m", "--mode="],
        _ => &[],
    }
}

/// The `-----BEGIN … PRIVATE KEY-----` detector, reported under `rule`.
fn private_key(rule: &str) -> Result<Vec<Detector>, regex::Error> {
    Ok(vec![Detector {
        rule: rule.to_string(),
        what: "private key".to_string(),
        severity: SecuritySeverity::Critical,
        re: Pattern::lazy(secrets::PRIVATE_KEY_HEADER),
        keywords: keywords_of("private key"),
        also: &[],
        kind: Kind::PrivateKey,
        advice: KEY_ADVICE.to_string(),
        not_after_ident: false,
        before: None,
    }])
}

/// A private key *file* by its name (`id_rsa`, `server.p12`, …): flagged by
/// `no-private-keys` when one is written or changed. Public halves
/// (`id_rsa.pub`) are not.
pub(crate) fn key_file_name() -> Pattern {
    Pattern::lazy(
        r"(?i)(?:^|/)(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|[^/]*\.(?:p12|pfx|jks|keystore|ppk)|[^/]*private[_-]?key[^/]*\.(?:pem|key))$",
    )
}

/// Whether `path` could name a private key file: every match of
/// [`key_file_name`] ends with one of these (ASCII case folded), so any
/// other name — every tool call's pseudo-file among them — is answered
/// without compiling it.
pub(crate) fn may_be_key_file(path: &str) -> bool {
    const ENDS: [&str; 11] = [
        "rsa",
        "dsa",
        "ed25519",
        "_sk",
        ".p12",
        ".pfx",
        ".jks",
        ".keystore",
        ".ppk",
        ".pem",
        ".key",
    ];
    let p = path.as_bytes();
    ENDS.iter()
        .any(|e| p.len() >= e.len() && p[p.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes()))
}

/// Shannon entropy in bits per byte.
///
/// Random base64 reaches about 4–6 bits for the lengths secrets have;
/// words, repeated characters and simple patterns stay below 3.5.
pub(crate) fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// A value that is obviously not a real secret: a placeholder, a reference
/// to the environment or a template, a redaction.
pub(crate) fn is_placeholder(v: &[u8]) -> bool {
    let lower = v.to_ascii_lowercase();
    const WORDS: [&[u8]; 17] = [
        b"example",
        b"sample",
        b"dummy",
        b"fake",
        b"placeholder",
        b"changeme",
        b"change_me",
        b"your_",
        b"your-",
        b"xxxx",
        b"redacted",
        b"****",
        b"<",
        b"${",
        b"{{",
        b"%(",
        b"process.env",
    ];
    WORDS
        .iter()
        .any(|w| lower.windows(w.len()).any(|win| win == *w))
        || lower.starts_with(b"$")
        || lower.starts_with(b"env:")
}

/// A version string (`1.0.0-alpha.12`, `v2.14.0-rc.3+build.20240101`):
/// numbers and dots, then optional pre-release and build identifiers, as
/// in SemVer. Structured, not random, even when its entropy is high; found
/// in names like `credentials_helper_version`.
pub(crate) fn is_version(v: &[u8]) -> bool {
    let s = match v.first() {
        Some(b'v' | b'V') => &v[1..],
        _ => v,
    };
    let core_len = s
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'.'))
        .unwrap_or(s.len());
    let core: Vec<&[u8]> = s[..core_len].split(|b| *b == b'.').collect();
    if core.len() < 2 || core.iter().any(|n| n.is_empty() || n.len() > 8) {
        return false;
    }
    match s[core_len..].split_first() {
        None => true,
        Some((b'-' | b'+', rest)) => rest
            .split(|b| matches!(b, b'.' | b'-' | b'+'))
            .all(|id| !id.is_empty() && id.len() <= 12 && id.iter().all(u8::is_ascii_alphanumeric)),
        Some(_) => false,
    }
}

/// A test or fixture path, where `name = value` assignments are expected
/// to hold made-up credentials.
pub(crate) fn is_test_path(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    let name = p.rsplit('/').next().unwrap_or(&p);
    p.split('/').rev().skip(1).any(|d| {
        matches!(
            d,
            "test"
                | "tests"
                | "spec"
                | "specs"
                | "fixture"
                | "fixtures"
                | "testdata"
                | "__tests__"
                | "__mocks__"
                | "mocks"
        )
    }) || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_file_gate_lets_through_every_key_file_name() {
        let re = key_file_name();
        let re = re.get().unwrap();
        for name in [
            "id_rsa",
            "home/.ssh/ID_ED25519",
            "x/id_ecdsa_sk",
            "id_dsa",
            "a/cert.P12",
            "b.pfx",
            "store.jks",
            "app.keystore",
            "putty.ppk",
            "my-private-key.pem",
            "private_key.KEY",
            "id_rsa.pub",
            "rsa",
            "notes.md",
            "tool.input.command",
            "",
            "keys/server.key.bak",
        ] {
            if re.is_match(name.as_bytes()) {
                assert!(may_be_key_file(name), "{name}");
            }
        }
        assert!(!may_be_key_file("tool.input.command"));
        assert!(!may_be_key_file("src/main.rs"));
    }

    #[test]
    fn every_builtin_detector_compiles_and_has_keywords() {
        for rule in super::super::BUILTIN_RULES {
            let detectors = builtin(rule).unwrap();
            assert!(!detectors.is_empty(), "{rule}");
            for d in detectors {
                // Compiled lazily in use: compile each here, so that a
                // broken pattern fails this test rather than go unnoticed.
                assert!(ascii(&d.re.source).is_ok(), "{rule}: {}", d.what);
                if let Some(b) = &d.before {
                    assert!(ascii(&b.source).is_ok(), "{rule}: {} (before)", d.what);
                }
                assert!(!d.keywords.is_empty(), "{rule}: {} has no keywords", d.what);
                assert!(ascii(&key_file_name().source).is_ok());
                for k in d.keywords.iter().chain(d.also) {
                    assert_eq!(*k, k.to_ascii_lowercase(), "{rule}: {}", d.what);
                }
            }
        }
    }

    #[test]
    fn entropy_separates_words_from_random() {
        assert!(entropy(b"aaaaaaaaaaaaaaaa") < 0.1);
        assert!(entropy(b"password_confirmation") < 3.8);
        assert!(entropy(b"q8Xz1Lk3Vb9Tn2Rw7Ym4") > 4.0);
    }

    #[test]
    fn version_strings() {
        assert!(is_version(b"1.0.0-alpha.12"));
        assert!(is_version(b"v2.14.0-rc.3+build.20240101"));
        assert!(is_version(b"2024.01.15"));
        assert!(!is_version(b"1.2-aB3dE5fG7hJ9kL1mN3pQ"));
        assert!(!is_version(b"q8Xz1Lk3Vb9Tn2Rw7Ym4"));
        assert!(!is_version(b"1.x9Lq2Vb7Tn4Rm1Yp8"));
        assert!(!is_version(b"1..2-beta"));
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("tests/fixtures/keys.py"));
        assert!(is_test_path("src/auth_test.go"));
        assert!(is_test_path("web/login.spec.ts"));
        assert!(!is_test_path("src/testing_utils.rs"));
        assert!(!is_test_path("tests.md"));
    }
}

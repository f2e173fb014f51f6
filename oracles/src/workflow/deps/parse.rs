//! Parsing the five manifest kinds into their dependencies, with line
//! numbers for every error. No input panics: every parser returns a
//! [`ManifestError`] instead.

use crate::workflow::test_gate::junit::line_col;
use serde_json::Value;
use std::fmt;
use toml::de::{DeTable, DeValue};

/// The kinds of manifest the DependencyChecker reads, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ManifestKind {
    /// `Cargo.toml` (Rust).
    Cargo,
    /// `package.json` (JavaScript).
    Npm,
    /// `pyproject.toml` (Python: PEP 621, Poetry, uv, PDM).
    Pyproject,
    /// `requirements*.txt` / `requirements*.in` (pip).
    Requirements,
    /// `go.mod` (Go).
    GoMod,
}

impl ManifestKind {
    /// The kind of a manifest file name (the last path component counts):
    /// `Cargo.toml`, `package.json`, `pyproject.toml`, `go.mod`,
    /// `requirements*.txt`, `requirements*.in`.
    ///
    /// ```
    /// use ahp_oracles::workflow::deps::ManifestKind;
    /// assert_eq!(ManifestKind::detect("crates/x/Cargo.toml"), Some(ManifestKind::Cargo));
    /// assert_eq!(ManifestKind::detect("requirements-dev.txt"), Some(ManifestKind::Requirements));
    /// assert_eq!(ManifestKind::detect("pom.xml"), None);
    /// ```
    pub fn detect(path: &str) -> Option<ManifestKind> {
        let name = path.rsplit('/').next().unwrap_or(path);
        match name {
            "Cargo.toml" => Some(ManifestKind::Cargo),
            "package.json" => Some(ManifestKind::Npm),
            "pyproject.toml" => Some(ManifestKind::Pyproject),
            "go.mod" => Some(ManifestKind::GoMod),
            n if n.starts_with("requirements") && (n.ends_with(".txt") || n.ends_with(".in")) => {
                Some(ManifestKind::Requirements)
            }
            _ => None,
        }
    }

    /// The lockfiles of this kind, in order of preference (none for
    /// requirements files).
    pub fn default_lockfiles(self) -> &'static [&'static str] {
        match self {
            ManifestKind::Cargo => &["Cargo.lock"],
            ManifestKind::Npm => &["package-lock.json", "yarn.lock", "pnpm-lock.yaml"],
            ManifestKind::Pyproject => &["poetry.lock", "uv.lock", "pdm.lock"],
            ManifestKind::GoMod => &["go.sum"],
            ManifestKind::Requirements => &[],
        }
    }

    /// The audit tool worth running on new dependencies.
    pub fn audit_command(self) -> &'static str {
        match self {
            ManifestKind::Cargo => "cargo audit",
            ManifestKind::Npm => "npm audit",
            ManifestKind::Pyproject | ManifestKind::Requirements => "pip-audit",
            ManifestKind::GoMod => "govulncheck ./...",
        }
    }
}

/// How to bring `lockfile` back in step with its manifest.
pub fn lock_advice(lockfile: &str) -> String {
    let name = lockfile.rsplit('/').next().unwrap_or(lockfile);
    match name {
        "Cargo.lock" => "run `cargo update -w` / `cargo generate-lockfile`".to_string(),
        "package-lock.json" => "run `npm install`".to_string(),
        "yarn.lock" => "run `yarn install`".to_string(),
        "pnpm-lock.yaml" => "run `pnpm install`".to_string(),
        "poetry.lock" => "run `poetry lock`".to_string(),
        "uv.lock" => "run `uv lock`".to_string(),
        "pdm.lock" => "run `pdm lock`".to_string(),
        "go.sum" => "run `go mod tidy`".to_string(),
        other => format!("regenerate {other}"),
    }
}

/// One declared dependency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The name as written (for Python, compared in normalized form).
    pub name: String,
    /// The version requirement or source (`1.0`, `>=2,<3`, `path ../x`,
    /// `v1.2.3 (indirect)`, `*` when none).
    pub spec: String,
    /// Where it is declared: `dependencies`, `dev-dependencies`,
    /// `target.'cfg(unix)'.dependencies`, `devDependencies`,
    /// `project.optional-dependencies.test`, `require`, ….
    pub section: String,
    /// 1-based line of the declaration.
    pub line: usize,
}

impl Dependency {
    /// The name as compared across versions of a manifest: Python names
    /// are normalized (PEP 503: lower case, runs of `-_.` as `-`).
    pub fn key(&self, kind: ManifestKind) -> (String, String) {
        let name = match kind {
            ManifestKind::Pyproject | ManifestKind::Requirements => normalize_python(&self.name),
            _ => self.name.clone(),
        };
        (self.section.clone(), name)
    }
}

/// A parsed manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The dependencies, in file order.
    pub dependencies: Vec<Dependency>,
    /// Everything in the manifest that its lockfile records (dependencies,
    /// package name and version, patches, overrides, workspace members, …)
    /// in a canonical text form: when two versions of a manifest have the
    /// same `lock_inputs`, the lockfile need not change.
    pub lock_inputs: Vec<String>,
}

/// Why a manifest does not parse, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "line {}, column {c}: {}", self.line, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

impl ManifestError {
    fn at_offset(text: &str, offset: usize, message: impl Into<String>) -> ManifestError {
        let (line, column) = line_col(text, offset);
        ManifestError {
            line,
            column: Some(column),
            message: message.into(),
        }
    }

    fn at_line(line: usize, message: impl Into<String>) -> ManifestError {
        ManifestError {
            line,
            column: None,
            message: message.into(),
        }
    }
}

/// Parses a manifest of `kind`.
///
/// ```
/// use ahp_oracles::workflow::deps::{parse_manifest, ManifestKind};
/// let m = parse_manifest(ManifestKind::Cargo, "[package]\nname = \"x\"\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n").unwrap();
/// assert_eq!(m.dependencies[0].name, "serde");
/// assert_eq!(m.dependencies[0].spec, "1");
/// assert_eq!(m.dependencies[0].line, 5);
/// let err = parse_manifest(ManifestKind::Cargo, "[dependencies\nserde = \"1\"\n").unwrap_err();
/// assert_eq!(err.line, 1);
/// ```
pub fn parse_manifest(kind: ManifestKind, text: &str) -> Result<Manifest, ManifestError> {
    match kind {
        ManifestKind::Cargo => parse_cargo(text),
        ManifestKind::Npm => parse_package_json(text),
        ManifestKind::Pyproject => parse_pyproject(text),
        ManifestKind::Requirements => parse_requirements(text),
        ManifestKind::GoMod => parse_go_mod(text),
    }
}

// ------------------------------------------------------------------ TOML

type Spanned<T> = toml::Spanned<T>;

fn parse_toml(text: &str) -> Result<Spanned<DeTable<'_>>, ManifestError> {
    DeTable::parse(text).map_err(|e| {
        let message = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        match e.span() {
            Some(span) => ManifestError::at_offset(text, span.start, message),
            None => ManifestError::at_line(1, message),
        }
    })
}

/// The value at `key` of a table.
fn get<'a, 'i>(table: &'a DeTable<'i>, key: &str) -> Option<&'a Spanned<DeValue<'i>>> {
    table.get(key)
}

/// The table at `key`, or an error when it is something else.
fn sub_table<'a, 'i>(
    text: &str,
    table: &'a DeTable<'i>,
    key: &str,
    shown: &str,
) -> Result<Option<&'a DeTable<'i>>, ManifestError> {
    match get(table, key) {
        None => Ok(None),
        Some(v) => match v.get_ref() {
            DeValue::Table(t) => Ok(Some(t)),
            other => Err(ManifestError::at_offset(
                text,
                v.span().start,
                format!("`{shown}` must be a table, found {}", other.type_str()),
            )),
        },
    }
}

/// A TOML value in one canonical line (for comparing lock inputs).
fn canonical(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("{s:?}"),
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(a) => {
            let items: Vec<String> = a.iter().map(|i| canonical(i.get_ref())).collect();
            format!("[{}]", items.join(","))
        }
        DeValue::Table(t) => {
            let mut items: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{:?}={}", k.get_ref(), canonical(v.get_ref())))
                .collect();
            items.sort();
            format!("{{{}}}", items.join(","))
        }
    }
}

/// `key=value` of a dotted path, when present.
fn lock_input(table: &DeTable<'_>, path: &[&str]) -> Option<String> {
    let mut cur = table;
    let (last, parents) = path.split_last()?;
    for p in parents {
        match get(cur, p)?.get_ref() {
            DeValue::Table(t) => cur = t,
            _ => return None,
        }
    }
    let v = get(cur, last)?;
    Some(format!("{}={}", path.join("."), canonical(v.get_ref())))
}

const CARGO_SECTIONS: [&str; 5] = [
    "dependencies",
    "dev-dependencies",
    "dev_dependencies",
    "build-dependencies",
    "build_dependencies",
];

fn parse_cargo(text: &str) -> Result<Manifest, ManifestError> {
    let doc = parse_toml(text)?;
    let root = doc.get_ref();
    let mut m = Manifest::default();
    for section in CARGO_SECTIONS {
        if let Some(t) = sub_table(text, root, section, section)? {
            toml_deps(text, t, section, false, &mut m.dependencies)?;
        }
    }
    if let Some(targets) = sub_table(text, root, "target", "target")? {
        for (cfg, v) in targets.iter() {
            let cfg_name = cfg.get_ref().to_string();
            let DeValue::Table(t) = v.get_ref() else {
                return Err(ManifestError::at_offset(
                    text,
                    v.span().start,
                    format!("`target.{cfg_name}` must be a table"),
                ));
            };
            for section in CARGO_SECTIONS {
                let shown = format!("target.'{cfg_name}'.{section}");
                if let Some(deps) = sub_table(text, t, section, &shown)? {
                    toml_deps(text, deps, &shown, false, &mut m.dependencies)?;
                }
            }
        }
    }
    if let Some(ws) = sub_table(text, root, "workspace", "workspace")?
        && let Some(deps) = sub_table(text, ws, "dependencies", "workspace.dependencies")?
    {
        toml_deps(
            text,
            deps,
            "workspace.dependencies",
            false,
            &mut m.dependencies,
        )?;
    }
    m.lock_inputs = m
        .dependencies
        .iter()
        .map(|d| format!("{}:{}={}", d.section, d.name, d.spec))
        .collect();
    for path in [
        &["package", "name"][..],
        &["package", "version"],
        &["patch"],
        &["replace"],
        &["workspace", "members"],
        &["workspace", "exclude"],
        &["workspace", "package", "version"],
    ] {
        m.lock_inputs.extend(lock_input(root, path));
    }
    Ok(m)
}

/// The dependencies of a Cargo table, or with `poetry` of a Poetry one,
/// which also names the Python version and may give a list of constraints.
fn toml_deps(
    text: &str,
    table: &DeTable<'_>,
    section: &str,
    poetry: bool,
    out: &mut Vec<Dependency>,
) -> Result<(), ManifestError> {
    for (name, v) in table.iter() {
        if poetry && name.get_ref() == "python" {
            continue; // the Python version, not a package
        }
        let spec = match v.get_ref() {
            DeValue::String(s) => s.to_string(),
            DeValue::Table(t) => cargo_spec(t),
            // Several constraints for different markers.
            DeValue::Array(a) if poetry => format!("{} alternatives", a.len()),
            other => {
                return Err(ManifestError::at_offset(
                    text,
                    v.span().start,
                    format!(
                        "dependency `{}` in `{section}` must be a version string or a table, found {}",
                        name.get_ref(),
                        other.type_str()
                    ),
                ));
            }
        };
        out.push(Dependency {
            name: name.get_ref().to_string(),
            spec,
            section: section.to_string(),
            line: line_col(text, name.span().start).0,
        });
    }
    Ok(())
}

/// `1.0`, `workspace`, `path ../x`, `git https://… (branch main)`.
fn cargo_spec(t: &DeTable<'_>) -> String {
    let s = |k: &str| {
        get(t, k)
            .and_then(|v| v.get_ref().as_str())
            .map(str::to_string)
    };
    if get(t, "workspace").and_then(|v| v.get_ref().as_bool()) == Some(true) {
        return "workspace".to_string();
    }
    let mut parts = Vec::new();
    if let Some(v) = s("version") {
        parts.push(v);
    }
    if let Some(p) = s("path") {
        parts.push(format!("path {p}"));
    }
    if let Some(g) = s("git") {
        let mut git = format!("git {g}");
        for r in ["branch", "tag", "rev"] {
            if let Some(x) = s(r) {
                git.push_str(&format!(" ({r} {x})"));
            }
        }
        parts.push(git);
    }
    if let Some(r) = s("registry") {
        parts.push(format!("registry {r}"));
    }
    if parts.is_empty() {
        "*".to_string()
    } else {
        parts.join(", ")
    }
}

fn parse_pyproject(text: &str) -> Result<Manifest, ManifestError> {
    let doc = parse_toml(text)?;
    let root = doc.get_ref();
    let mut m = Manifest::default();
    let mut lock_paths: Vec<Vec<String>> = vec![
        vec!["project".into(), "name".into()],
        vec!["project".into(), "version".into()],
        vec!["project".into(), "requires-python".into()],
        vec!["tool".into(), "uv".into(), "sources".into()],
        vec!["tool".into(), "uv".into(), "workspace".into()],
        vec!["tool".into(), "poetry".into(), "source".into()],
    ];
    if let Some(project) = sub_table(text, root, "project", "project")? {
        if let Some(v) = get(project, "dependencies") {
            requirement_list(text, v, "project.dependencies", &mut m.dependencies)?;
        }
        if let Some(opt) = sub_table(
            text,
            project,
            "optional-dependencies",
            "project.optional-dependencies",
        )? {
            for (group, v) in opt.iter() {
                let section = format!("project.optional-dependencies.{}", group.get_ref());
                requirement_list(text, v, &section, &mut m.dependencies)?;
            }
        }
    }
    if let Some(groups) = sub_table(text, root, "dependency-groups", "dependency-groups")? {
        for (group, v) in groups.iter() {
            let section = format!("dependency-groups.{}", group.get_ref());
            requirement_list(text, v, &section, &mut m.dependencies)?;
        }
    }
    if let Some(tool) = sub_table(text, root, "tool", "tool")? {
        if let Some(poetry) = sub_table(text, tool, "poetry", "tool.poetry")? {
            for section in ["dependencies", "dev-dependencies"] {
                let shown = format!("tool.poetry.{section}");
                if let Some(t) = sub_table(text, poetry, section, &shown)? {
                    toml_deps(text, t, &shown, true, &mut m.dependencies)?;
                }
            }
            if let Some(groups) = sub_table(text, poetry, "group", "tool.poetry.group")? {
                for (group, v) in groups.iter() {
                    let g = group.get_ref().to_string();
                    let DeValue::Table(gt) = v.get_ref() else {
                        return Err(ManifestError::at_offset(
                            text,
                            v.span().start,
                            format!("`tool.poetry.group.{g}` must be a table"),
                        ));
                    };
                    let shown = format!("tool.poetry.group.{g}.dependencies");
                    if let Some(t) = sub_table(text, gt, "dependencies", &shown)? {
                        toml_deps(text, t, &shown, true, &mut m.dependencies)?;
                    }
                }
            }
            lock_paths.push(vec![
                "tool".into(),
                "poetry".into(),
                "dependencies".into(),
                "python".into(),
            ]);
        }
        if let Some(uv) = sub_table(text, tool, "uv", "tool.uv")?
            && let Some(v) = get(uv, "dev-dependencies")
        {
            requirement_list(text, v, "tool.uv.dev-dependencies", &mut m.dependencies)?;
        }
        if let Some(pdm) = sub_table(text, tool, "pdm", "tool.pdm")?
            && let Some(dev) =
                sub_table(text, pdm, "dev-dependencies", "tool.pdm.dev-dependencies")?
        {
            for (group, v) in dev.iter() {
                let section = format!("tool.pdm.dev-dependencies.{}", group.get_ref());
                requirement_list(text, v, &section, &mut m.dependencies)?;
            }
        }
    }
    m.lock_inputs = m
        .dependencies
        .iter()
        .map(|d| format!("{}:{}={}", d.section, normalize_python(&d.name), d.spec))
        .collect();
    for path in &lock_paths {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        m.lock_inputs.extend(lock_input(root, &path));
    }
    Ok(m)
}

/// A list of PEP 508 requirement strings (PEP 735 `{include-group = …}`
/// tables allowed).
fn requirement_list(
    text: &str,
    v: &Spanned<DeValue<'_>>,
    section: &str,
    out: &mut Vec<Dependency>,
) -> Result<(), ManifestError> {
    let DeValue::Array(items) = v.get_ref() else {
        return Err(ManifestError::at_offset(
            text,
            v.span().start,
            format!(
                "`{section}` must be a list of requirement strings, found {}",
                v.get_ref().type_str()
            ),
        ));
    };
    for item in items.iter() {
        match item.get_ref() {
            DeValue::String(s) => {
                let (name, spec) = parse_requirement(s).map_err(|e| {
                    ManifestError::at_offset(
                        text,
                        item.span().start,
                        format!("in `{section}`: {e}"),
                    )
                })?;
                out.push(Dependency {
                    name,
                    spec,
                    section: section.to_string(),
                    line: line_col(text, item.span().start).0,
                });
            }
            DeValue::Table(t) if get(t, "include-group").is_some() => {}
            other => {
                return Err(ManifestError::at_offset(
                    text,
                    item.span().start,
                    format!(
                        "`{section}` must hold requirement strings like \"requests>=2\", found {}",
                        other.type_str()
                    ),
                ));
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------ package.json

const NPM_SECTIONS: [&str; 4] = [
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
];

fn parse_package_json(text: &str) -> Result<Manifest, ManifestError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| ManifestError {
        line: e.line().max(1),
        column: Some(e.column().max(1)),
        message: json_message(&e),
    })?;
    let Value::Object(root) = &doc else {
        return Err(ManifestError::at_line(
            1,
            "package.json must be a JSON object (`{ \"name\": …, \"dependencies\": {…} }`)",
        ));
    };
    let mut m = Manifest::default();
    for section in NPM_SECTIONS {
        let Some(v) = root.get(section) else { continue };
        let Value::Object(deps) = v else {
            return Err(ManifestError::at_line(
                json_key_line(text, section),
                format!("`{section}` must be an object of name → version"),
            ));
        };
        for (name, spec) in deps {
            let Value::String(spec) = spec else {
                return Err(ManifestError::at_line(
                    json_key_line(text, name),
                    format!("the version of `{name}` in `{section}` must be a string"),
                ));
            };
            m.dependencies.push(Dependency {
                name: name.clone(),
                spec: spec.clone(),
                section: section.to_string(),
                line: json_key_line(text, name),
            });
        }
    }
    m.lock_inputs = m
        .dependencies
        .iter()
        .map(|d| format!("{}:{}={}", d.section, d.name, d.spec))
        .collect();
    for key in [
        "name",
        "version",
        "overrides",
        "resolutions",
        "workspaces",
        "bundleDependencies",
        "bundledDependencies",
        "peerDependenciesMeta",
    ] {
        if let Some(v) = root.get(key) {
            m.lock_inputs.push(format!("{key}={v}"));
        }
    }
    Ok(m)
}

/// serde_json's message without its own ` at line L column C` suffix.
fn json_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full[..i].to_string(),
        None => full,
    }
}

/// The line of the first `"key":` in a JSON text (1 when not found).
fn json_key_line(text: &str, key: &str) -> usize {
    let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""));
    let mut from = 0;
    while let Some(i) = text[from..].find(&quoted) {
        let at = from + i;
        let after = text[at + quoted.len()..].trim_start();
        if after.starts_with(':') {
            return line_col(text, at).0;
        }
        from = at + quoted.len();
    }
    1
}

// -------------------------------------------------------- requirements.txt

/// pip options that take a value.
const PIP_VALUE_OPTIONS: [(&str, &str); 11] = [
    ("-r", "--requirement"),
    ("-c", "--constraint"),
    ("-e", "--editable"),
    ("-i", "--index-url"),
    ("", "--extra-index-url"),
    ("-f", "--find-links"),
    ("", "--trusted-host"),
    ("", "--no-binary"),
    ("", "--only-binary"),
    ("", "--use-feature"),
    ("", "--config-settings"),
];

/// pip options without a value.
const PIP_FLAGS: [&str; 4] = ["--pre", "--prefer-binary", "--require-hashes", "--no-index"];

/// Options allowed after a requirement on its line.
const PIP_PER_REQUIREMENT: [&str; 3] = ["--hash", "--global-option", "--config-settings"];

fn parse_requirements(text: &str) -> Result<Manifest, ManifestError> {
    let mut m = Manifest::default();
    let mut logical = String::new();
    let mut start = 0;
    let lines: Vec<&str> = text.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        if logical.is_empty() {
            start = i + 1;
        }
        // A comment: `#` at the start or after whitespace.
        let line = strip_comment(raw);
        if let Some(cont) = line.strip_suffix('\\') {
            logical.push_str(cont);
            logical.push(' ');
            if i + 1 < lines.len() {
                continue;
            }
        } else {
            logical.push_str(line);
        }
        let entry = std::mem::take(&mut logical);
        requirement_line(entry.trim(), start, &mut m)?;
    }
    m.lock_inputs = m
        .dependencies
        .iter()
        .map(|d| format!("{}={}", normalize_python(&d.name), d.spec))
        .collect();
    Ok(m)
}

fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            return line[..i].trim_end();
        }
    }
    line.trim_end()
}

fn requirement_line(entry: &str, line: usize, m: &mut Manifest) -> Result<(), ManifestError> {
    if entry.is_empty() {
        return Ok(());
    }
    let err = |msg: String| ManifestError::at_line(line, msg);
    if entry.starts_with('-') {
        let (opt, value) = split_option(entry);
        if PIP_FLAGS.contains(&opt.as_str()) {
            if !value.is_empty() {
                return Err(err(format!("`{opt}` takes no value, found `{value}`")));
            }
            return Ok(());
        }
        let Some((short, long)) = PIP_VALUE_OPTIONS
            .iter()
            .find(|(s, l)| (!s.is_empty() && *s == opt) || *l == opt)
        else {
            return Err(err(format!(
                "unknown pip option `{opt}` (known: -r, -c, -e, -i, -f, --extra-index-url, --trusted-host, --pre, …)"
            )));
        };
        if value.is_empty() {
            return Err(err(format!(
                "`{opt}` needs a value, e.g. `{opt} other.txt`"
            )));
        }
        if *short == "-e" {
            m.dependencies.push(Dependency {
                name: url_name(&value),
                spec: format!("editable {value}"),
                section: "requirements".to_string(),
                line,
            });
        } else {
            m.lock_inputs.push(format!("{long}={value}"));
        }
        return Ok(());
    }
    let (requirement, options) = split_trailing_options(entry);
    for opt in options.split_whitespace().filter(|o| o.starts_with('-')) {
        let name = opt.split('=').next().unwrap_or(opt);
        if !PIP_PER_REQUIREMENT.contains(&name) {
            return Err(err(format!(
                "`{name}` is not allowed after a requirement (only --hash, --global-option, --config-settings)"
            )));
        }
    }
    if is_url_or_path(requirement) {
        m.dependencies.push(Dependency {
            name: url_name(requirement),
            spec: requirement.to_string(),
            section: "requirements".to_string(),
            line,
        });
        return Ok(());
    }
    let (name, spec) = parse_requirement(requirement).map_err(err)?;
    m.dependencies.push(Dependency {
        name,
        spec,
        section: "requirements".to_string(),
        line,
    });
    Ok(())
}

/// `-r file`, `-rfile`, `--requirement=file`, `--requirement file`.
fn split_option(entry: &str) -> (String, String) {
    if let Some(long) = entry.strip_prefix("--") {
        let end = long
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(long.len());
        let opt = format!("--{}", &long[..end]);
        let value = long[end..].trim_start_matches('=').trim().to_string();
        return (opt, value);
    }
    let mut chars = entry.chars();
    chars.next(); // '-'
    let letter: String = chars.next().map(String::from).unwrap_or_default();
    let opt = format!("-{letter}");
    let value = entry[opt.len().min(entry.len())..].trim().to_string();
    (opt, value)
}

/// The requirement and the per-requirement options after it
/// (` --hash=…`), split at the first ` -` outside quotes.
fn split_trailing_options(entry: &str) -> (&str, &str) {
    let mut quote: Option<char> = None;
    let mut prev_ws = false;
    for (i, c) in entry.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '-' && prev_ws && entry[i..].starts_with("--") => {
                return (entry[..i].trim(), &entry[i..]);
            }
            None => {}
        }
        prev_ws = c.is_whitespace();
    }
    (entry.trim(), "")
}

fn is_url_or_path(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    [
        "git+", "hg+", "svn+", "bzr+", "http://", "https://", "file:", "./", "../", "/", "~",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
        || [".whl", ".tar.gz", ".zip", ".tar.bz2"]
            .iter()
            .any(|e| lower.ends_with(e))
}

/// The package name of a URL or path requirement: `#egg=name`, else the
/// last path component.
fn url_name(s: &str) -> String {
    if let Some(i) = s.find("#egg=") {
        let egg = &s[i + 5..];
        let end = egg.find(['&', ' ', '[']).unwrap_or(egg.len());
        if end > 0 {
            return egg[..end].to_string();
        }
    }
    let trimmed = s
        .split(['#', '?'])
        .next()
        .unwrap_or(s)
        .trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    let last = last.strip_suffix(".git").unwrap_or(last);
    if last.is_empty() {
        s.to_string()
    } else {
        last.to_string()
    }
}

/// PEP 503 normalization: lower case, runs of `-`, `_`, `.` become `-`.
pub fn normalize_python(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

const VERSION_OPS: [&str; 8] = ["===", "~=", "==", "!=", "<=", ">=", "<", ">"];

/// Parses a PEP 508 requirement (`name[extras] (spec) ; markers` or
/// `name[extras] @ url ; markers`) into its name and the rest as the spec.
///
/// ```
/// use ahp_oracles::workflow::deps::parse_requirement;
/// assert_eq!(parse_requirement("requests[socks]>=2.31,<3 ; python_version >= '3.8'").unwrap(),
///            ("requests".to_string(), "[socks] >=2.31,<3 ; python_version >= '3.8'".to_string()));
/// assert_eq!(parse_requirement("Django").unwrap().1, "*");
/// assert!(parse_requirement("flask==").unwrap_err().contains("no version after `==`"));
/// ```
pub fn parse_requirement(s: &str) -> Result<(String, String), String> {
    let s = s.trim();
    let name_end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        .map_or(s.len(), |(i, _)| i);
    let name = &s[..name_end];
    let shown = crate::template::truncate(s, 80);
    if name.is_empty() {
        return Err(format!(
            "`{shown}` is not a requirement: a package name must start with a letter or digit"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err(format!(
            "`{name}` is not a valid package name: it must start and end with a letter or digit"
        ));
    }
    let mut rest = s[name_end..].trim_start();
    let mut spec = Vec::new();
    if let Some(after) = rest.strip_prefix('[') {
        let Some(close) = after.find(']') else {
            return Err(format!("`{shown}`: the `[` of the extras is not closed"));
        };
        let extras: Vec<&str> = after[..close]
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        for e in &extras {
            if !e
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            {
                return Err(format!("`{shown}`: `{e}` is not a valid extra name"));
            }
        }
        spec.push(format!("[{}]", extras.join(",")));
        rest = after[close + 1..].trim_start();
    }
    let (body, markers) = match rest.find(';') {
        Some(i) => (rest[..i].trim(), Some(rest[i + 1..].trim())),
        None => (rest.trim(), None),
    };
    if let Some(url) = body.strip_prefix('@') {
        let url = url.trim();
        if url.is_empty() {
            return Err(format!("`{shown}`: no URL after `@`"));
        }
        spec.push(format!("@ {url}"));
    } else if !body.is_empty() {
        let inner = match body.strip_prefix('(') {
            Some(b) => b
                .strip_suffix(')')
                .ok_or_else(|| format!("`{shown}`: the `(` of the version is not closed"))?,
            None => body,
        };
        let mut clauses = Vec::new();
        for clause in inner.split(',') {
            let clause = clause.trim();
            let Some(op) = VERSION_OPS.iter().find(|op| clause.starts_with(**op)) else {
                return Err(format!(
                    "`{shown}`: expected a version operator (==, >=, <=, !=, ~=, <, >, ===) after `{name}`, found `{}`",
                    crate::template::truncate(clause, 40)
                ));
            };
            let version = clause[op.len()..].trim();
            if version.is_empty() {
                return Err(format!("`{shown}`: no version after `{op}`"));
            }
            if let Some(bad) = version.chars().find(|c| {
                !(c.is_ascii_alphanumeric() || matches!(c, '.' | '*' | '+' | '!' | '-' | '_'))
            }) {
                return Err(format!(
                    "`{shown}`: `{version}` is not a valid version (unexpected `{bad}`)"
                ));
            }
            clauses.push(format!("{op}{version}"));
        }
        spec.push(clauses.join(","));
    }
    if let Some(markers) = markers {
        if markers.is_empty() {
            return Err(format!("`{shown}`: no environment marker after `;`"));
        }
        if markers.matches('\'').count() % 2 != 0 || markers.matches('"').count() % 2 != 0 {
            return Err(format!(
                "`{shown}`: a quote in the environment marker is not closed"
            ));
        }
        spec.push(format!("; {markers}"));
    }
    let spec = if spec.is_empty() {
        "*".to_string()
    } else {
        spec.join(" ")
    };
    Ok((name.to_string(), spec))
}

// ------------------------------------------------------------------ go.mod

const GO_VERBS: [&str; 10] = [
    "module",
    "go",
    "toolchain",
    "godebug",
    "require",
    "replace",
    "exclude",
    "retract",
    "tool",
    "ignore",
];

fn parse_go_mod(text: &str) -> Result<Manifest, ManifestError> {
    let mut m = Manifest::default();
    let mut block: Option<(String, usize)> = None;
    let mut module_line: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let (code, comment) = match raw.find("//") {
            Some(c) => (&raw[..c], &raw[c + 2..]),
            None => (raw, ""),
        };
        let tokens = go_tokens(code).map_err(|e| ManifestError::at_line(line_no, e))?;
        if tokens.is_empty() {
            continue;
        }
        let indirect = comment.trim() == "indirect" || comment.trim().starts_with("indirect;");
        if let Some((verb, _)) = &block {
            if tokens == [")"] {
                block = None;
                continue;
            }
            if tokens.iter().any(|t| t == "(" || t == ")") {
                return Err(ManifestError::at_line(
                    line_no,
                    format!("unexpected parenthesis inside the `{verb} (` block"),
                ));
            }
            let verb = verb.clone();
            go_directive(&verb, &tokens, indirect, line_no, &mut m, &mut module_line)?;
            continue;
        }
        let verb = tokens[0].as_str();
        if !GO_VERBS.contains(&verb) {
            return Err(ManifestError::at_line(
                line_no,
                format!(
                    "unknown directive `{verb}` (expected one of {})",
                    GO_VERBS.join(", ")
                ),
            ));
        }
        if tokens.len() == 2 && tokens[1] == "(" {
            if matches!(verb, "module" | "go" | "toolchain") {
                return Err(ManifestError::at_line(
                    line_no,
                    format!("`{verb}` cannot open a block"),
                ));
            }
            block = Some((verb.to_string(), line_no));
            continue;
        }
        if tokens.iter().any(|t| t == "(" || t == ")") {
            return Err(ManifestError::at_line(
                line_no,
                "a block opens with `(` alone at the end of its line, e.g. `require (`",
            ));
        }
        go_directive(
            verb,
            &tokens[1..],
            indirect,
            line_no,
            &mut m,
            &mut module_line,
        )?;
    }
    if let Some((verb, line)) = block {
        return Err(ManifestError::at_line(
            line,
            format!("the `{verb} (` block is never closed with `)`"),
        ));
    }
    if module_line.is_none() {
        return Err(ManifestError::at_line(
            1,
            "no `module` directive: go.mod must declare its module path (`module example.com/m`)",
        ));
    }
    Ok(m)
}

/// Splits a go.mod line into words; `(` and `)` are words of their own;
/// "…" and `…` are quoted strings.
fn go_tokens(code: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '(' | ')' => out.push(c.to_string()),
            '"' | '`' => {
                let mut s = String::new();
                let mut closed = false;
                let mut escaped = false;
                for (_, d) in chars.by_ref() {
                    if escaped {
                        s.push(d);
                        escaped = false;
                    } else if d == '\\' && c == '"' {
                        escaped = true;
                    } else if d == c {
                        closed = true;
                        break;
                    } else {
                        s.push(d);
                    }
                }
                if !closed {
                    return Err(format!("a quoted string is not closed (missing {c})"));
                }
                out.push(s);
            }
            _ => {
                let mut s = String::from(c);
                while let Some(&(_, d)) = chars.peek() {
                    if d.is_whitespace() || d == '(' || d == ')' || d == '"' || d == '`' {
                        break;
                    }
                    s.push(d);
                    chars.next();
                }
                out.push(s);
            }
        }
    }
    Ok(out)
}

fn go_version_ok(v: &str) -> bool {
    // v1.2.3, v0.0.0-20240101000000-abcdef123456, v2.0.0+incompatible
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    rest.starts_with(|c: char| c.is_ascii_digit())
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

fn go_directive(
    verb: &str,
    args: &[String],
    indirect: bool,
    line: usize,
    m: &mut Manifest,
    module_line: &mut Option<usize>,
) -> Result<(), ManifestError> {
    let err = |msg: String| ManifestError::at_line(line, msg);
    let want = |n: usize, example: &str| -> Result<(), ManifestError> {
        if args.len() == n {
            Ok(())
        } else {
            Err(err(format!(
                "`{verb}` takes {n} argument{}, found {}: write `{example}`",
                if n == 1 { "" } else { "s" },
                args.len()
            )))
        }
    };
    match verb {
        "module" => {
            want(1, "module example.com/m")?;
            if let Some(first) = module_line {
                return Err(err(format!(
                    "a second `module` directive (the first is on line {first})"
                )));
            }
            *module_line = Some(line);
            m.lock_inputs.push(format!("module {}", args[0]));
        }
        "go" => {
            want(1, "go 1.22")?;
            let v = &args[0];
            let ok = v.split('.').count() <= 3
                && v.starts_with(|c: char| c.is_ascii_digit())
                && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
            if !ok {
                return Err(err(format!(
                    "invalid go version `{v}`: write it like `1.22` or `1.22.3`"
                )));
            }
        }
        "toolchain" => want(1, "toolchain go1.22.3")?,
        "tool" | "ignore" => want(1, &format!("{verb} example.com/m/cmd"))?,
        "godebug" => {
            if args.is_empty() || args.iter().any(|a| !a.contains('=')) {
                return Err(err("`godebug` takes `key=value` settings".to_string()));
            }
        }
        "require" | "exclude" => {
            want(2, &format!("{verb} example.com/m v1.2.3"))?;
            if !go_version_ok(&args[1]) {
                return Err(err(format!(
                    "`{}` is not a module version: versions look like `v1.2.3`",
                    args[1]
                )));
            }
            if verb == "require" {
                m.dependencies.push(Dependency {
                    name: args[0].clone(),
                    spec: if indirect {
                        format!("{} (indirect)", args[1])
                    } else {
                        args[1].clone()
                    },
                    section: "require".to_string(),
                    line,
                });
            }
            m.lock_inputs
                .push(format!("{verb} {} {}", args[0], args[1]));
        }
        "replace" => {
            let Some(arrow) = args.iter().position(|a| a == "=>") else {
                return Err(err(
                    "`replace` needs `=>`: `replace example.com/a => ../a`".to_string()
                ));
            };
            let (left, right) = (&args[..arrow], &args[arrow + 1..]);
            if !(1..=2).contains(&left.len()) || !(1..=2).contains(&right.len()) {
                return Err(err(
                    "`replace` takes `path [version] => path [version]`".to_string()
                ));
            }
            m.lock_inputs.push(format!("replace {}", args.join(" ")));
        }
        "retract" => {
            if args.is_empty() {
                return Err(err(
                    "`retract` takes a version or a range `[v1.0.0, v1.1.0]`".to_string(),
                ));
            }
        }
        _ => return Err(err(format!("unknown directive `{verb}`"))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &Manifest) -> Vec<String> {
        m.dependencies
            .iter()
            .map(|d| format!("{}:{}={}@{}", d.section, d.name, d.spec, d.line))
            .collect()
    }

    #[test]
    fn cargo_sections() {
        let text = r#"[package]
name = "x"
version = "0.1.0"

[dependencies]
serde = { version = "1", features = ["derive"] }
local = { path = "../local" }
shared = { workspace = true }
gitdep = { git = "https://example.com/g.git", branch = "main" }

[dev-dependencies]
tempfile = "3"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[workspace.dependencies]
anyhow = "1"
"#;
        let m = parse_manifest(ManifestKind::Cargo, text).unwrap();
        assert_eq!(
            names(&m),
            vec![
                "dependencies:gitdep=git https://example.com/g.git (branch main)@9",
                "dependencies:local=path ../local@7",
                "dependencies:serde=1@6",
                "dependencies:shared=workspace@8",
                "dev-dependencies:tempfile=3@12",
                "target.'cfg(unix)'.dependencies:libc=0.2@15",
                "workspace.dependencies:anyhow=1@18",
            ]
        );
        assert!(
            m.lock_inputs
                .iter()
                .any(|l| l == "package.version=\"0.1.0\"")
        );
    }

    #[test]
    fn cargo_errors() {
        for (text, line, expected) in [
            ("[dependencies]\nserde = \n", 2, ""),
            (
                "[dependencies]\nserde = true\n",
                2,
                "must be a version string or a table",
            ),
            // A list of constraints is Poetry's, not Cargo's.
            (
                "[dependencies]\nserde = [\"1\"]\n",
                2,
                "must be a version string or a table",
            ),
            ("dependencies = 3\n", 1, "`dependencies` must be a table"),
            ("[dependencies]\na = \"1\"\na = \"2\"\n", 3, ""),
            ("[package\n", 1, ""),
            ("x = \"unterminated\n", 1, ""),
        ] {
            let e = parse_manifest(ManifestKind::Cargo, text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn pyproject_sections() {
        let text = r#"[project]
name = "app"
dependencies = [
  "requests>=2.31",
  "Click",
]
[project.optional-dependencies]
test = ["pytest>=8"]

[dependency-groups]
dev = ["ruff", {include-group = "test"}]

[tool.poetry.dependencies]
python = "^3.11"
httpx = "^0.27"
"#;
        let m = parse_manifest(ManifestKind::Pyproject, text).unwrap();
        assert_eq!(
            names(&m),
            vec![
                "project.dependencies:requests=>=2.31@4",
                "project.dependencies:Click=*@5",
                "project.optional-dependencies.test:pytest=>=8@8",
                "dependency-groups.dev:ruff=*@11",
                "tool.poetry.dependencies:httpx=^0.27@15",
            ]
        );
        let e = parse_manifest(
            ManifestKind::Pyproject,
            "[project]\nname = \"a\"\ndependencies = [\n  \"ok\",\n  \"bad==\",\n]\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("no version after `==`"), "{e}");
        let e = parse_manifest(ManifestKind::Pyproject, "[project]\ndependencies = \"x\"\n")
            .unwrap_err();
        assert!(e.message.contains("must be a list"), "{e}");
    }

    #[test]
    fn package_json() {
        let text = "{\n  \"name\": \"web\",\n  \"dependencies\": {\n    \"react\": \"^18.2.0\"\n  },\n  \"devDependencies\": {\"vitest\": \"1\"}\n}\n";
        let m = parse_manifest(ManifestKind::Npm, text).unwrap();
        assert_eq!(
            names(&m),
            vec!["dependencies:react=^18.2.0@4", "devDependencies:vitest=1@6"]
        );
        let e = parse_manifest(
            ManifestKind::Npm,
            "{\n  \"name\": \"web\",\n  \"x\": 1,\n}\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(!e.message.contains("at line"), "{e}");
        let e = parse_manifest(ManifestKind::Npm, "[]").unwrap_err();
        assert!(e.message.contains("JSON object"), "{e}");
        let e = parse_manifest(ManifestKind::Npm, "{\n\"dependencies\": {\n\"a\": 1\n}\n}")
            .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse_manifest(ManifestKind::Npm, "{\"dependencies\": []}").unwrap_err();
        assert!(e.message.contains("must be an object"), "{e}");
    }

    #[test]
    fn requirements_lines() {
        let text = "# tools\n\
                    requests[security,socks]>=2.31,<3  # http\n\
                    Django == 5.0.*\n\
                    numpy; python_version >= \"3.10\"\n\
                    \n\
                    -r base.txt\n\
                    --index-url https://pypi.example/simple\n\
                    -e git+https://example.com/repo.git#egg=mylib\n\
                    flask==3.0.0 \\\n    --hash=sha256:abc\n\
                    https://example.com/pkgs/thing-1.0.tar.gz\n\
                    pkg @ https://example.com/pkg.zip ; sys_platform == 'linux'\n";
        let m = parse_manifest(ManifestKind::Requirements, text).unwrap();
        assert_eq!(
            names(&m),
            vec![
                "requirements:requests=[security,socks] >=2.31,<3@2",
                "requirements:Django===5.0.*@3",
                "requirements:numpy=; python_version >= \"3.10\"@4",
                "requirements:mylib=editable git+https://example.com/repo.git#egg=mylib@8",
                "requirements:flask===3.0.0@9",
                "requirements:thing-1.0.tar.gz=https://example.com/pkgs/thing-1.0.tar.gz@11",
                "requirements:pkg=@ https://example.com/pkg.zip ; sys_platform == 'linux'@12",
            ]
        );
    }

    #[test]
    fn requirements_errors() {
        for (text, line, expected) in [
            ("ok\nflask==\n", 2, "no version after `==`"),
            ("ok\n\n!!!\n", 3, "must start with a letter or digit"),
            ("flask=1.0\n", 1, "expected a version operator"),
            ("flask>=1.0 extra\n", 1, "not a valid version"),
            ("requests[security\n", 1, "not closed"),
            ("-r\n", 1, "`-r` needs a value"),
            ("--frobnicate x\n", 1, "unknown pip option"),
            ("numpy;\n", 1, "no environment marker"),
            ("numpy ; python_version < '3\n", 1, "quote"),
            ("a==1 --index-url x\n", 1, "not allowed after a requirement"),
            ("-a\\\n", 1, "unknown pip option"),
        ] {
            let e = parse_manifest(ManifestKind::Requirements, text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn go_mod() {
        let text = "module example.com/app\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/text v0.14.0 // indirect\n)\n\nrequire github.com/c/d v0.0.0-20240101000000-abcdef123456\n\nreplace github.com/a/b => ../b\n";
        let m = parse_manifest(ManifestKind::GoMod, text).unwrap();
        assert_eq!(
            names(&m),
            vec![
                "require:github.com/a/b=v1.2.3@6",
                "require:golang.org/x/text=v0.14.0 (indirect)@7",
                "require:github.com/c/d=v0.0.0-20240101000000-abcdef123456@10",
            ]
        );
        for (text, line, expected) in [
            ("module a\nrequire (\n\tx v1.0.0\n", 2, "never closed"),
            ("module a\nrequire x 1.0\n", 2, "not a module version"),
            (
                "module a\nfrobnicate x\n",
                2,
                "unknown directive `frobnicate`",
            ),
            ("go 1.22\n", 1, "no `module` directive"),
            ("module a\nmodule b\n", 2, "a second `module`"),
            ("module a\nreplace x ../y\n", 2, "needs `=>`"),
            ("module a\ngo one\n", 2, "invalid go version"),
            ("module \"a\n", 1, "not closed"),
            ("module a\nrequire x\n", 2, "takes 2 arguments"),
        ] {
            let e = parse_manifest(ManifestKind::GoMod, text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(expected), "{text:?}: {e}");
        }
    }

    #[test]
    fn python_names_normalize() {
        assert_eq!(normalize_python("Foo.Bar__baz"), "foo-bar-baz");
        let d = Dependency {
            name: "Django".into(),
            spec: "*".into(),
            section: "requirements".into(),
            line: 1,
        };
        assert_eq!(d.key(ManifestKind::Requirements).1, "django");
    }

    /// Random documents made of pieces that matter to the parsers
    /// (a small deterministic fuzz; cargo-fuzz targets come later).
    fn random_docs(pieces: &[&str], count: usize) -> Vec<String> {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let len = (next() % 40) as usize;
                (0..len)
                    .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn random_documents_never_panic() {
        let pieces = [
            "[",
            "]",
            "[[",
            "]]",
            "{",
            "}",
            "(",
            ")",
            "\"",
            "'",
            "`",
            "=",
            "==",
            ">=",
            "~=",
            ";",
            ",",
            ":",
            "#",
            "//",
            "\\",
            "\n",
            "\n",
            " ",
            "\t",
            "-",
            "--",
            "-r",
            "-e ",
            "@",
            ".",
            "*",
            "é",
            "\u{0}",
            "dependencies",
            "package",
            "project",
            "require",
            "module",
            "replace",
            "=>",
            "v1.2.3",
            "1.0",
            "serde",
            "x",
            "true",
            "[dependencies]\n",
            "target.'cfg(unix)'.dependencies",
            "tool.poetry",
            "\"a\": ",
            "git+https://h/r",
            "#egg=",
            "python_version",
            "indirect",
            "[project]\ndependencies = [",
        ];
        for doc in random_docs(&pieces, 4000) {
            for kind in [
                ManifestKind::Cargo,
                ManifestKind::Npm,
                ManifestKind::Pyproject,
                ManifestKind::Requirements,
                ManifestKind::GoMod,
            ] {
                if let Err(e) = parse_manifest(kind, &doc) {
                    assert!(e.line >= 1, "{kind:?} {doc:?}: {e}");
                }
            }
        }
    }

    #[test]
    fn no_panics_on_odd_input() {
        let inputs = [
            "",
            "\0",
            "é",
            "[",
            "{",
            "\\",
            "-",
            "--",
            "-e",
            "#",
            "a @",
            "a[",
            "a(",
            "a (==1",
            "require (",
            ")",
            "\"",
            "`",
            "[[dependencies]]",
            "[target]\nx = 1",
            "a\\",
            "\u{feff}module a",
            "module a // x",
            "  \t",
            "((",
            "a;b",
            "[dependencies]\n\"\" = \"1\"",
        ];
        for text in inputs {
            for kind in [
                ManifestKind::Cargo,
                ManifestKind::Npm,
                ManifestKind::Pyproject,
                ManifestKind::Requirements,
                ManifestKind::GoMod,
            ] {
                let _ = parse_manifest(kind, text);
            }
        }
    }
}

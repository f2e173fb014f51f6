//! Reading Monoco issue files: YAML frontmatter plus a Markdown body whose
//! checkboxes form the issue's checklist (SPEC §3).
//!
//! ```markdown
//! ---
//! id: FEAT-0123
//! type: feature          # epic | feature | chore | fix | arch
//! status: open           # open | closed | backlog | archived
//! stage: doing           # draft | doing | review | done | freezed
//! title: Export reports as CSV
//! parent: EPIC-0007
//! tags: [reports]
//! files: [src/export.rs]
//! ---
//!
//! ## FEAT-0123: Export reports as CSV
//!
//! ## Technical Tasks
//! - [x] chk-001: CSV writer
//! - [-] chk-002: wire the export button (depends: chk-001)
//! - [ ] write API docs <!-- id: chk-003 -->
//! - [~] Excel export (dropped)
//!
//! ## Acceptance Criteria
//! - [ ] chk-004: a 10 000-row report exports in under a second (depends: chk-002)
//! ```
//!
//! **Frontmatter.** The block between the first two `---` lines is YAML
//! (YAML 1.2 booleans only, duplicate keys rejected). `id` is required;
//! `type`, `status` and `stage` must be one of their listed values (any
//! case; stored lower-case); `dependencies`, `related`, `tags` and `files`
//! are lists; the timestamps are kept as written. Every field, known or
//! not, is also kept in [`Issue::frontmatter`]. Errors name the file, the
//! line and the field: `Issues/FEAT-0123.md:4: type: …`.
//!
//! **Checklist.** Every list item whose text starts with a box is an item:
//! `[ ]` todo, `[x]`/`[X]` done, `[-]`/`[/]` doing, `[~]`/`[+]` cancelled.
//! The Markdown is parsed with `pulldown-cmark`, so boxes inside code blocks
//! and HTML comments are not items. An item belongs to the section of its
//! nearest heading above (the heading's text, e.g. `Technical Tasks`,
//! `任务`, `Acceptance Criteria`, `验收标准`, `Review Comments`, `评审`;
//! `""` before any heading). An item may carry an id — `chk-003: text` at
//! its start (a word, `-`, digits, `:`) or `<!-- id: chk-003 -->` anywhere
//! in it — and dependencies, `(depends: chk-001, chk-002)` (also
//! `depends_on:`, or inside an HTML comment); both are removed from the
//! displayed text.
//!
//! **Dependencies.** The items form a graph (petgraph): a dependency on an
//! unknown id, a duplicate id or a cycle is an error. An item counts as
//! complete only when it is ticked *and* none of the items it depends on,
//! directly or through others, is still unchecked (`[ ]` or `[-]`); those
//! are its [`blocked_by`](ChecklistItem::blocked_by). A cancelled item is
//! not counted and does not block.
//!
//! ```
//! use ahp_oracles::workflow::issue::{parse_issue, ItemState};
//! use std::path::Path;
//!
//! let text = "---\nid: FEAT-0123\ntype: feature\n---\n## Tasks\n\
//!             - [x] chk-001: schema\n- [ ] chk-002: API (depends: chk-001)\n\
//!             - [x] chk-003: docs (depends: chk-002)\n";
//! let issue = parse_issue(text, Path::new("FEAT-0123.md")).unwrap();
//! let items = &issue.checklist.items;
//! assert_eq!(items[1].id.as_deref(), Some("chk-002"));
//! assert_eq!(items[1].text, "API");
//! assert_eq!(items[2].state, ItemState::Done);
//! assert_eq!(items[2].blocked_by, ["chk-002"]); // ticked, but its dependency is not
//! assert_eq!((issue.checklist.done(), issue.checklist.total()), (1, 3));
//! assert_eq!(issue.context_checklist()["incomplete_count"], 2);
//! ```

use ahp_config::source::Origin;
use ahp_config::yaml::{Node, NodeValue};
use ahp_engine::suggest::{did_you_mean, suggest_key};
use petgraph::graph::{DiGraph, NodeIndex};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The largest issue file read (an issue is a few KiB; anything this big is
/// not an issue file).
pub const MAX_ISSUE_BYTES: u64 = 4 * 1024 * 1024;

/// A frontmatter field's enum: [`ahp_engine::name_enum!`] plus `NAMES`,
/// `parse` and `WHAT` (the field's name).
macro_rules! frontmatter_enum {
    ($(#[$m:meta])* $name:ident, $what:literal, { $($(#[$vm:meta])* $var:ident => $s:literal),+ $(,)? }) => {
        ahp_engine::name_enum! {
            $(#[$m])*
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
            #[serde(rename_all = "lowercase")]
            pub enum $name {
                $($(#[$vm])* $var => $s),+
            }
        }

        impl $name {
            /// Every valid name, in the order of the spec.
            pub const NAMES: &'static [&'static str] = &[$($s),+];

            /// Reads a name, ignoring case and surrounding blanks.
            pub fn parse(s: &str) -> Option<Self> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $($s => Some($name::$var),)+
                    _ => None,
                }
            }

            const WHAT: &'static str = $what;
        }
    };
}

frontmatter_enum!(
    /// The `type` of an issue.
    IssueType, "type", {
        /// A grand goal spanning several features.
        Epic => "epic",
        /// A value increment for users.
        Feature => "feature",
        /// Engineering maintenance.
        Chore => "chore",
        /// A correction.
        Fix => "fix",
        /// An architecture record.
        Arch => "arch",
    }
);

frontmatter_enum!(
    /// The `status` of an issue (where its file lives).
    IssueStatus, "status", {
        /// Being worked on or planned soon.
        Open => "open",
        /// Finished.
        Closed => "closed",
        /// Not scheduled.
        Backlog => "backlog",
        /// Kept for the record.
        Archived => "archived",
    }
);

frontmatter_enum!(
    /// The `stage` of an issue (its logical progress).
    IssueStage, "stage", {
        /// Being written.
        Draft => "draft",
        /// In progress.
        Doing => "doing",
        /// Submitted for review.
        Review => "review",
        /// Done.
        Done => "done",
        /// Frozen (e.g. in the backlog).
        Freezed => "freezed",
    }
);

/// An issue file that cannot be read: where and why. Displays as
/// `path:line: field: message` (line and field when known).
///
/// ```
/// use ahp_oracles::workflow::issue::parse_issue;
/// use std::path::Path;
/// let err = parse_issue("---\nid: FEAT-1\nstage: doign\n---\n", Path::new("FEAT-1.md")).unwrap_err();
/// assert_eq!(err.line, Some(3));
/// assert!(err.to_string().starts_with("FEAT-1.md:3: stage: "), "{err}");
/// assert!(err.to_string().contains("did you mean `doing`"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueError {
    /// The issue file.
    pub path: PathBuf,
    /// The line (1-based) at fault, when one is.
    pub line: Option<usize>,
    /// The frontmatter field at fault, when one is.
    pub field: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl IssueError {
    fn new(path: &Path, line: Option<usize>, field: Option<&str>, message: String) -> Self {
        IssueError {
            path: path.to_path_buf(),
            line,
            field: field.map(str::to_string),
            message,
        }
    }
}

impl fmt::Display for IssueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for IssueError {}

/// A Monoco issue: its frontmatter fields and its checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    /// The file it was read from (as given).
    pub path: PathBuf,
    /// `id`, e.g. `FEAT-0123` (required).
    pub id: String,
    /// `uid`: a globally unique short id.
    pub uid: Option<String>,
    /// `type`.
    pub issue_type: Option<IssueType>,
    /// `status`.
    pub status: Option<IssueStatus>,
    /// `stage`.
    pub stage: Option<IssueStage>,
    /// `title`.
    pub title: Option<String>,
    /// `parent`: the id of the enclosing issue (e.g. an epic).
    pub parent: Option<String>,
    /// `dependencies`: ids of issues this one needs.
    pub dependencies: Vec<String>,
    /// `related`: ids of related issues.
    pub related: Vec<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// `files`: paths the issue is about.
    pub files: Vec<String>,
    /// `solution` (e.g. implemented, cancelled, wontfix, duplicate).
    pub solution: Option<String>,
    /// `created_at`, as written.
    pub created_at: Option<String>,
    /// `updated_at`, as written.
    pub updated_at: Option<String>,
    /// `closed_at`, as written.
    pub closed_at: Option<String>,
    /// The whole frontmatter as JSON: the fields above as written, and every
    /// other field (`sprint`, `domains`, …).
    pub frontmatter: Map<String, Value>,
    /// The Markdown after the frontmatter.
    pub body: String,
    /// The line of the file where [`Issue::body`] starts.
    pub body_line: usize,
    /// The checklist of the body.
    pub checklist: Checklist,
}

impl Issue {
    /// The `issue` object of a hook context: `{id, uid, type, status,
    /// stage, title, path, parent, dependencies, related, tags, files,
    /// solution, created_at, updated_at, closed_at, frontmatter}` (absent
    /// values are `null`).
    pub fn context_issue(&self) -> Value {
        json!({
            "id": self.id,
            "uid": self.uid,
            "type": self.issue_type.map(IssueType::as_str),
            "status": self.status.map(IssueStatus::as_str),
            "stage": self.stage.map(IssueStage::as_str),
            "title": self.title,
            "path": self.path.to_string_lossy(),
            "parent": self.parent,
            "dependencies": self.dependencies,
            "related": self.related,
            "tags": self.tags,
            "files": self.files,
            "solution": self.solution,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "closed_at": self.closed_at,
            "frontmatter": Value::Object(self.frontmatter.clone()),
        })
    }

    /// The `checklist` object of a hook context: `{total, done,
    /// incomplete_count, completion_rate, items}` (see [`Checklist::to_json`]).
    pub fn context_checklist(&self) -> Value {
        self.checklist.to_json()
    }
}

ahp_engine::name_enum! {
    /// The state of a checklist box.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum ItemState {
        /// `[ ]`
        Todo => "todo",
        /// `[x]` or `[X]`
        Done => "done",
        /// `[-]` or `[/]`: started, not finished.
        Doing => "doing",
        /// `[~]` or `[+]`: dropped; not counted.
        Cancelled => "cancelled",
    }
}

impl ItemState {
    /// The state of a box character (`' '`, `x`, `X`, `-`, `/`, `~`, `+`).
    pub fn from_marker(c: char) -> Option<ItemState> {
        match c {
            ' ' => Some(ItemState::Todo),
            'x' | 'X' => Some(ItemState::Done),
            '-' | '/' => Some(ItemState::Doing),
            '~' | '+' => Some(ItemState::Cancelled),
            _ => None,
        }
    }

    /// Todo or doing: an item in this state blocks the items depending on it.
    pub fn is_unchecked(self) -> bool {
        matches!(self, ItemState::Todo | ItemState::Doing)
    }
}

/// One checklist box, with exactly the shape of a context's
/// `checklist.items[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecklistItem {
    /// `chk-003`, when the item has an id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The text as displayed: without box, id and dependency markers.
    pub text: String,
    /// The box's state.
    pub state: ItemState,
    /// The text of the nearest heading above (`""` before any heading).
    #[serde(default)]
    pub section: String,
    /// Ids of the items this one depends on, as written.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Ids of unchecked items this one depends on, directly or through
    /// other items. Non-empty makes the item incomplete even when ticked.
    #[serde(default)]
    pub blocked_by: Vec<String>,
    /// The line of the issue file.
    #[serde(default)]
    pub line: usize,
}

impl ChecklistItem {
    /// An item with this state and text and nothing else.
    pub fn new(state: ItemState, text: impl Into<String>) -> Self {
        ChecklistItem {
            id: None,
            text: text.into(),
            state,
            section: String::new(),
            depends_on: Vec::new(),
            blocked_by: Vec::new(),
            line: 0,
        }
    }

    /// Whether the item counts towards the total (it is not cancelled).
    pub fn is_counted(&self) -> bool {
        self.state != ItemState::Cancelled
    }

    /// Ticked and not blocked by an unchecked dependency.
    pub fn is_complete(&self) -> bool {
        self.state == ItemState::Done && self.blocked_by.is_empty()
    }

    /// `chk-003: write API docs`, or the text alone when there is no id.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) if self.text.is_empty() => id.clone(),
            Some(id) => format!("{id}: {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// A dependency graph of checklist items that does not hold together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChecklistError {
    /// Two items carry the same id.
    DuplicateId {
        /// The id.
        id: String,
        /// The line of the second item.
        line: usize,
        /// The line of the first item.
        first_line: usize,
    },
    /// An item depends on an id no item carries.
    UnknownDependency {
        /// The depending item (its label).
        item: String,
        /// The unknown id.
        dependency: String,
        /// The closest known id, when one is close.
        suggestion: Option<String>,
        /// The depending item's line.
        line: usize,
    },
    /// Items depend on each other in a circle.
    Cycle {
        /// The ids along the cycle; the first is repeated at the end.
        members: Vec<String>,
        /// The line of the first member.
        line: usize,
    },
}

impl ChecklistError {
    /// The line the error points at.
    pub fn line(&self) -> usize {
        match self {
            ChecklistError::DuplicateId { line, .. }
            | ChecklistError::UnknownDependency { line, .. }
            | ChecklistError::Cycle { line, .. } => *line,
        }
    }
}

impl fmt::Display for ChecklistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChecklistError::DuplicateId { id, first_line, .. } => write!(
                f,
                "duplicate checklist item id `{id}` (first used on line {first_line}); give each item its own id"
            ),
            ChecklistError::UnknownDependency {
                item,
                dependency,
                suggestion,
                ..
            } => {
                write!(
                    f,
                    "checklist item `{item}` depends on unknown item `{dependency}`"
                )?;
                match suggestion {
                    Some(s) => write!(f, " (did you mean `{s}`?)"),
                    None => write!(f, "; no item has that id"),
                }
            }
            ChecklistError::Cycle { members, .. } => write!(
                f,
                "checklist dependency cycle: {}; remove one of these dependencies",
                members.join(" → ")
            ),
        }
    }
}

impl std::error::Error for ChecklistError {}

/// The checklist of an issue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checklist {
    /// Every box, in file order (cancelled ones included).
    pub items: Vec<ChecklistItem>,
}

impl Checklist {
    /// Builds the dependency graph of `items` and fills in each item's
    /// [`blocked_by`](ChecklistItem::blocked_by) (ids already there are
    /// kept). Fails on duplicate ids, unknown dependencies and cycles.
    ///
    /// ```
    /// use ahp_oracles::workflow::issue::{Checklist, ChecklistItem, ItemState};
    /// let mut a = ChecklistItem::new(ItemState::Todo, "a");
    /// a.id = Some("chk-1".into());
    /// let mut b = ChecklistItem::new(ItemState::Done, "b");
    /// b.depends_on = vec!["chk-1".into()];
    /// let list = Checklist::new(vec![a, b]).unwrap();
    /// assert_eq!(list.items[1].blocked_by, ["chk-1"]);
    /// assert_eq!(list.incomplete_count(), 2);
    /// ```
    pub fn new(mut items: Vec<ChecklistItem>) -> Result<Checklist, ChecklistError> {
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(id) = item.id.as_deref() {
                if let Some(&first) = by_id.get(id) {
                    return Err(ChecklistError::DuplicateId {
                        id: id.to_string(),
                        line: item.line,
                        first_line: items[first].line,
                    });
                }
                by_id.insert(id, i);
            }
        }
        let mut graph: DiGraph<usize, ()> = DiGraph::with_capacity(items.len(), items.len());
        for i in 0..items.len() {
            graph.add_node(i);
        }
        for (i, item) in items.iter().enumerate() {
            for dep in &item.depends_on {
                match by_id.get(dep.as_str()) {
                    Some(&j) => {
                        graph.update_edge(NodeIndex::new(i), NodeIndex::new(j), ());
                    }
                    None => {
                        let mut known: Vec<&str> = by_id.keys().copied().collect();
                        known.sort_unstable();
                        return Err(ChecklistError::UnknownDependency {
                            item: item.id.clone().unwrap_or_else(|| item.text.clone()),
                            dependency: dep.clone(),
                            suggestion: did_you_mean(dep, known.iter().copied())
                                .map(str::to_string),
                            line: item.line,
                        });
                    }
                }
            }
        }
        if let Some(cycle) = find_cycle(&graph) {
            let members: Vec<String> = cycle
                .iter()
                .map(|&i| items[i].id.clone().unwrap_or_else(|| items[i].text.clone()))
                .collect();
            return Err(ChecklistError::Cycle {
                line: items[cycle[0]].line,
                members,
            });
        }
        let blocked: Vec<Vec<String>> = (0..items.len())
            .map(|i| {
                unchecked_dependencies(&graph, &items, i)
                    .into_iter()
                    .filter_map(|j| items[j].id.clone())
                    .collect()
            })
            .collect();
        for (item, computed) in items.iter_mut().zip(blocked) {
            let given = std::mem::take(&mut item.blocked_by);
            let mut all = computed;
            for id in given {
                if !all.contains(&id) {
                    all.push(id);
                }
            }
            item.blocked_by = all;
        }
        Ok(Checklist { items })
    }

    /// Items counted in the total (not cancelled).
    pub fn total(&self) -> usize {
        self.items.iter().filter(|i| i.is_counted()).count()
    }

    /// Items ticked and not blocked.
    pub fn done(&self) -> usize {
        self.items.iter().filter(|i| i.is_complete()).count()
    }

    /// `total - done`.
    pub fn incomplete_count(&self) -> usize {
        self.total() - self.done()
    }

    /// `done / total`, 1.0 when nothing is counted.
    pub fn completion_rate(&self) -> f64 {
        match self.total() {
            0 => 1.0,
            total => self.done() as f64 / total as f64,
        }
    }

    /// The counted items that are not complete, in file order.
    pub fn incomplete(&self) -> impl Iterator<Item = &ChecklistItem> {
        self.items
            .iter()
            .filter(|i| i.is_counted() && !i.is_complete())
    }

    /// The items of the sections named in `sections` (see
    /// [`section_matches`]), keeping their `blocked_by` as computed over
    /// the whole checklist.
    pub fn select_sections<S: AsRef<str>>(&self, sections: &[S]) -> Checklist {
        Checklist {
            items: self
                .items
                .iter()
                .filter(|i| {
                    sections
                        .iter()
                        .any(|s| section_matches(&i.section, s.as_ref()))
                })
                .cloned()
                .collect(),
        }
    }

    /// The context shape: `{total, done, incomplete_count,
    /// completion_rate, items: [{id?, text, state, section, depends_on,
    /// blocked_by, line}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "total": self.total(),
            "done": self.done(),
            "incomplete_count": self.incomplete_count(),
            "completion_rate": self.completion_rate(),
            "items": serde_json::to_value(&self.items).unwrap_or(Value::Array(Vec::new())),
        })
    }
}

/// Monoco's section names in its languages: a name in one group also
/// matches the others of the group.
const SECTION_ALIASES: &[&[&str]] = &[
    &[
        "technical tasks",
        "tasks",
        "任务",
        "技术任务",
        "technical tasks (技术任务)",
    ],
    &[
        "acceptance criteria",
        "验收标准",
        "acceptance criteria (验收标准)",
    ],
    &[
        "review comments",
        "评审",
        "评审意见",
        "review comments (评审)",
    ],
];

/// Whether the heading `section` is the section called `wanted`: equal
/// ignoring case and surrounding blanks, or two names of the same Monoco
/// section in different languages (`Technical Tasks` / `任务`, `Acceptance
/// Criteria` / `验收标准`, `Review Comments` / `评审`).
///
/// ```
/// use ahp_oracles::workflow::issue::section_matches;
/// assert!(section_matches("Acceptance Criteria", "acceptance criteria"));
/// assert!(section_matches("验收标准", "Acceptance Criteria"));
/// assert!(!section_matches("Review Comments", "Technical Tasks"));
/// ```
pub fn section_matches(section: &str, wanted: &str) -> bool {
    let a = section.trim().to_lowercase();
    let b = wanted.trim().to_lowercase();
    if a == b {
        return true;
    }
    SECTION_ALIASES
        .iter()
        .any(|group| group.contains(&a.as_str()) && group.contains(&b.as_str()))
}

/// The first cycle of the graph, as node weights with the first repeated at
/// the end; deterministic (the strongly connected component holding the
/// earliest item, walked by lowest index).
fn find_cycle(graph: &DiGraph<usize, ()>) -> Option<Vec<usize>> {
    let mut cyclic: Vec<Vec<NodeIndex>> = petgraph::algo::tarjan_scc(graph)
        .into_iter()
        .filter(|scc| scc.len() > 1 || graph.contains_edge(scc[0], scc[0]))
        .collect();
    for scc in &mut cyclic {
        scc.sort_unstable();
    }
    cyclic.sort_unstable_by_key(|scc| scc[0]);
    let scc = cyclic.first()?;
    let mut path = vec![scc[0]];
    loop {
        let cur = *path.last()?;
        let next = graph
            .neighbors(cur)
            .filter(|n| scc.binary_search(n).is_ok())
            .min()?;
        if let Some(pos) = path.iter().position(|&p| p == next) {
            let mut cycle: Vec<usize> = path[pos..].iter().map(|&n| graph[n]).collect();
            cycle.push(graph[next]);
            return Some(cycle);
        }
        path.push(next);
    }
}

/// Indices of the unchecked items `start` depends on, directly or through
/// other items (not through cancelled ones), in file order.
fn unchecked_dependencies(
    graph: &DiGraph<usize, ()>,
    items: &[ChecklistItem],
    start: usize,
) -> Vec<usize> {
    let mut seen = vec![false; items.len()];
    seen[start] = true;
    let mut stack: Vec<NodeIndex> = graph.neighbors(NodeIndex::new(start)).collect();
    let mut found = Vec::new();
    while let Some(n) = stack.pop() {
        let j = graph[n];
        if std::mem::replace(&mut seen[j], true) {
            continue;
        }
        match items[j].state {
            ItemState::Cancelled => continue,
            s if s.is_unchecked() => found.push(j),
            _ => {}
        }
        stack.extend(graph.neighbors(n));
    }
    found.sort_unstable();
    found
}

/// Reads and parses an issue file.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("FIX-0001.md");
/// std::fs::write(&path, "---\nid: FIX-0001\ntype: fix\n---\n- [ ] reproduce\n").unwrap();
/// let issue = ahp_oracles::workflow::issue::load_issue(&path).unwrap();
/// assert_eq!(issue.checklist.total(), 1);
/// let missing = ahp_oracles::workflow::issue::load_issue(&dir.path().join("nope.md")).unwrap_err();
/// assert!(missing.message.contains("cannot read"), "{missing}");
/// ```
pub fn load_issue(path: &Path) -> Result<Issue, IssueError> {
    let too_big = |len: u64| {
        IssueError::new(
            path,
            None,
            None,
            format!("file is {len} bytes; an issue file may have at most {MAX_ISSUE_BYTES}"),
        )
    };
    let unreadable = |e: std::io::Error| {
        IssueError::new(path, None, None, format!("cannot read the issue: {e}"))
    };
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    // A FIFO or a device (`/dev/stdin`, `/dev/zero`) would wait forever or
    // never end.
    if !meta.is_file() {
        return Err(IssueError::new(
            path,
            None,
            None,
            "not a regular file; an issue is a Markdown file".to_string(),
        ));
    }
    if meta.len() > MAX_ISSUE_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| {
            std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_ISSUE_BYTES + 1), &mut bytes)
        })
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_ISSUE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        IssueError::new(
            path,
            None,
            None,
            format!(
                "the issue is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    parse_issue(&text, path)
}

/// Most directory entries [`find_issue_file`] looks at for one glob.
pub const MAX_LOOKUP_ENTRIES: usize = 20_000;

/// What [`find_issue_file`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The issue file.
    Found(PathBuf),
    /// No file matches.
    Missing,
    /// The id cannot name a file (`/`, `..`): nothing was looked up.
    BadId,
    /// The walk stopped at [`MAX_LOOKUP_ENTRIES`] before it found one.
    Stopped,
    /// Several files say they are this issue (a copy with its boxes
    /// ticked beside the real one): none is judged.
    Ambiguous(Vec<PathBuf>),
}

/// The issue file of `id` under `root`: among the files that the first
/// of `globs` to match any (once `{{ id }}` is replaced by the id, ignoring
/// case, as Monoco upper-cases ids) matches, the one whose frontmatter
/// says it is `id`; several such are [`Lookup::Ambiguous`]; with none, the
/// first in path order that does not read (its error is the issue
/// event's to report). A namespace (`project::FEAT-1`) is left out, in
/// the id asked for and in a file's own. Globs are relative to
/// `root` (`Issues/*/open/**/{{ id }}-*.md`) and the lookup stays inside
/// it: symbolic links are not followed, a found path must lie under the
/// root once resolved, an id with `/` or `..` is refused, and the walk
/// stops after [`MAX_LOOKUP_ENTRIES`] entries.
///
/// ```
/// use ahp_oracles::workflow::issue::{find_issue_file, Lookup};
/// let dir = tempfile::tempdir().unwrap();
/// let open = dir.path().join("Issues/Features/open");
/// std::fs::create_dir_all(&open).unwrap();
/// std::fs::write(open.join("FEAT-0001-add-login.md"), "---\nid: FEAT-0001\n---\n").unwrap();
/// let globs = ["Issues/*/open/**/{{ id }}-*.md".to_string()];
/// assert_eq!(find_issue_file(dir.path(), &globs, "feat-0001"), Lookup::Found(open.join("FEAT-0001-add-login.md")));
/// assert_eq!(find_issue_file(dir.path(), &globs, "FEAT-0002"), Lookup::Missing);
/// assert_eq!(find_issue_file(dir.path(), &globs, "../FEAT-0001"), Lookup::BadId);
/// ```
pub fn find_issue_file(root: &Path, globs: &[String], id: &str) -> Lookup {
    let id = without_namespace(id);
    if id.is_empty() || id.contains(['/', '\\', '\0']) || id.contains("..") {
        return Lookup::BadId;
    }
    let Ok(real_root) = root.canonicalize() else {
        return Lookup::Missing;
    };
    let mut stopped = false;
    for glob in globs {
        let mut seen = 0;
        let found = find_one(&real_root, glob, id, &mut seen);
        stopped |= seen > MAX_LOOKUP_ENTRIES;
        // A file that says it is another issue is passed over, and one
        // that does not read is taken only when no file reads as this
        // issue: a broken decoy first in path order must not stand for it.
        let (mut own, mut unread) = (Vec::new(), Vec::new());
        for path in found {
            match load_issue(&path) {
                Ok(issue) if same_id(&issue.id, id) => own.push(path),
                Ok(_) => {}
                Err(_) => unread.push(path),
            }
        }
        match own.len() {
            1 => return Lookup::Found(own.remove(0)),
            0 if !unread.is_empty() => return Lookup::Found(unread.remove(0)),
            0 => {}
            _ => return Lookup::Ambiguous(own),
        }
    }
    if stopped {
        Lookup::Stopped
    } else {
        Lookup::Missing
    }
}

/// `glob` with `{{ id }}` (or `{{id}}`) replaced by `id`, escaped.
fn with_id(glob: &str, id: &str) -> String {
    let id = globset::escape(id);
    glob.replace("{{ id }}", &id).replace("{{id}}", &id)
}

/// The files `glob` matches with `id` in place, in path order.
fn find_one(root: &Path, glob: &str, id: &str, seen: &mut usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let pattern = with_id(glob.trim().trim_start_matches("./"), id);
    let Ok(matcher) = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .case_insensitive(true)
        .build()
    else {
        return out;
    };
    let matcher = matcher.compile_matcher();
    // The walk starts at the deepest directory the glob names literally,
    // each step of which must be a real directory, not a link.
    let segments: Vec<&str> = pattern.split('/').collect();
    let literal = segments
        .iter()
        .take_while(|s| !s.contains(['*', '?', '[', '{']))
        .count();
    let mut start = root.to_path_buf();
    for (n, seg) in segments.iter().take(literal).enumerate() {
        start.push(seg);
        let Ok(meta) = std::fs::symlink_metadata(&start) else {
            return out;
        };
        let last = n + 1 == segments.len();
        if meta.file_type().is_symlink() || (!last && !meta.is_dir()) {
            return out;
        }
        if last {
            if meta.is_file() {
                out.push(start);
            }
            return out;
        }
    }
    walk(root, &start, &matcher, seen, &mut out);
    out
}

/// Whether an issue's own `id` is `id`, ignoring case and a namespace.
fn same_id(own: &str, id: &str) -> bool {
    without_namespace(own).eq_ignore_ascii_case(id)
}

/// An id without its namespace (`project::FEAT-1` is `FEAT-1`).
fn without_namespace(id: &str) -> &str {
    id.rsplit("::").next().unwrap_or(id)
}

fn walk(
    root: &Path,
    dir: &Path,
    matcher: &globset::GlobMatcher,
    seen: &mut usize,
    out: &mut Vec<PathBuf>,
) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = read
        .filter_map(|e| {
            let e = e.ok()?;
            Some((e.path(), e.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, kind) in entries {
        *seen += 1;
        if *seen > MAX_LOOKUP_ENTRIES {
            return;
        }
        let Ok(rel) = path.strip_prefix(root) else {
            return;
        };
        if kind.is_dir() {
            walk(root, &path, matcher, seen, out);
        } else if kind.is_file() && matcher.is_match(rel) {
            out.push(path);
        }
    }
}

/// Which copy of an issue file to judge when its tracker keeps the work
/// on a branch of its own (see [`issue_from_branch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchCopy {
    /// The working tree's copy: the current branch is the issue's, or no
    /// other branch matches.
    WorkingTree,
    /// The named branch's copy, and its text.
    Branch(String, String),
    /// Several branches match and the issue names none of them
    /// (`isolation.ref`): the working tree's copy is judged, and why.
    Ambiguous(Vec<String>),
}

/// The copy of the issue file at `path` to judge when its work lives on a
/// branch named by `branch_glob` (`{{ id }}` replaced by the id, ignoring
/// case), read through `git` (whose directory is the project root). The
/// working tree's copy when the current branch matches or none does; else
/// the branch the issue's own `isolation.ref` names, else the one
/// matching branch. Git runs as every git command of ahp does (safe
/// configuration, time limit, output cap); anything it cannot tell falls
/// back to the working tree.
pub async fn issue_from_branch(
    git: &crate::workflow::git::Git,
    branch_glob: &str,
    id: &str,
    path: &Path,
) -> BranchCopy {
    let id = id.rsplit("::").next().unwrap_or(id);
    let root = git.dir();
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let Some(rel) = path
        .strip_prefix(&real)
        .or_else(|_| path.strip_prefix(root))
        .ok()
        .and_then(Path::to_str)
        .map(|r| r.replace('\\', "/"))
    else {
        return BranchCopy::WorkingTree;
    };
    let pattern = with_id(branch_glob, id);
    let Ok(glob) = globset::GlobBuilder::new(&pattern)
        .case_insensitive(true)
        .build()
    else {
        return BranchCopy::WorkingTree;
    };
    let matcher = glob.compile_matcher();
    let current = git.current_branch().await;
    if current.as_deref().is_some_and(|c| matcher.is_match(c)) {
        return BranchCopy::WorkingTree;
    }
    let Ok(branches) = git.local_branches().await else {
        return BranchCopy::WorkingTree;
    };
    // Monoco records the branch it works on in the issue's frontmatter.
    let named = load_issue(path).ok().and_then(|i| {
        let r = i
            .frontmatter
            .get("isolation")?
            .get("ref")?
            .as_str()?
            .to_string();
        let r = r.strip_prefix("refs/heads/").unwrap_or(&r).to_string();
        branches.contains(&r).then_some(r)
    });
    let branch = match named {
        Some(b) if Some(&b) == current.as_ref() => return BranchCopy::WorkingTree,
        Some(b) => b,
        None => {
            let matching: Vec<&String> = branches
                .iter()
                .filter(|b| Some(*b) != current.as_ref() && matcher.is_match(b.as_str()))
                .collect();
            match matching.as_slice() {
                [] => return BranchCopy::WorkingTree,
                [one] => one.to_string(),
                many => {
                    return BranchCopy::Ambiguous(many.iter().map(|b| b.to_string()).collect());
                }
            }
        }
    };
    // The branch by its full name: a name that starts with `-` stays one.
    match git.file_at(&format!("refs/heads/{branch}"), &rel).await {
        Ok(text) if text.len() as u64 <= MAX_ISSUE_BYTES => match String::from_utf8(text) {
            Ok(text) => BranchCopy::Branch(branch, text),
            Err(_) => BranchCopy::WorkingTree,
        },
        _ => BranchCopy::WorkingTree,
    }
}

/// Parses the text of an issue file; `path` is recorded in the issue and in
/// errors.
pub fn parse_issue(text: &str, path: &Path) -> Result<Issue, IssueError> {
    let err = |line: Option<usize>, field: Option<&str>, message: String| {
        IssueError::new(path, line, field, message)
    };
    let parts = split_frontmatter(text).map_err(|(line, m)| err(line, None, m))?;
    let fm = parse_frontmatter(parts.yaml, parts.yaml_line)
        .map_err(|(line, field, m)| err(line, field.as_deref(), m))?;
    let line_starts = line_starts(text);
    let items = parse_checklist(parts.body, parts.body_offset, &line_starts)
        .map_err(|(line, m)| err(Some(line), None, m))?;
    let checklist = Checklist::new(items).map_err(|e| err(Some(e.line()), None, e.to_string()))?;
    Ok(Issue {
        path: path.to_path_buf(),
        id: fm.id,
        uid: fm.uid,
        issue_type: fm.issue_type,
        status: fm.status,
        stage: fm.stage,
        title: fm.title,
        parent: fm.parent,
        dependencies: fm.dependencies,
        related: fm.related,
        tags: fm.tags,
        files: fm.files,
        solution: fm.solution,
        created_at: fm.created_at,
        updated_at: fm.updated_at,
        closed_at: fm.closed_at,
        frontmatter: fm.all,
        body: parts.body.to_string(),
        body_line: parts.body_line,
        checklist,
    })
}

// ---------------------------------------------------------------------------
// Frontmatter

struct Parts<'a> {
    yaml: &'a str,
    /// File line of the first YAML line.
    yaml_line: usize,
    body: &'a str,
    body_offset: usize,
    body_line: usize,
}

/// Splits `---\nYAML\n---\nBODY`. Errors carry a line.
fn split_frontmatter(text: &str) -> Result<Parts<'_>, (Option<usize>, String)> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_start_matches('\u{feff}').trim_end() != "---" {
        let message = if text.trim().is_empty() {
            "the issue file is empty; it must start with a `---` line opening the YAML frontmatter"
        } else {
            "no YAML frontmatter: a Monoco issue starts with a `---` line, then fields such as `id: FEAT-0123`, then a closing `---` line"
        };
        return Err((Some(1), message.to_string()));
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for (line, l) in (2usize..).zip(lines) {
        let trimmed = l.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let body_offset = offset + l.len();
            return Ok(Parts {
                yaml: &text[yaml_start..offset],
                yaml_line: 2,
                body: &text[body_offset..],
                body_offset,
                body_line: line + 1,
            });
        }
        offset += l.len();
    }
    Err((
        Some(1),
        "the frontmatter opened on line 1 has no closing `---` line".to_string(),
    ))
}

/// What the frontmatter says.
struct Frontmatter {
    id: String,
    uid: Option<String>,
    issue_type: Option<IssueType>,
    status: Option<IssueStatus>,
    stage: Option<IssueStage>,
    title: Option<String>,
    parent: Option<String>,
    dependencies: Vec<String>,
    related: Vec<String>,
    tags: Vec<String>,
    files: Vec<String>,
    solution: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    closed_at: Option<String>,
    all: Map<String, Value>,
}

type FieldError = (Option<usize>, Option<String>, String);

/// The file line of a position in the frontmatter (whose YAML starts on
/// `first`); `None` when the parser gave no position.
fn file_line(o: &Origin, first: usize) -> Option<usize> {
    (o.line > 0).then(|| o.line + first - 1)
}

/// A scalar as text (`42` → "42"); `None` for null, lists and maps.
fn scalar_text(v: &Node) -> Option<String> {
    match &v.value {
        NodeValue::Bool(b) => Some(b.to_string()),
        NodeValue::Int(i) => Some(i.to_string()),
        NodeValue::Float(f) => Some(f.to_string()),
        NodeValue::Str(s) => Some(s.clone()),
        NodeValue::Null | NodeValue::Seq(_) | NodeValue::Map(_) => None,
    }
}

fn parse_frontmatter(yaml: &str, first_line: usize) -> Result<Frontmatter, FieldError> {
    if yaml.trim().is_empty() {
        return Err((
            Some(first_line.saturating_sub(1).max(1)),
            None,
            "the frontmatter is empty; it needs at least `id: FEAT-0123`".to_string(),
        ));
    }
    // Read as policy files are (YAML 1.2 booleans, duplicate keys refused).
    let root = ahp_config::yaml::parse_document(yaml).map_err(|e| {
        let line = (e.line > 0).then(|| e.line + first_line - 1);
        let message = e
            .message
            .replacen("invalid YAML", "invalid YAML in the frontmatter", 1);
        (line, None, message)
    })?;
    let NodeValue::Map(entries) = &root.value else {
        return Err((
            file_line(&root.origin, first_line),
            None,
            format!(
                "the frontmatter must be a map of fields (`id: FEAT-0123`, `title: …`), found {}",
                root.kind()
            ),
        ));
    };

    let mut fm = Frontmatter {
        id: String::new(),
        uid: None,
        issue_type: None,
        status: None,
        stage: None,
        title: None,
        parent: None,
        dependencies: Vec::new(),
        related: Vec::new(),
        tags: Vec::new(),
        files: Vec::new(),
        solution: None,
        created_at: None,
        updated_at: None,
        closed_at: None,
        all: Map::new(),
    };
    let mut id_seen = false;
    for (key, value) in entries {
        let name = key.name.as_str();
        let line =
            file_line(&value.origin, first_line).or_else(|| file_line(&key.origin, first_line));
        let field_err = |message: String| (line, Some(name.to_string()), message);
        match name {
            "id" => {
                let id = opt_text(value).map_err(field_err)?;
                match id {
                    Some(id) if !id.trim().is_empty() => {
                        fm.id = id.trim().to_string();
                        id_seen = true;
                    }
                    _ => {
                        return Err(field_err(
                            "the issue id must not be empty, e.g. `id: FEAT-0123`".to_string(),
                        ));
                    }
                }
            }
            "uid" => fm.uid = opt_text(value).map_err(field_err)?,
            "title" => fm.title = opt_text(value).map_err(field_err)?,
            "parent" => fm.parent = opt_text(value).map_err(field_err)?,
            "solution" => fm.solution = opt_text(value).map_err(field_err)?,
            "created_at" => fm.created_at = opt_text(value).map_err(field_err)?,
            "updated_at" => fm.updated_at = opt_text(value).map_err(field_err)?,
            "closed_at" => fm.closed_at = opt_text(value).map_err(field_err)?,
            "type" => {
                fm.issue_type = opt_enum(value, IssueType::parse, IssueType::NAMES)
                    .map_err(|m| field_err(format!("{} {m}", IssueType::WHAT)))?
            }
            "status" => {
                fm.status = opt_enum(value, IssueStatus::parse, IssueStatus::NAMES)
                    .map_err(|m| field_err(format!("{} {m}", IssueStatus::WHAT)))?
            }
            "stage" => {
                fm.stage = opt_enum(value, IssueStage::parse, IssueStage::NAMES)
                    .map_err(|m| field_err(format!("{} {m}", IssueStage::WHAT)))?
            }
            "dependencies" => fm.dependencies = text_list(value, first_line, name, "[FEAT-0100]")?,
            "related" => fm.related = text_list(value, first_line, name, "[FEAT-0100]")?,
            "tags" => fm.tags = text_list(value, first_line, name, "[backend, api]")?,
            "files" => fm.files = text_list(value, first_line, name, "[src/lib.rs]")?,
            _ => {}
        }
        fm.all.insert(key.name.clone(), value.to_json());
    }
    if !id_seen {
        return Err((
            Some(first_line),
            Some("id".to_string()),
            "missing `id`: every issue needs one, e.g. `id: FEAT-0123`".to_string(),
        ));
    }
    Ok(fm)
}

fn opt_text(v: &Node) -> Result<Option<String>, String> {
    match &v.value {
        NodeValue::Null => Ok(None),
        NodeValue::Seq(_) | NodeValue::Map(_) => Err(format!("expected text, found {}", v.kind())),
        _ => Ok(scalar_text(v)),
    }
}

fn opt_enum<T>(
    v: &Node,
    parse: fn(&str) -> Option<T>,
    names: &[&str],
) -> Result<Option<T>, String> {
    let Some(text) = opt_text(v)? else {
        return Ok(None);
    };
    if let Some(t) = parse(&text) {
        return Ok(Some(t));
    }
    let lower = text.trim().to_ascii_lowercase();
    let hint = suggest_key(&lower, names)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    Err(format!(
        "`{text}` is not valid{hint}; expected one of {}",
        names.join(", ")
    ))
}

fn text_list(
    v: &Node,
    first_line: usize,
    field: &str,
    example: &str,
) -> Result<Vec<String>, FieldError> {
    match &v.value {
        NodeValue::Null => Ok(Vec::new()),
        NodeValue::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                scalar_text(item).ok_or_else(|| {
                    (
                        file_line(&item.origin, first_line),
                        Some(format!("{field}.{i}")),
                        format!("expected text, found {}", item.kind()),
                    )
                })
            })
            .collect(),
        _ => Err((
            file_line(&v.origin, first_line),
            Some(field.to_string()),
            format!(
                "expected a list, e.g. `{field}: {example}`, found {}",
                v.kind()
            ),
        )),
    }
}

// ---------------------------------------------------------------------------
// Checklist

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

fn line_of(line_starts: &[usize], offset: usize) -> usize {
    line_starts.partition_point(|&s| s <= offset).max(1)
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| match Regex::new(pattern) {
        Ok(r) => r,
        // The patterns are constants tested below; this cannot happen.
        Err(e) => panic!("built-in pattern {pattern}: {e}"),
    })
}

fn box_marker() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\[([ xX/~+-])\](?:\s+|$)")
}

fn id_prefix() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^([A-Za-z][A-Za-z0-9_]*-[0-9]+)\s*:\s*")
}

fn id_comment() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?is)<!--\s*id\s*:\s*([^\s>]+?)\s*-->")
}

fn depends_paren() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?i)\(\s*depends(?:[ _-]?on)?\s*:\s*([^)]*)\)")
}

fn depends_comment() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?is)<!--\s*depends(?:[ _-]?on)?\s*:\s*(.*?)\s*-->")
}

fn any_comment() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"(?s)<!--.*?-->")
}

/// A list item being read.
struct Frame {
    /// Byte range (in the body) of the inline content of the item's first
    /// block.
    span: Option<(usize, usize)>,
    /// `[ ]`/`[x]` as recognised by pulldown-cmark's task lists.
    task: Option<bool>,
    /// The first block is over (later inline content is not the item's text).
    first_block_done: bool,
    /// HTML blocks directly in the item (an id comment on its own line).
    html: String,
}

/// The boxes of a Markdown body, in file order, before the dependency graph.
/// Errors: (file line, message).
fn parse_checklist(
    body: &str,
    body_offset: usize,
    line_starts: &[usize],
) -> Result<Vec<ChecklistItem>, (usize, String)> {
    let mut items: Vec<ChecklistItem> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut section = String::new();
    let mut heading: Option<String> = None;

    let parser = Parser::new_ext(body, Options::ENABLE_TASKLISTS).into_offset_iter();
    for (event, range) in parser {
        if let Some(h) = heading.as_mut() {
            match event {
                Event::Text(t) | Event::Code(t) => h.push_str(&t),
                Event::SoftBreak | Event::HardBreak => h.push(' '),
                Event::End(TagEnd::Heading(_)) => {
                    section = h.split_whitespace().collect::<Vec<_>>().join(" ");
                    heading = None;
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::Heading { .. }) => {
                if let Some(f) = frames.last_mut() {
                    f.first_block_done = true;
                }
                heading = Some(String::new());
            }
            Event::Start(Tag::Item) => frames.push(Frame {
                span: None,
                task: None,
                first_block_done: false,
                html: String::new(),
            }),
            Event::End(TagEnd::Item) => {
                if let Some(frame) = frames.pop()
                    && let Some(item) =
                        finish_item(frame, body, body_offset, line_starts, &section)?
                {
                    items.push(item);
                }
            }
            Event::Start(Tag::Paragraph) => {
                if let Some(f) = frames.last_mut()
                    && f.span.is_some()
                {
                    f.first_block_done = true;
                }
            }
            Event::End(TagEnd::Paragraph) => {
                if let Some(f) = frames.last_mut()
                    && f.span.is_some()
                {
                    f.first_block_done = true;
                }
            }
            Event::Start(
                Tag::List(_)
                | Tag::CodeBlock(_)
                | Tag::BlockQuote(_)
                | Tag::Table(_)
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList
                | Tag::MetadataBlock(_),
            )
            | Event::Rule
            | Event::DisplayMath(_) => {
                if let Some(f) = frames.last_mut() {
                    f.first_block_done = true;
                }
            }
            Event::Start(Tag::HtmlBlock) => {}
            Event::Html(h) => {
                if let Some(f) = frames.last_mut() {
                    f.html.push_str(&h);
                }
            }
            Event::TaskListMarker(done) => {
                if let Some(f) = frames.last_mut()
                    && !f.first_block_done
                    && f.span.is_none()
                {
                    f.task = Some(done);
                    f.span = Some((range.start, range.end));
                }
            }
            Event::Text(_)
            | Event::Code(_)
            | Event::InlineHtml(_)
            | Event::InlineMath(_)
            | Event::FootnoteReference(_)
            | Event::SoftBreak
            | Event::HardBreak
            | Event::Start(
                Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Superscript
                | Tag::Subscript
                | Tag::Link { .. }
                | Tag::Image { .. },
            ) => {
                if let Some(f) = frames.last_mut()
                    && !f.first_block_done
                {
                    f.span = Some(match f.span {
                        None => (range.start, range.end),
                        Some((s, e)) => (s.min(range.start), e.max(range.end)),
                    });
                }
            }
            _ => {}
        }
    }
    items.sort_by_key(|i| i.line);
    Ok(items)
}

/// Turns a finished list item into a checklist item, when it has a box.
fn finish_item(
    frame: Frame,
    body: &str,
    body_offset: usize,
    line_starts: &[usize],
    section: &str,
) -> Result<Option<ChecklistItem>, (usize, String)> {
    let Some((start, end)) = frame.span else {
        return Ok(None);
    };
    let Some(raw) = body.get(start..end) else {
        return Ok(None);
    };
    let line = line_of(line_starts, body_offset + start);
    let (state, rest) = match box_marker().captures(raw) {
        Some(c) => {
            let marker = c
                .get(1)
                .and_then(|m| m.as_str().chars().next())
                .unwrap_or(' ');
            let state = match frame.task {
                Some(true) => ItemState::Done,
                Some(false) => ItemState::Todo,
                None => match ItemState::from_marker(marker) {
                    Some(s) => s,
                    None => return Ok(None),
                },
            };
            let skip = c.get(0).map_or(0, |m| m.end());
            (state, &raw[skip..])
        }
        None => match frame.task {
            // pulldown-cmark's marker range was only the box itself.
            Some(done) => (
                if done {
                    ItemState::Done
                } else {
                    ItemState::Todo
                },
                raw,
            ),
            None => return Ok(None),
        },
    };
    let mut text = rest.to_string();
    let mut comment_id: Option<String> = None;
    let mut depends: Vec<String> = Vec::new();
    for source in [text.as_str(), frame.html.as_str()] {
        for c in id_comment().captures_iter(source) {
            if let Some(m) = c.get(1) {
                let id = m.as_str().to_string();
                match &comment_id {
                    Some(prev) if *prev != id => {
                        return Err((
                            line,
                            format!("checklist item has two ids, `{prev}` and `{id}`; keep one"),
                        ));
                    }
                    _ => comment_id = Some(id),
                }
            }
        }
        for c in depends_comment().captures_iter(source) {
            if let Some(m) = c.get(1) {
                push_ids(&mut depends, m.as_str());
            }
        }
    }
    for c in depends_paren().captures_iter(&text) {
        if let Some(m) = c.get(1) {
            push_ids(&mut depends, m.as_str());
        }
    }
    text = any_comment().replace_all(&text, " ").into_owned();
    text = depends_paren().replace_all(&text, " ").into_owned();
    text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut id = None;
    if let Some(c) = id_prefix().captures(&text) {
        let prefix = c.get(1).map(|m| m.as_str().to_string());
        let skip = c.get(0).map_or(0, |m| m.end());
        id = prefix;
        text = text[skip..].to_string();
    }
    let id = match (id, comment_id) {
        (Some(a), Some(b)) if a != b => {
            return Err((
                line,
                format!("checklist item has two ids, `{a}` and `{b}`; keep one"),
            ));
        }
        (a, b) => a.or(b),
    };
    if text.is_empty() && id.is_none() {
        return Ok(None);
    }
    Ok(Some(ChecklistItem {
        id,
        text,
        state,
        section: section.to_string(),
        depends_on: depends,
        blocked_by: Vec::new(),
        line,
    }))
}

fn push_ids(into: &mut Vec<String>, list: &str) {
    for id in list
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .map(|s| s.trim_matches(|c: char| c == '`' || c == '.'))
        .filter(|s| !s.is_empty())
    {
        if !into.iter().any(|d| d == id) {
            into.push(id.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(body: &str) -> Vec<ChecklistItem> {
        let text = format!("---\nid: T-1\n---\n{body}");
        parse_issue(&text, Path::new("t.md"))
            .unwrap_or_else(|e| panic!("{e}"))
            .checklist
            .items
    }

    #[test]
    fn builtin_patterns_compile() {
        let _ = (
            box_marker(),
            id_prefix(),
            id_comment(),
            depends_paren(),
            depends_comment(),
            any_comment(),
        );
    }

    #[test]
    fn every_marker() {
        let got = items(
            "- [ ] a\n- [x] b\n- [X] c\n- [-] d\n- [/] e\n- [~] f\n- [+] g\n- [?] h\n- plain\n",
        );
        let states: Vec<(&str, ItemState)> =
            got.iter().map(|i| (i.text.as_str(), i.state)).collect();
        assert_eq!(
            states,
            [
                ("a", ItemState::Todo),
                ("b", ItemState::Done),
                ("c", ItemState::Done),
                ("d", ItemState::Doing),
                ("e", ItemState::Doing),
                ("f", ItemState::Cancelled),
                ("g", ItemState::Cancelled),
            ]
        );
        assert_eq!(got[0].line, 4);
        assert_eq!(got[6].line, 10);
    }

    #[test]
    fn nested_items_and_multiline_text() {
        let got = items(
            "- [ ] parent\n  spans two lines\n  - [x] child\n* [-] star item\n1. [ ] numbered\n",
        );
        let texts: Vec<&str> = got.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(
            texts,
            ["parent spans two lines", "child", "star item", "numbered"]
        );
    }

    #[test]
    fn ids_and_dependencies_are_taken_out_of_the_text() {
        let got = items(
            "- [x] chk-001: schema\n- [ ] write `API` docs <!-- id: chk-002 --> (depends: chk-001)\n- [ ] chk-003: ship (depends_on: chk-001, chk-002)\n",
        );
        assert_eq!(got[0].id.as_deref(), Some("chk-001"));
        assert_eq!(got[1].id.as_deref(), Some("chk-002"));
        assert_eq!(got[1].text, "write `API` docs");
        assert_eq!(got[1].depends_on, ["chk-001"]);
        assert_eq!(got[2].text, "ship");
        assert_eq!(got[2].depends_on, ["chk-001", "chk-002"]);
        assert_eq!(got[2].blocked_by, ["chk-002"]);
    }

    #[test]
    fn cycle_path_is_a_real_cycle() {
        let mk = |id: &str, deps: &[&str], line| {
            let mut i = ChecklistItem::new(ItemState::Todo, id);
            i.id = Some(id.into());
            i.depends_on = deps.iter().map(|d| d.to_string()).collect();
            i.line = line;
            i
        };
        let err = Checklist::new(vec![
            mk("a-1", &["a-2"], 1),
            mk("a-2", &["a-3"], 2),
            mk("a-3", &["a-2"], 3),
        ])
        .unwrap_err();
        match err {
            ChecklistError::Cycle { members, line } => {
                assert_eq!(members, ["a-2", "a-3", "a-2"]);
                assert_eq!(line, 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lines_are_file_lines() {
        assert_eq!(line_of(&line_starts("a\nb\nc"), 0), 1);
        assert_eq!(line_of(&line_starts("a\nb\nc"), 2), 2);
        assert_eq!(line_of(&line_starts("a\nb\nc"), 4), 3);
    }
}

//! The parsed-config cache: the tree of a hooks.yaml layer or a HOOK.md
//! frontmatter as it was last parsed, so that a hook call does not parse
//! YAML again while the file is unchanged.
//!
//! Every hook call is a new process that loads every layer, and YAML
//! parsing is what a policy costs to load before anything is compiled
//! (a cached tree is read without touching the parser's code at all). A
//! cache entry holds the SHA-256 of the text it was
//! parsed from and is used only when the text read now has the same hash,
//! so an edit, a checkout or a clock that lies can never serve a stale
//! tree. Entries live in `$XDG_CACHE_HOME/ahp/parsed/` (else
//! `~/.cache/ahp/parsed/`), one per file, named by the hash of the file's
//! path, so the cache holds one entry per policy file ever loaded.
//! `AHP_NO_CACHE=1` turns it off.
//!
//! The cache is an optimization and never a source of errors: an entry
//! that is missing, from another ahp build, truncated or corrupt is
//! ignored and rewritten, and a cache directory that cannot be written, is
//! not the user's or can be written by others is not used (`--debug` says
//! why). Only files that parse are cached; errors always come from the
//! parser.

use crate::source::{ConfigError, Origin, SourceFile};
use crate::yaml::{self, Key, Node, NodeValue};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What an entry starts with; the [`build_id`] follows, so a new ahp never
/// reads an older ahp's entries. Bump the number when the encoding changes.
const MAGIC: &[u8] = b"ahp-parsed-yaml 1\n";

/// Deeper trees are refused on decoding (the YAML parser refuses them
/// earlier; this guards against a corrupt entry).
const MAX_DEPTH: usize = 256;

/// The tree of `file`, from the cache in `dir` when it holds one for this
/// exact text, else parsed (and then stored). Without a directory, or with
/// one that cannot be used, a plain parse.
pub(crate) fn parse(dir: Option<&Path>, file: Arc<SourceFile>) -> Result<Node, ConfigError> {
    let (Some(dir), Some(build)) = (dir.filter(|d| private_dir(d)), build_id()) else {
        return yaml::parse(file);
    };
    let entry = dir.join(entry_name(&file.path));
    let digest: [u8; 32] = Sha256::digest(file.text.as_bytes()).into();
    if let Ok(bytes) = std::fs::read(&entry) {
        match decode(&bytes, build, &digest, &file) {
            Some(node) => return Ok(node),
            None => tracing::debug!(entry = %entry.display(), "parse cache: entry not usable"),
        }
    }
    let node = yaml::parse(Arc::clone(&file))?;
    if let Err(e) = store(&entry, build, &digest, &node) {
        tracing::debug!(entry = %entry.display(), error = %e, "parse cache: not stored");
    }
    Ok(node)
}

/// What an entry must have been written by: this ahp version, and this very
/// executable (its size and modification time), so that a rebuilt or
/// upgraded ahp — whose parser may read the same text differently — never
/// takes an older one's trees. `None` (no cache) when the executable
/// cannot be found.
fn build_id() -> Option<&'static [u8]> {
    static ID: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(
            format!(
                "{} {} {}.{:09}",
                env!("CARGO_PKG_VERSION"),
                meta.len(),
                modified.as_secs(),
                modified.subsec_nanos()
            )
            .into_bytes(),
        )
    })
    .as_deref()
}

/// Whether `dir` is a directory only this user can write, creating it
/// (0700) if missing: entries are trusted by their checksum, which anyone
/// able to write them could forge, so a directory others can write (a
/// shared `XDG_CACHE_HOME`) is not used at all.
fn private_dir(dir: &Path) -> bool {
    let meta = std::fs::symlink_metadata(dir).or_else(|_| {
        create_private_dir(dir)?;
        std::fs::symlink_metadata(dir)
    });
    meta.is_ok_and(|m| m.is_dir() && owned_and_not_shared(&m))
}

#[cfg(unix)]
fn owned_and_not_shared(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == rustix::process::geteuid().as_raw() && meta.mode() & 0o022 == 0
}

#[cfg(not(unix))]
fn owned_and_not_shared(_: &std::fs::Metadata) -> bool {
    true
}

/// The cache directory from the environment: `None` when `AHP_NO_CACHE`
/// is set (to anything but `0`) or no directory is known.
pub(crate) fn dir_from_env() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if var("AHP_NO_CACHE").is_some_and(|v| v != "0") {
        return None;
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    // Relative paths would depend on the current directory.
    base.is_absolute().then(|| base.join("ahp").join("parsed"))
}

fn entry_name(path: &Path) -> String {
    let h = Sha256::digest(path.as_os_str().as_encoded_bytes());
    let mut name = String::with_capacity(36);
    for b in &h[..16] {
        name.push_str(&format!("{b:02x}"));
    }
    name.push_str(".bin");
    name
}

fn store(entry: &Path, build: &[u8], digest: &[u8; 32], node: &Node) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(MAGIC);
    put_bytes(&mut out, build);
    out.extend_from_slice(digest);
    encode(&mut out, node);
    // The entry's own checksum: a damaged entry must be refused, not read
    // as another policy.
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    // A temporary file renamed into place: a reader sees the old entry or
    // the new one, never half of one. Created new (never through a link);
    // one left by a process killed while writing is replaced.
    let tmp = entry.with_extension(format!("tmp{}", std::process::id()));
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
    };
    let file = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(&tmp)?;
            create()
        }
        other => other,
    };
    let written = file
        .and_then(|mut f| f.write_all(&out))
        .and_then(|()| std::fs::rename(&tmp, entry));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

// The encoding: a node is its line and column (LEB128), a tag byte and the
// payload; strings are a length and UTF-8 bytes; lists and maps a count
// and their items, a map key being line, column and string.

fn put_uint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_uint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_origin(out: &mut Vec<u8>, o: &Origin) {
    put_uint(out, o.line as u64);
    put_uint(out, o.column as u64);
}

fn encode(out: &mut Vec<u8>, node: &Node) {
    put_origin(out, &node.origin);
    match &node.value {
        NodeValue::Null => out.push(0),
        NodeValue::Bool(b) => out.extend_from_slice(&[1, u8::from(*b)]),
        NodeValue::Int(i) => {
            out.push(2);
            out.extend_from_slice(&i.to_le_bytes());
        }
        NodeValue::Float(f) => {
            out.push(3);
            out.extend_from_slice(&f.to_le_bytes());
        }
        NodeValue::Str(s) => {
            out.push(4);
            put_bytes(out, s.as_bytes());
        }
        NodeValue::Seq(items) => {
            out.push(5);
            put_uint(out, items.len() as u64);
            items.iter().for_each(|i| encode(out, i));
        }
        NodeValue::Map(entries) => {
            out.push(6);
            put_uint(out, entries.len() as u64);
            for (k, v) in entries {
                put_origin(out, &k.origin);
                put_bytes(out, k.name.as_bytes());
                encode(out, v);
            }
        }
    }
}

/// The tree in `bytes` if it is a whole, current entry for text with this
/// digest; `None` for anything else.
fn decode(bytes: &[u8], build: &[u8], digest: &[u8; 32], file: &Arc<SourceFile>) -> Option<Node> {
    let (bytes, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if Sha256::digest(bytes).as_slice() != sum {
        return None;
    }
    let mut r = Reader { bytes, at: 0, file };
    if r.take(MAGIC.len())? != MAGIC || r.bytes_field()? != build || r.take(32)? != digest {
        return None;
    }
    let node = r.node(0)?;
    (r.at == bytes.len()).then_some(node)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    file: &'a Arc<SourceFile>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn uint(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.uint()?).ok()
    }

    fn bytes_field(&mut self) -> Option<&[u8]> {
        let n = self.usize()?;
        self.take(n)
    }

    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes_field()?.to_vec()).ok()
    }

    fn origin(&mut self) -> Option<Origin> {
        Some(Origin {
            file: Arc::clone(self.file),
            line: self.usize()?,
            column: self.usize()?,
        })
    }

    /// A count of items that each take at least `min` bytes: a corrupt
    /// count must not reserve memory the entry cannot hold.
    fn count(&mut self, min: usize) -> Option<usize> {
        let n = self.usize()?;
        (n <= (self.bytes.len() - self.at) / min).then_some(n)
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let origin = self.origin()?;
        let value = match self.byte()? {
            0 => NodeValue::Null,
            1 => NodeValue::Bool(match self.byte()? {
                0 => false,
                1 => true,
                _ => return None,
            }),
            2 => NodeValue::Int(i128::from_le_bytes(self.take(16)?.try_into().ok()?)),
            3 => NodeValue::Float(f64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            4 => NodeValue::Str(self.string()?),
            5 => {
                let n = self.count(3)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.node(depth + 1)?);
                }
                NodeValue::Seq(items)
            }
            6 => {
                let n = self.count(6)?;
                let mut entries = Vec::with_capacity(n);
                for _ in 0..n {
                    let origin = self.origin()?;
                    let name = self.string()?;
                    entries.push((Key { name, origin }, self.node(depth + 1)?));
                }
                NodeValue::Map(entries)
            }
            _ => return None,
        };
        Some(Node { value, origin })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Layer;

    fn source(text: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile {
            layer: Layer::Project,
            path: "/p/.ahp/hooks.yaml".into(),
            text: text.to_string(),
        })
    }

    /// The tree with its origins, as text: equal trees print the same.
    fn show(n: &Node) -> String {
        let o = |o: &Origin| format!("{}:{}", o.line, o.column);
        match &n.value {
            NodeValue::Seq(items) => format!(
                "{}[{}]",
                o(&n.origin),
                items.iter().map(show).collect::<Vec<_>>().join(",")
            ),
            NodeValue::Map(m) => format!(
                "{}{{{}}}",
                o(&n.origin),
                m.iter()
                    .map(|(k, v)| format!("{}{:?}={}", o(&k.origin), k.name, show(v)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            v => format!("{}{v:?}", o(&n.origin)),
        }
    }

    const TEXT: &str = "hooks:\n  pre-tool-use:\n    - oracle: Rules\n      id: \"ünïcode\"\n      config: {rules: [{condition: \"a ~ 'b'\", intensity: block}], n: -170141183460469231731687303715884105728, f: 2.5, t: true, z: ~, e: []}\n";

    #[test]
    fn a_cached_tree_is_the_parsed_tree() {
        let dir = tempfile::tempdir().unwrap();
        let parsed = yaml::parse(source(TEXT)).unwrap();
        let first = parse(Some(dir.path()), source(TEXT)).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let cached = parse(Some(dir.path()), source(TEXT)).unwrap();
        assert_eq!(show(&first), show(&parsed));
        assert_eq!(show(&cached), show(&parsed));
        assert!(
            show(&cached).contains("4:7\"id\"=4:11Str(\"ünïcode\")"),
            "{}",
            show(&cached)
        );
    }

    #[test]
    fn an_edited_file_is_parsed_again_and_the_entry_replaced() {
        let dir = tempfile::tempdir().unwrap();
        parse(Some(dir.path()), source("a: 1\n")).unwrap();
        let edited = parse(Some(dir.path()), source("a: 2\n")).unwrap();
        assert_eq!(show(&edited), "1:1{1:1\"a\"=1:4Int(2)}");
        // Still one entry for the one file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn errors_come_from_the_parser_and_are_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let e = parse(Some(dir.path()), source("a: [1\n")).unwrap_err();
        assert!(e.message.starts_with("invalid YAML"), "{e}");
        assert!(!dir.path().exists() || std::fs::read_dir(dir.path()).unwrap().count() == 0);
    }

    /// Caches TEXT in `dir`; the entry's path and bytes.
    fn cached_entry(dir: &Path) -> (PathBuf, Vec<u8>) {
        parse(Some(dir), source(TEXT)).unwrap();
        let entry = std::fs::read_dir(dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let bytes = std::fs::read(&entry).unwrap();
        (entry, bytes)
    }

    #[test]
    fn a_damaged_entry_is_ignored_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let want = show(&yaml::parse(source(TEXT)).unwrap());
        let (entry, good) = cached_entry(dir.path());
        // Every truncation and every changed byte is refused.
        let digest: [u8; 32] = Sha256::digest(TEXT.as_bytes()).into();
        let file = source(TEXT);
        for cut in 0..good.len() {
            assert!(
                decode(&good[..cut], build_id().unwrap(), &digest, &file).is_none(),
                "cut at {cut}"
            );
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                assert!(
                    decode(&bad, build_id().unwrap(), &digest, &file).is_none(),
                    "byte {i} ^ {flip:#x}"
                );
            }
        }
        assert!(decode(&good, build_id().unwrap(), &digest, &file).is_some());
        std::fs::write(&entry, &good[..good.len() / 2]).unwrap();
        assert_eq!(show(&parse(Some(dir.path()), source(TEXT)).unwrap()), want);
        assert_eq!(std::fs::read(&entry).unwrap(), good, "rewritten");
    }

    #[test]
    fn entries_of_another_build_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let (_, good) = cached_entry(dir.path());
        let digest: [u8; 32] = Sha256::digest(TEXT.as_bytes()).into();
        assert!(decode(&good, build_id().unwrap(), &digest, &source(TEXT)).is_some());
        assert!(decode(&good, b"0.1.0 1 2.000000000", &digest, &source(TEXT)).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_others_can_write_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let n = parse(Some(&shared), source("a: 1\n")).unwrap();
        assert_eq!(show(&n), "1:1{1:1\"a\"=1:4Int(1)}");
        assert_eq!(
            std::fs::read_dir(&shared).unwrap().count(),
            0,
            "nothing written"
        );
        // A new directory is made private.
        let fresh = dir.path().join("new/parsed");
        parse(Some(&fresh), source("a: 1\n")).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{mode:o}");
        assert_eq!(std::fs::read_dir(&fresh).unwrap().count(), 1);
    }

    #[test]
    fn an_unwritable_cache_does_not_fail_the_load() {
        let dir = tempfile::tempdir().unwrap();
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "not a directory").unwrap();
        let n = parse(Some(&blocked.join("parsed")), source("a: 1\n")).unwrap();
        assert_eq!(show(&n), "1:1{1:1\"a\"=1:4Int(1)}");
    }
}

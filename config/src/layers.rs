//! Where the policy's layers are (`~/.ahp/hooks.yaml`,
//! `<project>/.ahp/hooks.yaml`, `<project>/.ahp/hooks.local.yaml`), which
//! directory is the project, and how one layer file is read.

use crate::source::{ConfigError, Layer, SourceFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The environment variable that switches `fail_closed` on, like
/// `settings.fail_closed: true` in the user layer (for machines whose
/// policy files are not the user's to edit, and for CI).
pub const FAIL_CLOSED_ENV: &str = "AHP_FAIL_CLOSED";

/// Whether `AHP_FAIL_CLOSED` asks to fail closed. Any value but empty,
/// `0` and `false` does: a variable set to something unexpected was still
/// set on purpose.
pub fn fail_closed_env() -> bool {
    match std::env::var_os(FAIL_CLOSED_ENV) {
        None => false,
        Some(v) => {
            let v = v.to_string_lossy();
            let v = v.trim();
            !(v.is_empty() || v == "0" || v.eq_ignore_ascii_case("false"))
        }
    }
}

/// Where to look for the layers.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The user's home (`~/.ahp/hooks.yaml`); no user layer when `None`.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, for user HOOK.md hooks (`~/.config` when `None`).
    pub xdg_config_home: Option<PathBuf>,
    /// The project root.
    pub project_root: PathBuf,
    /// `AHP_FAIL_CLOSED` is set: `fail_closed` is on whatever the layers
    /// say (see [`crate::fail_closed`]).
    pub fail_closed_env: bool,
    /// The managed (organisation) policy file, when there is one to look
    /// for: [`MANAGED_CONFIG_ENV`], else [`MANAGED_CONFIG_PATH`].
    pub managed: Option<PathBuf>,
    /// The agents' own tool names: `Bash` → `shell` when some agent's
    /// `Bash` is ahp's `shell`. With it, the loader tells that `when:
    /// {tool.name: Bash}` never holds (`tool.name` is the shared name);
    /// without it (a library caller that knows no agents), it cannot.
    pub shared_tool_name: Option<SharedToolName>,
}

pub use ahp_engine::context_shape::SharedToolName;

/// Names the managed policy file instead of [`MANAGED_CONFIG_PATH`]
/// (empty: none).
pub const MANAGED_CONFIG_ENV: &str = "AHP_MANAGED_CONFIG";

/// Where an organisation installs its managed policy.
pub const MANAGED_CONFIG_PATH: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ahp/hooks.yaml"
} else {
    "/etc/ahp/hooks.yaml"
};

/// The managed policy file (see [`LoadOptions::managed`]): the system file
/// when it is there (whatever the environment says: an agent's hook
/// environment must not be able to switch the organisation's policy off),
/// else [`MANAGED_CONFIG_ENV`].
pub fn managed_from_env() -> Option<PathBuf> {
    let system = PathBuf::from(MANAGED_CONFIG_PATH);
    if std::fs::symlink_metadata(&system).is_ok() {
        return Some(system);
    }
    match std::env::var_os(MANAGED_CONFIG_ENV) {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => Some(PathBuf::from(MANAGED_CONFIG_PATH)),
    }
}

/// The project `start` is in: inside a git repository, the nearest
/// ancestor (itself included) with a policy file in `.ahp/`, else the
/// repository's root.
///
/// Outside a repository, the nearest `.ahp/` of any kind marks it.
///
/// A folder of a repository with an `.ahp/` but no policy in it (a
/// committed `src/.ahp/.gitkeep`) is no project of its own: it would have
/// made `src` the root whenever the agent worked there, and the root's
/// layers (the user's `hooks.local.yaml`, the trusted policy) silently
/// stop applying.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(dir.path().join(".git")).unwrap();
/// std::fs::create_dir_all(dir.path().join("src/deep/.ahp")).unwrap();
/// let root = ahp_config::find_project_root(&dir.path().join("src/deep"));
/// assert_eq!(root.as_deref(), Some(dir.path()));
/// std::fs::write(dir.path().join("src/deep/.ahp/hooks.yaml"), "hooks: {}\n").unwrap();
/// let root = ahp_config::find_project_root(&dir.path().join("src/deep"));
/// assert_eq!(root.as_deref(), Some(dir.path().join("src/deep").as_path()));
/// ```
pub fn find_project_root(start: &Path) -> Option<PathBuf> {
    let policy = |d: &Path| {
        [crate::trust::POLICY_FILE, crate::trust::LOCAL_POLICY_FILE]
            .iter()
            .any(|f| d.join(f).symlink_metadata().is_ok())
    };
    match start.ancestors().find(|d| d.join(".git").exists()) {
        // Inside a repository: its root, or a folder in it with a policy
        // of its own (a monorepo's package).
        Some(repository) => start
            .ancestors()
            .take_while(|d| *d != repository)
            .find(|d| policy(d))
            .unwrap_or(repository),
        // Outside one, any `.ahp/` marks a project (one kept for its log).
        None => start.ancestors().find(|d| d.join(".ahp").is_dir())?,
    }
    .to_path_buf()
    .into()
}

/// The repository around `project_root` when the project is a folder in
/// it with a policy of its own, and the repository's root has your
/// git-ignored `.ahp/hooks.local.yaml`, which then does not apply: said,
/// since a repository can commit such a folder.
pub(crate) fn shadowed_local_layer(project_root: &Path) -> Option<PathBuf> {
    if project_root.join(".git").exists() {
        return None;
    }
    let repository = project_root
        .ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists())?;
    let local = repository.join(crate::trust::LOCAL_POLICY_FILE);
    local.is_file().then_some(local)
}

impl LoadOptions {
    /// HOME from the environment; the project is `project` when given, else
    /// the nearest ancestor of the current directory with `.git/` or a policy
    /// file in `.ahp/` (see [`find_project_root`]),
    /// else the current directory.
    pub fn from_env(project: Option<PathBuf>) -> std::io::Result<LoadOptions> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME");
        let xdg_config_home = var("XDG_CONFIG_HOME");
        let project_root = match project {
            // A relative root (`--project .`, an agent's `"cwd": "."`) would
            // make every path derived from it relative, and HOOK.md hooks
            // need an absolute directory to run in.
            Some(p) => std::path::absolute(&p)?,
            None => {
                let cwd = std::env::current_dir()?;
                find_project_root(&cwd).unwrap_or(cwd)
            }
        };
        Ok(LoadOptions {
            home,
            xdg_config_home,
            project_root,
            fail_closed_env: fail_closed_env(),
            managed: managed_from_env(),
            shared_tool_name: None,
        })
    }

    /// Options for `home` and `project_root`, no XDG override.
    pub fn new(home: Option<PathBuf>, project_root: PathBuf) -> LoadOptions {
        LoadOptions {
            home,
            xdg_config_home: None,
            project_root,
            fail_closed_env: false,
            managed: None,
            shared_tool_name: None,
        }
    }

    /// The user HOOK.md directory, if HOME or XDG_CONFIG_HOME is known.
    pub fn user_hooks_dir(&self) -> Option<PathBuf> {
        crate::hookmd::user_hooks_dir(self.xdg_config_home.as_deref(), self.home.as_deref())
    }

    /// The files of each layer, in order (whether or not they exist).
    pub fn layer_paths(&self) -> Vec<(Layer, PathBuf)> {
        let mut v = Vec::new();
        if let Some(m) = &self.managed {
            v.push((Layer::Managed, m.clone()));
        }
        if let Some(home) = &self.home {
            v.push((Layer::User, home.join(".ahp").join("hooks.yaml")));
        }
        let dir = self.project_root.join(".ahp");
        v.push((Layer::Project, dir.join("hooks.yaml")));
        v.push((Layer::Local, dir.join("hooks.local.yaml")));
        v
    }
}

pub(crate) fn read_layer(
    layer: Layer,
    path: &Path,
    opts: &LoadOptions,
) -> Result<Option<Arc<SourceFile>>, ConfigError> {
    if layer == Layer::Managed && path != Path::new(MANAGED_CONFIG_PATH) {
        check_managed_path(path, &opts.project_root, opts.home.as_deref())?;
    }
    // A repository's policy files are read only as the regular files that
    // `ahp trust` hashes, never through a link to bytes it does not see.
    if matches!(layer, Layer::Project | Layer::Local)
        && let Some(root) = path.parent().and_then(Path::parent)
    {
        let rel = match layer {
            Layer::Local => crate::trust::LOCAL_POLICY_FILE,
            _ => crate::trust::POLICY_FILE,
        };
        crate::trust::check_policy_path(root, rel)
            .map_err(|e| ConfigError::in_file(path, e.to_string()))?;
    }
    // A managed or user path that is a link to nothing was put there (a
    // dotfiles folder moved away): that policy is missing, not absent.
    if matches!(layer, Layer::Managed | Layer::User)
        && std::fs::metadata(path).is_err()
        && std::fs::symlink_metadata(path).is_ok()
    {
        return Err(ConfigError::in_file(
            path,
            format!("the {layer} policy is a link to a file that does not exist"),
        ));
    }
    read_policy_file(layer, path)
}

/// The managed layer is final and runs its commands without `ahp trust`,
/// so the file [`MANAGED_CONFIG_ENV`] names must be the organisation's,
/// not the repository's: an absolute path (a relative one resolves
/// against whatever folder the agent runs in), outside the project (an
/// agent's project settings can set the variable, and a path such as
/// `/proc/self/cwd/…` is absolute too). The project is ahp's project root
/// and the git work tree around it (a monorepo's package has a root of its
/// own), unless that is the home folder or `/`, which hold everything.
fn check_managed_path(
    path: &Path,
    project_root: &Path,
    home: Option<&Path>,
) -> Result<(), ConfigError> {
    let refuse = |why: &str| {
        Err(ConfigError::in_file(
            path,
            format!(
                "{why}; the managed policy is the organisation's, final over every other layer, \
                 so {MANAGED_CONFIG_ENV} must name an absolute path outside the project \
                 (or be empty for none)"
            ),
        ))
    };
    if !path.is_absolute() {
        return refuse("a relative path names a file in whatever folder the agent runs in");
    }
    let resolve = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // The nearest folder that exists, for a file that does not (yet).
    let file = resolve(path.ancestors().find(|a| a.exists()).unwrap_or(path));
    let root = resolve(project_root);
    let repository = root.ancestors().find(|d| d.join(".git").exists());
    let everything = |d: &Path| d.parent().is_none() || home.is_some_and(|h| resolve(h) == d);
    let inside = [Some(root.as_path()), repository]
        .into_iter()
        .flatten()
        .any(|d| !everything(d) && file.starts_with(d));
    if inside {
        return refuse("this file is inside the project");
    }
    Ok(())
}

/// Reads a policy file as the loader reads a layer, `None` when there is
/// none: only a regular file (a FIFO would block the read, and so every
/// hook call, forever), never past [`crate::yaml::MAX_FILE_BYTES`], and
/// UTF-8 text.
///
/// ```
/// use ahp_config::{Layer, layers::read_policy_file};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("policy.yaml");
/// assert!(read_policy_file(Layer::Project, &path).unwrap().is_none());
/// std::fs::write(&path, "hooks: {}\n").unwrap();
/// assert_eq!(read_policy_file(Layer::Project, &path).unwrap().unwrap().text, "hooks: {}\n");
/// let err = read_policy_file(Layer::Project, dir.path()).unwrap_err();
/// assert!(err.to_string().contains("not a regular file"), "{err}");
/// ```
pub fn read_policy_file(layer: Layer, path: &Path) -> Result<Option<Arc<SourceFile>>, ConfigError> {
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(ConfigError::in_file(
            path,
            "not a regular file; a policy file must be a plain YAML file",
        ));
    }
    match read_at_most(path, crate::yaml::MAX_FILE_BYTES) {
        Ok(None) => Err(ConfigError::in_file(
            path,
            format!(
                "file holds more than {} bytes, the limit for a hooks file",
                crate::yaml::MAX_FILE_BYTES
            ),
        )),
        Ok(Some(bytes)) => {
            let text = String::from_utf8(bytes).map_err(|e| {
                ConfigError::in_file(
                    path,
                    format!(
                        "not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                )
            })?;
            Ok(Some(Arc::new(SourceFile {
                layer,
                path: path.to_path_buf(),
                text,
            })))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::in_file(path, format!("cannot read: {e}"))),
    }
}

/// The file's bytes, or `None` when it holds more than `limit`: a
/// repository's 10 GB hooks.yaml is refused after `limit` bytes, not read
/// into memory first (the file can grow between a size check and the read,
/// so the read itself stops).
fn read_at_most(path: &Path, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok((bytes.len() <= limit).then_some(bytes))
}

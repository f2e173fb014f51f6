//! How a path glob is read, for every list and every command: one
//! constructor, so that PathGuard's lists, the sensitive paths and the
//! shell rules agree on what `*`, `\x` and case mean.

use globset::GlobBuilder;

/// macOS file systems ignore case: `~/.SSH/ID_RSA` is the key.
pub(crate) const IGNORE_CASE: bool = cfg!(target_os = "macos");

/// A path glob as every list and every command's glob is read: `*` stops
/// at `/`, `\x` is `x`, and case counts where the file system's does.
pub(crate) fn path_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(IGNORE_CASE)
        .build()
}

/// `text` as literals are kept: lower case where paths ignore case.
pub(crate) fn fold_case(text: &str) -> std::borrow::Cow<'_, str> {
    if IGNORE_CASE {
        std::borrow::Cow::Owned(text.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A git pathspec's wildcard as git reads it: `*` also crosses `/` and
/// matches a leading dot, and `:(icase)` ignores case.
pub(crate) fn pathspec_glob(pattern: &str, icase: bool) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .case_insensitive(icase || IGNORE_CASE)
        .build()
}

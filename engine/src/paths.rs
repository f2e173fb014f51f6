//! The one place that names where ahp keeps a project's files: the `.ahp`
//! directory and the signal log in it (with its numbered rotations).

/// The project directory ahp keeps its files in.
pub const AHP_DIR: &str = ".ahp";

/// The signal log's file name inside [`AHP_DIR`].
pub const LOG_FILE: &str = "signals.jsonl";

/// The signal log, relative to the project root.
pub const DEFAULT_LOG: &str = ".ahp/signals.jsonl";

/// Whether `name` is the signal log's file name or one of its rotations
/// (`signals.jsonl.1`, `signals.jsonl.2`, …), exactly.
///
/// ```
/// use ahp_engine::paths::is_log_file_name;
/// assert!(is_log_file_name("signals.jsonl"));
/// assert!(is_log_file_name("signals.jsonl.3"));
/// assert!(is_log_file_name("signals.jsonl.12.gz"));
/// assert!(!is_log_file_name("signals.jsonl.sh"));
/// assert!(!is_log_file_name("signals.jsonl.x.gz"));
/// assert!(!is_log_file_name("signals.jsonl."));
/// ```
pub fn is_log_file_name(name: &str) -> bool {
    name == LOG_FILE
        || name
            .strip_prefix(LOG_FILE)
            .and_then(|rest| rest.strip_prefix('.'))
            .map(|rest| rest.strip_suffix(".gz").unwrap_or(rest))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_log_is_the_log_file_in_the_ahp_dir() {
        assert_eq!(
            super::DEFAULT_LOG,
            format!("{}/{}", super::AHP_DIR, super::LOG_FILE)
        );
    }
}

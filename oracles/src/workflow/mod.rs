//! The oracles of the issue workflow (`issue start / submit / close`):
//! they read the issue file ([`issue`]), the repository ([`git`]), test
//! and coverage reports, linters and dependency manifests, and the signal
//! log. Their checks may run commands and take seconds.
//!
//! * [`ChecklistValidator`](checklist::ChecklistValidator),
//!   [`CompletionVerifier`](completion::CompletionVerifier),
//!   [`FileChangeLimiter`](file_limit::FileChangeLimiter),
//!   [`CommitMessageValidator`](commit_msg::CommitMessageValidator): is the
//!   work ready to go on;
//! * [`TestGate`](test_gate::TestGate), [`LintChecker`](lint::LintChecker),
//!   [`DependencyChecker`](deps::DependencyChecker): tests, coverage,
//!   linters and manifests;
//! * [`ContextLoader`](context_loader::ContextLoader),
//!   [`ReviewTrigger`](review::ReviewTrigger),
//!   [`RetrospectiveGenerator`](retrospective::RetrospectiveGenerator):
//!   context at start, reviewers at submit, metrics at close.

pub mod checklist;
pub mod commit_msg;
pub mod completion;
pub mod context_loader;
pub mod deps;
pub mod file_limit;
pub mod git;
pub mod issue;
pub mod lint;
pub mod retrospective;
pub mod review;
pub mod test_gate;

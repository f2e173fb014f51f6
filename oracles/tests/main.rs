//! The integration tests of this crate, one binary with a module per
//! area (fewer links than a binary per file).

mod checklist;
mod commit_msg;
mod completion;
mod context_loader;
mod deps;
mod file_limit;
mod git;
mod gitrepo;
mod issue;
mod lint;
mod permission;
mod review;
mod rules;
mod script;
mod test_gate;

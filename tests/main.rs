//! The integration tests of this crate, one binary with a module per
//! area (fewer links than a binary per file).

mod agents;
mod attack_corpus;
mod change_logger;
mod changed_files;
mod cli_config;
mod cli_run;
mod cli_signals;
mod commit_message;
mod common;
mod context_paths;
mod context_shape_fixtures;
mod custom_oracle;
mod dispatch;
mod escalation;
mod hostile;
mod install;
mod issue_commands;
mod issue_workflow;
mod layers;
mod managed_layer;
mod policy_tests;
mod readme;
mod retrospective;
mod schema;
mod script_hooks;
mod secrets_in_log;
mod security;
mod security_corpus;
mod seed_config;
mod shadow_mode;
mod ship;
mod starter_policy;
mod static_checks;
mod templates_and_sections;
mod untrusted_repo;

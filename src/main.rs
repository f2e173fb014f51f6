//! The `ahp` binary: the CLI over the built-in oracles.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ahp::run_cli(ahp::default_registry())
}

//! The `ahp` binary: the CLI over the built-in oracles.

fn main() -> std::process::ExitCode {
    ahp::cli::main_with(ahp::default_registry())
}

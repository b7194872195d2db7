//! The `guild` command as a library: its subcommands (`cli/`), the MCP server behind
//! `guild serve` (`mcp/`, `serve/`) and the demo's local stand-in services (`demo/`, shared with
//! the integration tests). `main.rs` only calls [`run`]; keeping every module here means their
//! unit tests are built and run by `cargo test -p guild-cli --lib`, and clippy sees them.

mod cli;
pub mod demo;

/// Runs the `guild` command with these arguments (the first is the program name, as in
/// [`std::env::args_os`]) and returns the exit code the command chose. Like any clap program,
/// it exits the process itself on `--help`, `--version` and arguments it cannot parse.
pub fn run<I, T>(args: I) -> std::process::ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    cli::main(args)
}

//! The `guild` command: a thin adapter over the `guild_host` library.

mod cli;
mod mcp;
mod serve;

fn main() -> std::process::ExitCode {
    cli::main()
}

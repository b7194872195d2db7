//! The `guild` command: a thin adapter over the `guild_host` library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

//! The `guild` command: hands the process's arguments to the `guild_cli` library, where the
//! command lives. This target declares no modules of its own, so it needs no test harness: the
//! command's unit tests compile and run with the library's (`cargo test -p guild-cli --lib`).

fn main() -> std::process::ExitCode {
    guild_cli::run(std::env::args_os())
}

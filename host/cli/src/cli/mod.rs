//! Command-line adapter. Parses arguments, sets up logging, and calls the library; it holds no
//! logic of its own beyond presentation.
//!
//! Output rules every command follows: stdout carries the result only (use [`outln!`] and
//! [`print_json`], never `println!`, so a closed stdout is an error, not a panic); guest text
//! is escaped before it reaches the terminal (`guild_host::text`); diagnostics go to stderr.

/// `println!` that returns the write error instead of panicking: `guild receipts | head -1`
/// closes stdout early, and [`main`] ends quietly on that.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` that returns the write error instead of panicking (see [`outln!`]).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod batch;
mod build;
mod bundle;
mod demo;
mod dev;
mod keys;
pub(crate) mod memory;
mod new;
mod plugins;
mod receipts;
mod reload;
#[cfg(unix)]
mod rlimit;
mod skills;
mod stale;
mod task;
mod tasks;
mod tree;

pub(crate) use guild_serve::render;
pub(crate) use guild_serve::start::finish_calls;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use guild_host::{Config, Host};

/// Guild: a WebAssembly plugin host for AI-agent specialists and skills.
#[derive(Parser)]
#[command(name = "guild", version, about)]
struct Cli {
    /// The operator's configuration file.
    #[arg(
        long,
        short,
        global = true,
        default_value = "guild.toml",
        env = "GUILD_CONFIG"
    )]
    config: PathBuf,
    /// Machine-readable output.
    #[arg(long, global = true)]
    json: bool,
    /// More log output on stderr (-v info, -vv debug). `GUILD_LOG` takes a tracing filter.
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the end-to-end demo against a local tracker stand-in.
    Demo(demo::DemoArgs),
    /// Run one task on a specialist.
    #[command(after_help = task::EXIT_CODES)]
    Task(task::TaskArgs),
    /// Run a batch of tasks from a JSON file; the exit code is the worst task's.
    #[command(after_help = task::EXIT_CODES)]
    Batch(batch::BatchArgs),
    /// Background tasks.
    #[command(subcommand)]
    Tasks(tasks::TasksCommand),
    /// Inspect, read and check skills.
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// The receipts ledger.
    Receipts(receipts::ReceiptsArgs),
    /// Inspect and check plugins.
    #[command(subcommand)]
    Plugins(plugins::PluginsCommand),
    /// Team and private memory: show, update, history, restore.
    #[command(after_help = memory::EXIT_CODES)]
    Memory(memory::MemoryArgs),
    /// Compiles one component from stdin into the compile cache: the host runs this in a child
    /// process, under its compile time and memory limits.
    #[command(name = guild_host::COMPILE_COMMAND, hide = true)]
    CompileComponent(CompileArgs),
    /// Signed plugin bundles: pack, sign, verify, inspect, install.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// The team's trusted signing keys ([trust] in guild.toml).
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Run a long-lived host that agents reach over MCP (stdio, or streamable HTTP with --http).
    Serve(guild_serve::ServeArgs),
    /// Scaffold a plugin folder: source, plugin.toml, build.sh, a test and the WIT.
    New(new::NewArgs),
    /// Build a plugin folder (its build.sh) and check the component loads as its kind.
    Build(build::BuildArgs),
    /// Build, load and run one plugin folder, then rebuild and rerun on every change.
    Dev(dev::DevArgs),
    /// Ask the running `guild serve` of this data dir to reload its plugins and guild.toml.
    Reload,
}

#[derive(clap::Args)]
struct CompileArgs {
    #[arg(long)]
    cache_dir: PathBuf,
    #[arg(long)]
    max_memory_mb: u32,
    #[arg(long)]
    limit_memory_mb: u32,
    /// Compile with the baseline compiler (Winch) instead of Cranelift.
    #[arg(long)]
    baseline: bool,
    /// A background compile: run at a lower priority.
    #[arg(long)]
    background: bool,
}

/// The compile helper's side of [`guild_host::CompileHelper`]; exit code 2 means the component
/// was refused, the message is on stderr.
fn compile_component(args: &CompileArgs) -> ExitCode {
    match guild_host::compile_command(
        args.cache_dir.clone(),
        args.max_memory_mb,
        args.limit_memory_mb,
        match args.baseline {
            true => guild_host::Compiler::Baseline,
            false => guild_host::Compiler::Optimizing,
        },
        args.background,
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The parent wraps a refusal in its own words: hand it the bare reason.
            let message = match &e {
                guild_host::CompileError::Invalid(reason) => reason.clone(),
                other => other.to_string(),
            };
            eprintln!("error: {}", guild_host::text::for_terminal(&message));
            match e {
                guild_host::CompileError::Invalid(_)
                | guild_host::CompileError::NotAComponent(_) => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// Parses `args` (the program name first) and runs the command they name.
pub(crate) fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    init_logging(cli.verbose);
    #[cfg(unix)]
    rlimit::raise_open_file_limit();
    if let Command::CompileComponent(args) = &cli.command {
        return compile_component(args);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let one_shot_task = matches!(cli.command, Command::Task(_) | Command::Batch(_));
    let outcome = runtime.block_on(run(cli));
    // After a one-shot task, what still runs is background work nobody waits for (a plugin the
    // task did not use still compiling, an optimized compile): the process does not wait for
    // it. A compile in the helper process finishes on its own and leaves its cache entry for
    // the next start. Other commands wait for their blocking work as before.
    if one_shot_task {
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    } else {
        drop(runtime);
    }
    match outcome {
        Ok(code) => code,
        // Whoever reads stdout has seen enough (`| head`): nothing left to say.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let message = format!("{e:#}");
            eprintln!("error: {}", guild_host::text::for_terminal(&message));
            ExitCode::FAILURE
        }
    }
}

/// Whether `e` is a write to a stdout whose reader has gone.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `value` as pretty JSON on stdout, with characters a terminal would act on escaped.
pub(crate) fn print_json<T: serde::Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    outln!("{}", guild_host::text::json_safe(&text))?;
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Demo(args) => demo::run(args, cli.json).await,
        Command::Task(args) => task::run(&cli.config, args, cli.json).await,
        Command::Batch(args) => batch::run(&cli.config, args, cli.json).await,
        Command::Tasks(cmd) => tasks::run(&cli.config, cmd, cli.json).await,
        Command::Skills(cmd) => skills::run(&cli.config, cmd, cli.json).await,
        Command::Receipts(args) => receipts::run(&cli.config, args, cli.json).await,
        Command::Plugins(cmd) => plugins::run(&cli.config, cmd, cli.json).await,
        Command::Memory(args) => memory::run(&cli.config, args, cli.json).await,
        Command::CompileComponent(args) => Ok(compile_component(&args)),
        Command::Bundle(cmd) => bundle::run(&cli.config, cmd, cli.json).await,
        Command::Keys(cmd) => keys::run(&cli.config, cmd, cli.json).await,
        Command::Serve(args) => guild_serve::run(&cli.config, args, compile_helper()).await,
        Command::New(args) => new::run(args, cli.json),
        Command::Build(args) => build::run(&cli.config, args, cli.json).await,
        Command::Dev(args) => dev::run(&cli.config, args).await,
        Command::Reload => reload::run(&cli.config, cli.json).await,
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("GUILD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person: a script reading stderr gets plain lines.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    // `try_init`: a second command run in the same process (tests call `run` more than once)
    // keeps the first subscriber instead of panicking.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Loads the config file and starts a host, with a spinner while plugins compile.
pub(crate) async fn start_host(config_path: &std::path::Path) -> anyhow::Result<Host> {
    let config = Config::load(config_path).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config_path.display()
        )
    })?;
    start_host_with(config).await
}

/// Loads the config file and starts a host lazily, as a one-shot task does: plugins not in
/// the compile cache compile in the background, and a task waits only for those it uses
/// ([`guild_serve::start::start_host_lazily`]).
pub(crate) async fn start_host_lazily(config_path: &std::path::Path) -> anyhow::Result<Host> {
    let config = Config::load(config_path).with_context(|| {
        format!(
            "failed to load {} (pass --config or set GUILD_CONFIG)",
            config_path.display()
        )
    })?;
    guild_serve::start::start_host_lazily(config, compile_helper()).await
}

/// Starts a host for a parsed config as every command does: components compile in a child
/// process of this binary ([`compile_helper`]).
pub(crate) async fn start_host_with(config: Config) -> anyhow::Result<Host> {
    guild_serve::start::start_host_with(config, compile_helper()).await
}

/// This executable, which answers the compile command; none in a unit test, whose executable is
/// the test harness.
pub(crate) fn compile_helper() -> Option<std::path::PathBuf> {
    if cfg!(test) {
        None
    } else {
        std::env::current_exe().ok()
    }
}

//! Command-line adapter. Parses arguments, sets up logging, and calls the library; it holds no
//! logic of its own beyond presentation.

mod batch;
mod demo;
mod plugins;
mod receipts;
mod render;
mod skills;
mod task;
mod tasks;

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
    Task(task::TaskArgs),
    /// Run a batch of tasks from a JSON file.
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
}

pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
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
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
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
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
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

/// Starts a host for a parsed config, reporting plugins that failed to load.
pub(crate) async fn start_host_with(config: Config) -> anyhow::Result<Host> {
    let spinner =
        render::spinner("loading plugins (first load compiles them; later loads use the cache)");
    let host = Host::new(config).await?;
    spinner.finish_and_clear();
    for error in host.load_errors() {
        eprintln!("warning: {error}");
    }
    Ok(host)
}

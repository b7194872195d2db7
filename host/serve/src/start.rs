//! Starting and stopping a host as the `guild` binary does, shared by every command and by
//! `guild serve`: the compile helper is this executable, plugins that fail to load are warned
//! about, a server opens its host first and loads the plugins behind it ([`open_host_with`]),
//! mutating calls that outlived their task finish before the process exits, and
//! `--workspace`/`--user` name the memory owners.

use guild_host::{Config, GuildEngine, Host, HostError};

use crate::render;

/// The engine a host of `config` compiles with, components compiled in `compile_helper` when
/// given ([`use_compile_helper`]).
fn engine_for(
    config: &mut Config,
    compile_helper: Option<std::path::PathBuf>,
) -> anyhow::Result<GuildEngine> {
    use_compile_helper(config, compile_helper);
    Ok(GuildEngine::new(guild_host::engine_options(config)).map_err(HostError::Engine)?)
}

/// Starts a host for a parsed config, reporting plugins that failed to load; components compile
/// in `compile_helper` ([`use_compile_helper`]).
pub async fn start_host_with(
    mut config: Config,
    compile_helper: Option<std::path::PathBuf>,
) -> anyhow::Result<Host> {
    let engine = engine_for(&mut config, compile_helper)?;
    start_host_on(config, engine).await
}

/// Opens a host for a parsed config without loading its plugins ([`Host::open`]): a server
/// answers its clients while [`Host::load_plugins`] runs in the background.
pub async fn open_host_with(
    mut config: Config,
    compile_helper: Option<std::path::PathBuf>,
) -> anyhow::Result<Host> {
    let engine = engine_for(&mut config, compile_helper)?;
    Ok(Host::open(config, engine).await?)
}

/// Starts a host for a parsed config lazily ([`Host::load_plugins_lazily`]), as a one-shot
/// task does: it returns once the plugins whose code is cached are loaded; the others compile
/// in the background, and a task waits only for the plugins it uses.
pub async fn start_host_lazily(
    mut config: Config,
    compile_helper: Option<std::path::PathBuf>,
) -> anyhow::Result<Host> {
    let engine = engine_for(&mut config, compile_helper)?;
    let host = Host::open(config, engine).await?;
    let spinner = render::spinner("loading plugins (those not in the compile cache compile next)");
    let report = host.load_plugins_lazily().await;
    spinner.finish_and_clear();
    warn_load_problems(&host);
    if !report.queued.is_empty() {
        eprintln!(
            "compiling {} in the background (a first start; later starts use the cache)",
            report.queued.join(", ")
        );
    }
    Ok(host)
}

/// Prints the plugins that failed to load, and the problems that did not stop one, as
/// warnings on stderr.
pub fn warn_load_problems(host: &Host) {
    for line in host.load_errors().into_iter().chain(host.load_warnings()) {
        eprintln!("warning: {}", guild_host::text::for_terminal(&line));
    }
}

/// Components compile in a child process of `compile_helper` (the `guild` binary, under the
/// compile limits); `None` keeps what the config says (a unit test's executable, the test
/// harness, has no compile command).
pub fn use_compile_helper(config: &mut Config, compile_helper: Option<std::path::PathBuf>) {
    if compile_helper.is_some() {
        config.host.compile_helper = compile_helper;
    }
}

/// Starts a host for a parsed config on `engine` (e.g. one whose compile cache is another
/// configuration's, as `guild dev` uses), reporting plugins that failed to load.
pub async fn start_host_on(config: Config, engine: GuildEngine) -> anyhow::Result<Host> {
    let spinner =
        render::spinner("loading plugins (first load compiles them; later loads use the cache)");
    let host = Host::with_engine(config, engine).await?;
    spinner.finish_and_clear();
    warn_load_problems(&host);
    Ok(host)
}

/// Waits, before this command exits, for the mutating calls that outlived their task (a task
/// that timed out leaves its call running) to record their outcome: the same wait `guild serve`
/// makes when it drains ([`Host::finish_calls`]).
pub async fn finish_calls(host: &Host) {
    let running = host.calls_running();
    if running > 0 {
        eprintln!(
            "waiting for {running} mutating call(s) still running to record their outcome \
             (each ends by its [limits] timeout_s)"
        );
    }
    host.finish_calls().await;
}

/// Applies `--workspace` / `--user` over `[memory]` in guild.toml (also used by `guild serve`).
pub fn name_owners(
    config: &mut Config,
    workspace: Option<String>,
    user: Option<String>,
) -> anyhow::Result<()> {
    for (flag, value, slot) in [
        ("--workspace", workspace, &mut config.memory.workspace),
        ("--user", user, &mut config.memory.user),
    ] {
        if let Some(name) = value {
            guild_host::memory::validate_owner_name(&name)
                .map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
            *slot = Some(name);
        }
    }
    Ok(())
}

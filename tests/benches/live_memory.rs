//! Memory per live task: what one more sleeping task (a specialist instance parked in a host
//! call) adds to the host process's resident memory (docs/performance.md, "Memory per live
//! task").
//!
//! Run: `cargo bench -p guild-tests --bench live_memory` (`GUILD_BENCH_TASKS=LOW,HIGH` sets the
//! two task counts, default 100,400).
//!
//! The host starts LOW `probe` tasks that sleep in the guest, samples the process's RSS and
//! PSS (`/proc/self/smaps_rollup`) while all of them sleep and keeps the peaks; then the same
//! with HIGH. The figure is the slope, (peak(HIGH) − peak(LOW)) / (HIGH − LOW): the host's
//! fixed memory (engine, compiled components, the runtime, the first pool slots) cancels out,
//! and what remains is per task: its instance's touched linear memory, its async stack, tables,
//! the store and the host's per-task state. The bench's allocator counts the bytes live on the
//! heap, so the host's share (wasmtime's instance state, the store, the WASI context, the
//! task's futures and records) shows without the allocator's slack. No time or size is
//! asserted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use guild_host::{Config, Host};
use guild_tests::plugin_dir;
use serde_json::json;

/// The system allocator, counting the bytes live on the heap: the host's own share of a
/// task (store, WASI context, resource table, futures, records) without the allocator's slack.
struct Counting;

static HEAP_LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the counter only adds.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            HEAP_LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        HEAP_LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            HEAP_LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How long each task sleeps in the guest: long enough for every task of a round to be
/// started and sampled while the others still sleep.
const SLEEP_MS: u64 = 4_000;

/// Without the baseline tier, every task of both rounds runs the same (Cranelift) code.
fn config(dir: &std::path::Path, tasks: usize) -> Config {
    let probe = format!("{:?}", plugin_dir("testing/probe").display().to_string());
    let text = format!(
        "[host]\nplugins = [{probe}]\ndata_dir = \"data\"\nbaseline_tier = false\n\n[dispatch]\n\
         max_running_tasks = {tasks}\nmax_queued_tasks = {tasks}\n"
    );
    Config::parse(&text, &dir.join("guild.toml"), dir).expect("bench config")
}

/// Memory of this process, KiB: resident (`Rss`) and proportional (`Pss`: a page shared by k
/// mappings counts 1/k in each, as the read-only pages of a component's data image that every
/// instance maps are).
#[derive(Clone, Copy, Default)]
struct Mem {
    rss: u64,
    pss: u64,
    /// Bytes live on the heap ([`Counting`]), KiB.
    heap: u64,
}

fn mem_kib() -> Mem {
    let rollup =
        std::fs::read_to_string("/proc/self/smaps_rollup").expect("/proc/self/smaps_rollup");
    let field = |name: &str| {
        rollup
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("smaps_rollup field")
    };
    Mem {
        rss: field("Rss:"),
        pss: field("Pss:"),
        heap: HEAP_LIVE.load(Ordering::Relaxed).max(0) as u64 / 1024,
    }
}

/// Starts `n` sleeping tasks at once and returns the peak memory seen while they sleep, KiB.
async fn peak_with(host: &Arc<Host>, n: usize) -> Mem {
    let brief = json!({"op": "sleep", "ms": SLEEP_MS}).to_string();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let host = host.clone();
            let brief = brief.clone();
            tokio::spawn(async move { host.task("probe", &brief).await })
        })
        .collect();
    let started = Instant::now();
    let mut peak = Mem::default();
    while started.elapsed() < Duration::from_millis(SLEEP_MS * 3 / 4) {
        let now = mem_kib();
        peak.rss = peak.rss.max(now.rss);
        peak.pss = peak.pss.max(now.pss);
        peak.heap = peak.heap.max(now.heap);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for t in tasks {
        let result = t.await.expect("joined").expect("task");
        assert!(
            result.error.is_none(),
            "a sleeping task failed: {:?}",
            result.error
        );
    }
    peak
}

fn main() {
    let counts: Vec<usize> = std::env::var("GUILD_BENCH_TASKS")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|c: &Vec<usize>| c.len() == 2 && c[0] < c[1])
        .unwrap_or_else(|| vec![100, 400]);
    let (low, high) = (counts[0], counts[1]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    rt.block_on(async {
        let host = Arc::new(Host::new(config(dir.path(), high)).await.expect("host"));
        let idle = mem_kib();
        let peak_low = peak_with(&host, low).await;
        let peak_high = peak_with(&host, high).await;
        let slope = |a: u64, b: u64| (b as f64 - a as f64) / (high - low) as f64;
        println!("== memory per live (sleeping) task, probe specialist (KiB)");
        println!("{:<36} {:>10} {:>10} {:>10}", "", "RSS", "PSS", "heap live");
        println!(
            "{:<36} {:>10} {:>10} {:>10}",
            "host idle, plugins loaded", idle.rss, idle.pss, idle.heap
        );
        for (n, m) in [(low, peak_low), (high, peak_high)] {
            println!(
                "{:<36} {:>10} {:>10} {:>10}",
                format!("{n} sleeping tasks (peak)"),
                m.rss,
                m.pss,
                m.heap
            );
        }
        println!(
            "{:<36} {:>10.1} {:>10.1} {:>10.1}",
            "per task (slope between the two)",
            slope(peak_low.rss, peak_high.rss),
            slope(peak_low.pss, peak_high.pss),
            slope(peak_low.heap, peak_high.heap)
        );
    });
}

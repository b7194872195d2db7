//! Skills benchmarks (docs/skills.md, docs/performance.md): a catalog of 10,000 generated skills and the public
//! corpus.
//!
//! Run: `cargo bench -p guild-tests --bench skills`. Prints medians; no timing is asserted.
//!
//! 1. building the catalog: a cold scan of 10,000 skill folders (read + parse every SKILL.md),
//!    and with every skill folder walked too (what the service finishes in the background);
//!    the watcher's re-scan when nothing changed and when one `SKILL.md` changed, with
//!    file-system events (compare the skill folders they name) and by polling stamps (two
//!    `stat`s per skill);
//! 2. serving the catalog: building a caller's catalog from the cached scan and rendering it;
//! 3. body load latency (level 2) for one skill in a fresh task;
//! 4. the catalog-vs-full byte ratio on tests/skills-corpus: what progressive disclosure saves.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_host::skills::{
    Mode, NoLoaders, SkillSource, Skills, SkillsSettings, SourceKind, TaskSkills, scan_folder,
};
use guild_tests::repo_root;

const SKILLS: usize = 10_000;

fn time<F: FnMut()>(iters: usize, f: F) -> Duration {
    guild_tests::time_median(iters, 1, f)
}

/// Real-shaped skills, like the public ones: a SKILL.md with a few kilobytes of body and the
/// usual optional keys, a top-level reference file, and `references/`, `scripts/` and
/// `assets/` folders (7 files in 4 folders per skill).
fn generate(root: &Path) {
    let body = "Follow these steps carefully, checking each result before the next.\n".repeat(40);
    let reference = "Reference material with examples and edge cases.\n".repeat(60);
    let files: [(&str, &str); 6] = [
        ("reference.md", &reference),
        ("references/api.md", &reference),
        ("references/examples.md", &reference),
        ("scripts/run.py", "import sys\nprint(sys.argv)\n"),
        ("scripts/check.sh", "#!/bin/sh\nset -eu\necho ok\n"),
        ("assets/template.md", "# Template\n\n- item\n"),
    ];
    for i in 0..SKILLS {
        let name = format!("skill-{i:05}");
        let dir = root.join(&name);
        for sub in ["references", "scripts", "assets"] {
            std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
        }
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: Use when the task involves topic number {i}; explains how to handle it step by step.\nlicense: MIT\nallowed-tools: tracker.search_issues tracker.get_issue\nmetadata:\n  author: bench\n  version: \"1.0\"\n---\n# {name}\n\nSee [the reference](reference.md) and `references/api.md`.\n\n{body}"
            ),
        )
        .expect("write SKILL.md");
        for (path, text) in files {
            std::fs::write(dir.join(path), text).expect("write resource");
        }
    }
}

/// CPU time this process has used so far, all threads (finished ones included), from
/// `/proc/self/stat` (user + system, clock ticks of 10 ms). Zero where there is no procfs.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which may hold spaces): state is the first; utime and
    // stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Median wall time and median CPU time (all threads) of `iters` runs of `f`: on a busy
/// machine the CPU time says what the work costs when the wall time cannot.
fn with_cpu<F: FnMut()>(iters: usize, mut f: F) -> (Duration, Duration) {
    let mut wall = Vec::with_capacity(iters);
    let mut cpu = Vec::with_capacity(iters);
    for _ in 0..iters {
        let (t, c) = (Instant::now(), cpu_time());
        f();
        wall.push(t.elapsed());
        cpu.push(cpu_time().saturating_sub(c));
    }
    (guild_tests::median(wall), guild_tests::median(cpu))
}

fn fmt(d: Duration) -> String {
    if d >= Duration::from_millis(10) {
        format!("{:.1} ms", d.as_secs_f64() * 1e3)
    } else {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("skills");
    let t = Instant::now();
    generate(&root);
    println!(
        "generated {SKILLS} skills in {:.1} s\n",
        t.elapsed().as_secs_f64()
    );

    // Stamps younger than 2 s are compared on every re-scan, events or not (a write in the same
    // tick could hide behind them); real skill folders are older than that.
    std::thread::sleep(Duration::from_millis(2100));

    let (cold, cold_cpu) = with_cpu(5, || {
        let scan = scan_folder(&root, Mode::Lenient, "bench");
        assert_eq!(scan.catalog.len(), SKILLS);
    });
    // What the catalog's byte accounting and resource listings need besides: every skill
    // folder walked. The service does this on a background thread after a cold scan.
    let (cold_walked, cold_walked_cpu) = with_cpu(3, || {
        let scan = scan_folder(&root, Mode::Lenient, "bench");
        let full: u64 = scan.catalog.iter().map(|e| e.full_bytes()).sum();
        assert!(full > 0);
    });

    let sources = [SkillSource::Folder {
        path: root.clone(),
        label: "bench".into(),
        kind: SourceKind::Own,
    }];
    let watcher = |events: bool| {
        let settings = SkillsSettings {
            watch_events: events,
            ..SkillsSettings::default()
        };
        let skills = Skills::new(settings, dir.path());
        rt.block_on(skills.catalog(&sources, &NoLoaders));
        // The first re-scans add the watches and compare in full once after them.
        assert!(skills.refresh().is_empty());
        assert!(skills.refresh().is_empty());
        skills
    };
    let mut edits = 0;
    let mut rescans = |skills: &Skills| {
        let quiet = time(11, || {
            assert!(skills.refresh().is_empty());
        });
        // One SKILL.md rewritten between re-scans (untimed); the re-scan must report it.
        let mut samples = Vec::new();
        for _ in 0..11 {
            edits += 1;
            let name = format!("skill-{:05}", (edits * 7919) % SKILLS);
            let file = root.join(&name).join("SKILL.md");
            let text = std::fs::read_to_string(&file).expect("read SKILL.md");
            let edited =
                text.replacen("description: ", &format!("description: (edit {edits}) "), 1);
            std::fs::write(&file, edited).expect("write SKILL.md");
            let t = Instant::now();
            let changes = skills.refresh();
            samples.push(t.elapsed());
            assert_eq!(changes.len(), 1, "{changes:?}");
            assert_eq!(changes[0].diff.changed, vec![name]);
        }
        (quiet, guild_tests::median(samples))
    };
    let polled = watcher(false);
    let (rescan_polled, rescan_one_polled) = rescans(&polled);
    drop(polled);
    let skills = watcher(true);
    let (rescan, rescan_one) = rescans(&skills);
    let catalog = rt.block_on(skills.catalog(&sources, &NoLoaders));
    let serve = time(20, || {
        let c = rt.block_on(skills.catalog(&sources, &NoLoaders));
        std::hint::black_box(c.render());
    });
    let render = time(20, || {
        std::hint::black_box(catalog.render());
    });
    let task = TaskSkills::new();
    let listing = skills.disclose_catalog(&catalog, &task);
    let mut i = 0;
    let body = time(1000, || {
        i = (i + 7919) % SKILLS;
        let d = rt
            .block_on(skills.load(
                &catalog,
                &TaskSkills::new(),
                &format!("skill-{i:05}"),
                &NoLoaders,
            ))
            .expect("body");
        std::hint::black_box(d);
    });

    println!("{:<60} {:>12}", "operation (10,000 skills)", "median");
    let row = |what: &str, d: Duration| println!("{what:<60} {:>12}", fmt(d));
    let cpu = |d: Duration| format!("(CPU {} over all threads)", fmt(d));
    row("build catalog: cold scan + parse", cold);
    println!("{:>73}", cpu(cold_cpu));
    row(
        "  + walk every skill's files (background after a cold scan)",
        cold_walked,
    );
    println!("{:>73}", cpu(cold_walked_cpu));
    row("watcher re-scan, no change (events)", rescan);
    row("watcher re-scan, one SKILL.md changed (events)", rescan_one);
    row("watcher re-scan, no change (polling stamps)", rescan_polled);
    row(
        "watcher re-scan, one SKILL.md changed (polling stamps)",
        rescan_one_polled,
    );
    println!(
        "{:<52} {:>12}",
        "serve catalog: caller's catalog from cache + render",
        fmt(serve)
    );
    println!("{:<52} {:>12}", "render catalog text only", fmt(render));
    println!(
        "{:<52} {:>12}",
        "load one body (level 2), fresh task",
        fmt(body)
    );
    println!(
        "{:<52} {:>12}",
        "catalog size",
        format!("{} KiB", listing.bytes / 1024)
    );

    let corpus = repo_root().join("tests").join("skills-corpus");
    let corpus_skills = Skills::new(SkillsSettings::default(), repo_root());
    let corpus_catalog = rt.block_on(corpus_skills.catalog(
        &[SkillSource::Folder {
            path: corpus,
            label: "corpus".into(),
            kind: SourceKind::Shared,
        }],
        &NoLoaders,
    ));
    let listing = corpus_skills.disclose_catalog(&corpus_catalog, &TaskSkills::new());
    let skill_md: u64 = corpus_catalog.iter().map(|e| e.skill_md_bytes).sum();
    let full = corpus_catalog.full_bytes();
    println!(
        "\ncorpus ({} skills): catalog {} B (~{} tokens), all SKILL.md {} B, full {} B (~{} tokens)",
        corpus_catalog.len(),
        listing.bytes,
        listing.approx_tokens,
        skill_md,
        full,
        full.div_ceil(4)
    );
    println!(
        "catalog is {:.1}% of all SKILL.md and {:.1}% of the full skills ({:.0}x smaller)",
        100.0 * listing.bytes as f64 / skill_md as f64,
        100.0 * listing.bytes as f64 / full as f64,
        full as f64 / listing.bytes as f64
    );
}

//! What keeping secrets out costs: building a plugin's redactor, and searching the texts one
//! tool call or HTTP answer crosses the guest boundary with (docs/performance.md).
//!
//! `CARGO_PROFILE_DEV_OPT_LEVEL=3 cargo run -p guild-http --example redact_cost`

use std::hint::black_box;
use std::time::{Duration, Instant};

use guild_http::redact::Redactor;
use guild_http::{AllowList, SecretHeader};

/// The median of `runs` timings of `f`, after a few warm-up runs.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..3 {
        f();
    }
    let mut samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples[runs / 2]
}

fn main() {
    let hosts = AllowList::parse(["https://api.example.com"]).expect("hosts");
    let secret = |name: &str, value: &str| {
        SecretHeader::new(
            name,
            "Authorization",
            &format!("Bearer {value}"),
            hosts.clone(),
        )
        .expect("valid")
    };
    let secrets = [
        secret("TRACKER_TOKEN", "ghp_0123456789abcdefABCDEF0123456789abcd"),
        secret("SEARCH_KEY", "sk-live-4f1c2e9a7b3d5e6f"),
    ];
    let build = median(201, || {
        black_box(Redactor::new(&secrets));
    });
    println!("build a redactor for 2 secrets: {build:?}");
    let redactor = Redactor::new(&secrets);
    let none = Redactor::default();
    // A JSON-ish text with quotes, escapes and percent signs, so the escape paths are taken.
    let unit =
        r#"{"title":"Fix the 50% regression \"now\"","body":"see https://x.test/a?b=c&d=e\n"}"#;
    for size in [256, 4 << 10, 64 << 10, 1 << 20] {
        let text = unit.repeat(size / unit.len() + 1)[..size].to_owned();
        let runs = if size >= 1 << 20 { 21 } else { 201 };
        let with = median(runs, || {
            black_box(redactor.redact(black_box(text.as_bytes())));
        });
        let without = median(runs, || {
            black_box(none.redact(black_box(text.as_bytes())));
        });
        let per_mib = with.as_secs_f64() * f64::from(1 << 20) / size as f64;
        println!(
            "redact {size:>8} B: {with:>10.1?} with 2 secrets ({:.1} ms/MiB), {without:?} with none",
            per_mib * 1e3
        );
    }
}

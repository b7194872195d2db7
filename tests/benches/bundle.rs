//! Signed bundles with the 18 MB Python digest plugin: packing (and its determinism), verify
//! alone, and verify + install (stage, compile the verified bytes against a warm compile cache,
//! atomic exchange, ledger) against plainly copying the plugin folder.
//!
//! Run: `cargo bench -p guild-tests --bench bundle` (after `plugins/build.sh`);
//! `GUILD_BENCH_ITERS` sets the number of runs (default 10). Prints medians; no timing is
//! asserted. The first install compiles the component (not measured); later ones hit the cache
//! entry it left, as a host's later starts do.

use std::path::Path;
use std::time::{Duration, Instant};

use guild_bundle::{self as bundle, Caps, archive, sign, trust};
use guild_host::Config;
use guild_host::bundle_install::{self, InstallOptions};
use guild_tests::{median, plugin_dir};
use ssh_key::PrivateKey;
use ssh_key::private::Ed25519Keypair;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}

fn time(iters: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..iters)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let iters: usize = std::env::var("GUILD_BENCH_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let src = plugin_dir("digest");
    let dir = tempfile::tempdir().expect("tempdir");
    let options = archive::PackOptions {
        created: bundle::time::now_unix(),
        expires: None,
    };

    let pack = || archive::pack(&src, options, Caps::default()).expect("pack");
    let first = archive::write(&pack()).expect("write");
    assert_eq!(
        first,
        archive::write(&pack()).expect("write"),
        "packing is deterministic"
    );
    let packing = time(iters, || {
        archive::write(&pack()).expect("write");
    });

    let lead = PrivateKey::from(Ed25519Keypair::from_seed(&[7; 32]));
    let mut signed = pack();
    signed
        .signatures
        .push(sign::sign(&lead, &signed.manifest_bytes).expect("sign"));
    let file = dir.path().join("digest.guild");
    std::fs::write(&file, archive::write(&signed).expect("write")).expect("write bundle");
    let entry = trust::format_entry("lead@team", lead.public_key(), None, None).expect("entry");
    std::fs::write(dir.path().join("allowed_signers"), format!("{entry}\n")).expect("write");
    let text = "[host]\nplugins_dir = \"plugins\"\ndata_dir = \"data\"\n\n[trust]\nthreshold = 1\n";
    let config = Config::parse(text, &dir.path().join("guild.toml"), dir.path()).expect("config");
    let opts = InstallOptions::default();

    let verifying = time(iters, || {
        bundle_install::inspect(&config, &file, &opts).expect("verifies");
    });
    bundle_install::install(&config, &file, &opts).expect("first install compiles");
    let installing = time(iters, || {
        bundle_install::install(&config, &file, &opts).expect("installs");
    });
    let copies = dir.path().join("copies");
    let mut n = 0;
    let copying = time(iters, || {
        n += 1;
        copy_dir(&src, &copies.join(n.to_string()));
    });

    let mb = first.len() as f64 / 1e6;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("digest bundle: {mb:.1} MB (medians of {iters})");
    println!(
        "  pack (deterministic: two packs, same bytes): {:.1} ms",
        ms(packing)
    );
    println!(
        "  verify (read + signature + trust + every hash): {:.1} ms",
        ms(verifying)
    );
    println!(
        "  verify + install (stage, compile from warm cache, exchange, ledger): {:.1} ms",
        ms(installing)
    );
    println!(
        "  copy the plugin folder (cp -r equivalent): {:.1} ms",
        ms(copying)
    );
    println!(
        "  install / copy: {:.1}x",
        installing.as_secs_f64() / copying.as_secs_f64()
    );
}

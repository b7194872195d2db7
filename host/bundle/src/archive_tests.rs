//! Hand-made archives, one per trick: each must be refused by [`super::archive::read`] with the
//! offending entry named, before any verification runs.

use super::archive::{self, Caps};
use super::{BundleError, MANIFEST_ENTRY};

/// A header with raw name bytes (the tar crate's `set_path` would refuse `..` itself).
fn entry(name: &[u8], kind: tar::EntryType, data: &[u8]) -> Vec<u8> {
    let mut header = tar::Header::new_ustar();
    header.as_mut_bytes()[..name.len()].copy_from_slice(name);
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
        header.set_link_name("../../etc/passwd").expect("link name");
    }
    header.set_cksum();
    let mut out = header.as_bytes().to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn archive(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut out = entry(MANIFEST_ENTRY.as_bytes(), tar::EntryType::Regular, b"{}\n");
    for e in entries {
        out.extend_from_slice(e);
    }
    out.extend_from_slice(&[0; 1024]);
    out
}

fn refused(bytes: &[u8], caps: Caps) -> String {
    match archive::read(bytes, caps) {
        Ok(_) => panic!("archive accepted"),
        Err(e) => e.to_string(),
    }
}

fn regular(name: &str, data: &[u8]) -> Vec<u8> {
    entry(name.as_bytes(), tar::EntryType::Regular, data)
}

#[test]
fn links_devices_fifos_directories_and_extension_headers_are_refused() {
    use tar::EntryType as T;
    for (kind, what) in [
        (T::Symlink, "symbolic link"),
        (T::Link, "hard link"),
        (T::Char, "device node"),
        (T::Block, "device node"),
        (T::Fifo, "FIFO"),
        (T::Directory, "directory entry"),
        (T::XHeader, "PAX extension header"),
        (T::XGlobalHeader, "PAX extension header"),
        (T::GNULongName, "GNU extension header"),
    ] {
        let e = refused(&archive(&[entry(b"files/x", kind, b"")]), Caps::default());
        assert!(
            e.contains("\"files/x\"") && e.contains(what),
            "{kind:?}: {e}"
        );
    }
}

#[test]
fn a_symlink_then_a_file_through_it_is_refused_at_the_link() {
    let e = refused(
        &archive(&[
            entry(b"files/skills", tar::EntryType::Symlink, b""),
            regular("files/skills/evil.md", b"x"),
        ]),
        Caps::default(),
    );
    assert!(
        e.contains("\"files/skills\"") && e.contains("symbolic link"),
        "{e}"
    );
}

#[test]
fn a_pax_size_override_is_never_applied() {
    // A PAX header claiming another size for the next entry: refused outright, so the reader
    // and any other tool can never disagree about where entries end.
    let pax = b"20 size=99999999999\n";
    let e = refused(
        &archive(&[
            entry(b"files/PaxHeader", tar::EntryType::XHeader, pax),
            regular("files/a.md", b"a"),
        ]),
        Caps::default(),
    );
    assert!(e.contains("PAX extension header"), "{e}");
}

#[test]
fn escaping_and_odd_paths_are_refused() {
    for name in [
        "files/../evil",
        "files/a/../../evil",
        "files//etc/passwd",
        "files/C:/evil",
        "files/a\\..\\b",
        "files/./a",
        "/files/a",
        "files/",
    ] {
        let e = refused(&archive(&[regular(name, b"x")]), Caps::default());
        assert!(e.contains(&format!("{name:?}")), "{name}: {e}");
    }
    let e = refused(&archive(&[regular("other/a", b"x")]), Caps::default());
    assert!(e.contains("not part of the bundle format"), "{e}");
}

#[test]
fn duplicates_and_collisions_are_refused() {
    for (first, second, why) in [
        ("files/a.md", "files/a.md", "duplicate"),
        ("files/A.md", "files/a.md", "collides"),
        ("files/caf\u{e9}.md", "files/cafe\u{301}.md", "collides"),
        (MANIFEST_ENTRY, MANIFEST_ENTRY, "duplicate"),
    ] {
        let e = refused(
            &archive(&[regular(first, b"1"), regular(second, b"2")]),
            Caps::default(),
        );
        assert!(e.contains(why), "{first} / {second}: {e}");
    }
}

#[test]
fn nested_archives_and_policy_files_are_refused() {
    let mut inner_tar = vec![0u8; 512];
    inner_tar[257..262].copy_from_slice(b"ustar");
    for (name, data, why) in [
        ("files/skills.tar", &b"x"[..], "nested archive"),
        ("files/data.bin", &b"\x1f\x8b\x08\0"[..], "gzip"),
        ("files/data.bin", &inner_tar[..], "nested tar"),
        ("files/notes.txt", &b"PK\x03\x04"[..], "zip"),
        ("files/guild.toml", &b"[grants.demo]"[..], "policy file"),
        ("files/skills/Allowed_Signers", &b"x"[..], "policy file"),
        ("files/demo.cwasm", &b"x"[..], "precompiled"),
    ] {
        let e = refused(&archive(&[regular(name, data)]), Caps::default());
        assert!(e.contains(why), "{name}: {e}");
    }
}

#[test]
fn caps_are_measured_on_the_bytes_read() {
    let small = Caps {
        total_bytes: 4096,
        entries: 4,
        ..Caps::default()
    };
    let e = refused(&archive(&[regular("files/big", &[7; 5000])]), small);
    assert!(e.contains("over 4096 bytes"), "{e}");
    let many: Vec<_> = (0..5)
        .map(|i| regular(&format!("files/{i}"), b"x"))
        .collect();
    assert!(refused(&archive(&many), small).contains("more than 4 entries"));
    // A header that claims more bytes than the archive holds.
    let mut lying = archive(&[regular("files/a", b"abc")]);
    let cut = lying.len() - 1024;
    lying.truncate(cut - 512);
    let mut header = tar::Header::new_ustar();
    header.set_path("files/b").expect("path");
    header.set_size(1 << 20);
    header.set_cksum();
    lying.extend_from_slice(header.as_bytes());
    lying.extend_from_slice(&[1; 512]);
    let e = refused(&lying, Caps::default());
    assert!(e.contains("files/b") || e.contains("unreadable"), "{e}");
    let too_many_sigs = Caps {
        signatures: 1,
        ..Caps::default()
    };
    let sigs = [
        regular("signatures/000.sig", b"x"),
        regular("signatures/001.sig", b"y"),
    ];
    assert!(refused(&archive(&sigs), too_many_sigs).contains("signature caps"));
}

#[test]
fn a_bundle_over_the_file_cap_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("big.guild");
    std::fs::write(&file, vec![0u8; 10_000]).expect("write");
    let caps = Caps {
        bundle_bytes: 9_999,
        ..Caps::default()
    };
    match archive::read_file(&file, caps) {
        Err(BundleError::Archive(m)) => assert!(m.contains("larger than 9999"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_manifest_must_come_first_and_exist() {
    let mut bytes = regular("files/a", b"x");
    bytes.extend_from_slice(&regular(MANIFEST_ENTRY, b"{}\n"));
    bytes.extend_from_slice(&[0; 1024]);
    assert!(refused(&bytes, Caps::default()).contains("must come first"));
    let mut bytes = regular("files/a", b"x");
    bytes.extend_from_slice(&[0; 1024]);
    assert!(refused(&bytes, Caps::default()).contains("not a Guild bundle"));
}

/// A bundle as `write` makes it: the canonical byte form.
fn canonical() -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plugin.toml"),
        "[plugin]\nname = \"demo\"\nversion = \"1.0.0\"\nkind = \"specialist\"\ncomponent = \"demo.wasm\"\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("demo.wasm"), b"\0asm").expect("write");
    let options = archive::PackOptions {
        created: 1,
        expires: None,
    };
    let b = archive::pack(dir.path(), options, Caps::default()).expect("pack");
    archive::write(&b).expect("write")
}

#[test]
fn the_archive_ends_with_exactly_its_end_marker() {
    let good = canonical();
    archive::read(&good, Caps::default()).expect("canonical bundle");
    let body = good.len() - 1024;

    let mut trailing = good.clone();
    trailing.extend_from_slice(b"hidden payload");
    assert!(refused(&trailing, Caps::default()).contains("14 bytes after the end marker"));

    let mut padded = good.clone();
    padded.extend_from_slice(&[0; 512]);
    assert!(refused(&padded, Caps::default()).contains("512 bytes after the end marker"));

    let mut after_end = good.clone();
    after_end.extend_from_slice(&regular("files/extra.txt", b"sneaked in"));
    after_end.extend_from_slice(&[0; 1024]);
    assert!(refused(&after_end, Caps::default()).contains("after the end marker"));

    let cut = &good[..body + 512];
    assert!(refused(cut, Caps::default()).contains("512 of its 1024 zero bytes"));
    let missing = &good[..body];
    assert!(refused(missing, Caps::default()).contains("end marker is missing or cut"));
}

#[test]
fn only_the_canonical_byte_form_is_read() {
    let good = canonical();
    // The first entry's mtime field (offset 136, 12 bytes) set to a non-zero time: the reader
    // ignores it, so it must not be a place to hide bytes or make a second byte form.
    let mut mtime = good.clone();
    let mut header = tar::Header::new_old();
    header.as_mut_bytes().copy_from_slice(&mtime[..512]);
    header.set_mtime(1_700_000_000);
    header.set_cksum();
    mtime[..512].copy_from_slice(header.as_bytes());
    let e = refused(&mtime, Caps::default());
    assert!(
        e.contains("canonical layout") && e.contains(MANIFEST_ENTRY),
        "{e}"
    );
    // Non-zero padding after an entry's data.
    let manifest_len = archive::read(&good, Caps::default())
        .expect("read")
        .manifest_bytes
        .len();
    let mut padding = good.clone();
    padding[512 + manifest_len] = b'x';
    assert!(refused(&padding, Caps::default()).contains("canonical layout"));
}

#[test]
fn pack_refuses_names_that_collide_after_case_folding() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plugin.toml"),
        "[plugin]\nname = \"demo\"\nversion = \"1.0.0\"\nkind = \"specialist\"\ncomponent = \"demo.wasm\"\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("demo.wasm"), b"\0asm").expect("write");
    let options = archive::PackOptions {
        created: 1,
        expires: None,
    };
    std::fs::write(dir.path().join("readme.md"), "lower").expect("write");
    archive::pack(dir.path(), options, Caps::default()).expect("one readme packs");
    std::fs::write(dir.path().join("README.md"), "upper").expect("write");
    let e = archive::pack(dir.path(), options, Caps::default())
        .expect_err("README.md beside readme.md packed")
        .to_string();
    assert!(
        e.contains("readme.md") && e.contains("collides with \"README.md\""),
        "{e}"
    );
}

#[test]
fn pack_time_defaults_to_the_newest_file_so_the_same_folder_gives_the_same_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    let set = |name: &str, secs: u64| {
        let path = dir.path().join(name);
        std::fs::write(&path, name).expect("write");
        let f = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .expect("set mtime");
    };
    set("a.txt", 1_700_000_000);
    set("sub/b.txt", 1_750_000_000);
    let now = 1_800_000_000;
    assert_eq!(
        archive::newest_mtime(dir.path(), now).expect("walk"),
        1_750_000_000
    );
    assert_eq!(
        archive::newest_mtime(dir.path(), now).expect("walk"),
        1_750_000_000
    );
    // A newer file moves it; a file from the future is capped at now.
    set("sub/c.txt", 1_760_000_000);
    assert_eq!(
        archive::newest_mtime(dir.path(), now).expect("walk"),
        1_760_000_000
    );
    set("future.txt", 1_900_000_000);
    assert_eq!(archive::newest_mtime(dir.path(), now).expect("walk"), now);
}

//! Hostile-tarball tests: each archive must be refused with a clear reason, and nothing may
//! appear outside the target directory.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use super::*;

struct E<'a> {
    name: &'a str,
    kind: tar::EntryType,
    link: &'a str,
    data: &'a [u8],
    mode: u32,
}

fn file<'a>(name: &'a str, data: &'a [u8]) -> E<'a> {
    E {
        name,
        kind: tar::EntryType::Regular,
        link: "",
        data,
        mode: 0o644,
    }
}

fn link<'a>(name: &'a str, kind: tar::EntryType, link: &'a str) -> E<'a> {
    E {
        name,
        kind,
        link,
        data: b"",
        mode: 0o777,
    }
}

/// A gzip'd tar with names written raw, so that `..` and absolute paths get through.
fn tgz(entries: &[E]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for e in entries {
        let mut h = tar::Header::new_ustar();
        h.as_old_mut().name[..e.name.len()].copy_from_slice(e.name.as_bytes());
        h.as_old_mut().linkname[..e.link.len()].copy_from_slice(e.link.as_bytes());
        h.set_entry_type(e.kind);
        h.set_size(e.data.len() as u64);
        h.set_mode(e.mode);
        h.set_cksum();
        b.append(&h, e.data).unwrap();
    }
    let tar = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Extracts into `<tmp>/target` and returns the error text; asserts that the only thing in
/// `<tmp>` besides `target` is the pre-existing `victim` file, untouched.
fn refused(entries: &[E], limits: ExtractLimits) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(tmp.path().join("victim"), "safe").unwrap();
    let err = extract_layer(&tgz(entries), &target, limits)
        .expect_err("hostile layer accepted")
        .to_string();
    let mut names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["target", "victim"],
        "nothing written outside: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("victim")).unwrap(),
        "safe"
    );
    err
}

fn limits() -> ExtractLimits {
    ExtractLimits::default()
}

#[test]
fn absolute_paths_are_refused() {
    let e = refused(&[file("/tmp/evil", b"x")], limits());
    assert!(e.contains("absolute path"), "{e}");
}

#[test]
fn dot_dot_traversal_is_refused() {
    let e = refused(&[file("../victim", b"pwned")], limits());
    assert!(e.contains("'..'"), "{e}");
    let e = refused(&[file("a/../../victim", b"pwned")], limits());
    assert!(e.contains("'..'"), "{e}");
}

#[test]
fn symlinks_leaving_the_target_are_refused() {
    let e = refused(&[link("l", tar::EntryType::Symlink, "../victim")], limits());
    assert!(e.contains("outside the target"), "{e}");
    let e = refused(
        &[link("l", tar::EntryType::Symlink, "/etc/passwd")],
        limits(),
    );
    assert!(e.contains("absolute"), "{e}");
    let e = refused(
        &[link("d/l", tar::EntryType::Symlink, "../../victim")],
        limits(),
    );
    assert!(e.contains("outside the target"), "{e}");
}

#[test]
fn writes_through_an_inner_symlink_stay_inside() {
    // A symlink to a directory inside the target is allowed, and a write through it lands
    // inside the target too.
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let layer = tgz(&[
        E {
            name: "sub",
            kind: tar::EntryType::Directory,
            link: "",
            data: b"",
            mode: 0o755,
        },
        link("l", tar::EntryType::Symlink, "sub"),
        file("l/f", b"ok"),
    ]);
    extract_layer(&layer, &t, limits()).unwrap();
    assert_eq!(std::fs::read_to_string(t.join("sub/f")).unwrap(), "ok");
}

#[test]
fn hard_links_leaving_the_target_are_refused() {
    let e = refused(&[link("h", tar::EntryType::Link, "../victim")], limits());
    assert!(e.contains("hard link target"), "{e}");
    let e = refused(&[link("h", tar::EntryType::Link, "/etc/passwd")], limits());
    assert!(e.contains("hard link target"), "{e}");
}

#[test]
fn devices_and_fifos_are_refused() {
    for kind in [
        tar::EntryType::Char,
        tar::EntryType::Block,
        tar::EntryType::Fifo,
    ] {
        let e = refused(&[link("dev", kind, "")], limits());
        assert!(e.contains("not allowed"), "{e}");
    }
}

#[test]
fn layers_over_the_size_limits_are_refused() {
    let big = vec![0u8; 1 << 20];
    let tight = ExtractLimits {
        max_compressed: 1 << 30,
        max_uncompressed: 64 << 10,
    };
    let e = refused(&[file("zeros", &big)], tight);
    assert!(e.contains("size limit"), "{e}");
    let tiny = ExtractLimits {
        max_compressed: 10,
        max_uncompressed: 1 << 30,
    };
    let e = refused(&[file("a", b"a")], tiny);
    assert!(e.contains("size limit"), "{e}");
}

#[test]
fn a_well_formed_layer_extracts_with_its_modes() {
    let tmp = tempfile::tempdir().unwrap();
    let layer = tgz(&[
        E {
            name: ".",
            kind: tar::EntryType::Directory,
            link: "",
            data: b"",
            mode: 0o755,
        },
        E {
            name: "ro",
            kind: tar::EntryType::Directory,
            link: "",
            data: b"",
            mode: 0o555,
        },
        E {
            name: "ro/x.cue",
            kind: tar::EntryType::Regular,
            link: "",
            data: b"x",
            mode: 0o444,
        },
        E {
            name: "run.sh",
            kind: tar::EntryType::Regular,
            link: "",
            data: b"#!",
            mode: 0o755,
        },
    ]);
    extract_layer(&layer, tmp.path(), limits()).unwrap();
    let mode = |p: &str| {
        std::fs::metadata(tmp.path().join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("ro/x.cue"), 0o444);
    assert_eq!(mode("run.sh"), 0o755);
    // Directories stay writable by their owner so that a later layer can add files.
    assert_eq!(mode("ro"), 0o755);
}

#[test]
fn corrupt_gzip_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let e = extract_layer(b"\x1f\x8bnot gzip", tmp.path(), limits()).unwrap_err();
    assert!(e.to_string().contains("corrupt layer"), "{e}");
}

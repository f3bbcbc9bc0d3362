//! Unit tests of the artifact format: layer split, tar headers, determinism, config and
//! manifest bytes.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/oci/module")
}

/// Copies the test module to a fresh directory, outside any git repository.
fn copy_module() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("module");
    for e in walkdir::WalkDir::new(testdata()) {
        let e = e.unwrap();
        let to = dst.join(e.path().strip_prefix(testdata()).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    (tmp, dst)
}

/// One tar entry: (name, type, mode, uid, gid, mtime, raw header).
type Entry = (String, u8, u32, u64, u64, u64, Vec<u8>);

/// Every entry of a gzip'd layer.
fn entries(layer: &Layer) -> Vec<Entry> {
    let mut gz = flate2::read::GzDecoder::new(&layer.blob[..]);
    let mut tar = Vec::new();
    gz.read_to_end(&mut tar).unwrap();
    assert_eq!(
        sha256(&tar),
        layer.diff_id,
        "diff id is the uncompressed digest"
    );
    let mut a = tar::Archive::new(&tar[..]);
    a.entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let h = e.header();
            (
                String::from_utf8(e.path_bytes().to_vec()).unwrap(),
                h.entry_type().as_byte(),
                h.mode().unwrap(),
                h.uid().unwrap(),
                h.gid().unwrap(),
                h.mtime().unwrap(),
                h.as_bytes().to_vec(),
            )
        })
        .collect()
}

fn names(layer: &Layer) -> Vec<String> {
    entries(layer).into_iter().map(|e| e.0).collect()
}

#[test]
fn module_image_is_cue_mod_then_the_rest_minus_timoni_ignore() {
    let (_t, dir) = copy_module();
    let [vendor, module] = module_layers(&dir, false).unwrap();
    assert_eq!(vendor.content_type, "module/vendor");
    assert_eq!(module.content_type, "module");
    assert_eq!(names(&vendor), [".", "cue.mod", "cue.mod/module.cue"]);
    assert_eq!(
        names(&module),
        [
            ".",
            "templates",
            "templates/config.cue",
            "timoni.cue",
            "timoni.ignore",
            "values.cue"
        ]
    );
}

#[test]
fn tar_headers_are_go_ustar_with_zeroed_owner_and_times() {
    let (_t, dir) = copy_module();
    std::fs::set_permissions(
        dir.join("timoni.cue"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::set_permissions(
        dir.join("templates"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let [_, module] = module_layers(&dir, false).unwrap();
    for (name, kind, mode, uid, gid, mtime, raw) in entries(&module) {
        assert_eq!((uid, gid, mtime), (0, 0, 0), "{name}");
        assert!(!name.ends_with('/'), "{name}");
        assert_eq!(&raw[257..265], b"ustar\x0000", "{name}: USTAR magic");
        assert_eq!(&raw[265..297], &[0u8; 32], "{name}: empty uname");
        assert_eq!(
            (raw[154], raw[155]),
            (0, b' '),
            "{name}: Go checksum layout"
        );
        assert_eq!(
            &raw[136..148],
            b"00000000000\0",
            "{name}: mtime written as 0"
        );
        match name.as_str() {
            "timoni.cue" => assert_eq!((kind, mode), (b'0', 0o600)),
            "templates" => assert_eq!((kind, mode), (b'5', 0o750)),
            _ => {}
        }
    }
}

#[test]
fn symlinks_are_skipped_unless_resolved() {
    let (_t, dir) = copy_module();
    let outside = dir.parent().unwrap().join("outside.cue");
    std::fs::write(&outside, "package main\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("linked.cue")).unwrap();
    let [_, plain] = module_layers(&dir, false).unwrap();
    assert!(!names(&plain).contains(&"linked.cue".to_string()));
    let [_, resolved] = module_layers(&dir, true).unwrap();
    let e = entries(&resolved);
    let linked = e
        .iter()
        .find(|e| e.0 == "linked.cue")
        .expect("resolved symlink");
    assert_eq!(linked.1, b'0', "stored as a regular file");
}

#[test]
fn same_tree_in_two_places_gives_the_same_digests() {
    let (_a, one) = copy_module();
    let (_b, two) = copy_module();
    let img = |dir: &Path| {
        let ann =
            default_annotations(dir, Some("1.0.0"), Some("1700000000"), &BTreeMap::new()).unwrap();
        assemble_image(module_layers(dir, false).unwrap().to_vec(), ann)
    };
    let (x, y) = (img(&one), img(&two));
    assert_eq!(x.digest, y.digest);
    assert_eq!(x.manifest, y.manifest);
    assert_eq!(
        x.config.len(),
        342,
        "the size Timoni's docs show for a module config"
    );
}

#[test]
fn config_and_manifest_bytes_follow_go_containerregistry() {
    let (_t, dir) = copy_module();
    let layers = module_layers(&dir, false).unwrap().to_vec();
    let ann = BTreeMap::from([
        (
            "org.opencontainers.image.version".to_string(),
            "1.0.0".to_string(),
        ),
        (
            "org.opencontainers.image.source".to_string(),
            "https://x/?a=1&b=<2>".to_string(),
        ),
    ]);
    let img = assemble_image(layers.clone(), ann);
    let config = String::from_utf8(img.config.clone()).unwrap();
    assert_eq!(
        config,
        format!(
            r#"{{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{{"created":"0001-01-01T00:00:00Z"}},{{"created":"0001-01-01T00:00:00Z"}}],"os":"","rootfs":{{"type":"layers","diff_ids":["{}","{}"]}},"config":{{}}}}"#,
            layers[0].diff_id, layers[1].diff_id
        )
    );
    let manifest = String::from_utf8(img.manifest.clone()).unwrap();
    let expected = format!(
        concat!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","#,
            r#""config":{{"mediaType":"application/vnd.timoni.config.v1+json","size":342,"digest":"{}"}},"#,
            r#""layers":[{{"mediaType":"application/vnd.timoni.content.v1.tar+gzip","size":{},"digest":"{}","annotations":{{"sh.timoni.content.type":"module/vendor"}}}},"#,
            r#"{{"mediaType":"application/vnd.timoni.content.v1.tar+gzip","size":{},"digest":"{}","annotations":{{"sh.timoni.content.type":"module"}}}}],"#,
            r#""annotations":{{"org.opencontainers.image.source":"https://x/?a=1\u0026b=\u003c2\u003e","org.opencontainers.image.version":"1.0.0"}}}}"#
        ),
        sha256(&img.config),
        layers[0].blob.len(),
        layers[0].digest,
        layers[1].blob.len(),
        layers[1].digest,
    );
    assert_eq!(manifest, expected);
    assert_eq!(img.digest, sha256(&img.manifest));
}

#[test]
fn annotations_fill_created_from_source_date_epoch_and_user_values_win() {
    let (_t, dir) = copy_module();
    let user = BTreeMap::from([
        (
            "org.opencontainers.image.created".to_string(),
            "mine".to_string(),
        ),
        (
            "org.opencontainers.image.version".to_string(),
            "9.9.9".to_string(),
        ),
    ]);
    let a = default_annotations(&dir, Some("1.0.0"), Some("0"), &user).unwrap();
    assert_eq!(a["org.opencontainers.image.created"], "mine");
    assert_eq!(a["org.opencontainers.image.version"], "1.0.0");
    let a = default_annotations(&dir, None, Some("1700000000"), &BTreeMap::new()).unwrap();
    assert_eq!(
        a["org.opencontainers.image.created"],
        "2023-11-14T22:13:20Z"
    );
    assert!(!a.contains_key("org.opencontainers.image.version"));
    assert!(default_annotations(&dir, None, Some("soon"), &BTreeMap::new()).is_err());
}

#[test]
fn rfc3339_matches_known_dates() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
}

#[test]
fn long_names_split_into_the_ustar_prefix_as_go_does() {
    let long = format!("{}/{}", "d".repeat(120), "f.cue");
    assert_eq!(
        split_ustar_path(&long),
        Some(("d".repeat(120), "f.cue".to_string()))
    );
    assert_eq!(split_ustar_path("short"), None);
    assert_eq!(split_ustar_path(&"x".repeat(130)), None);
    assert_eq!(pax_record("path", "abc"), "12 path=abc\n");
}

#[test]
fn a_single_file_artifact_has_the_root_and_the_file() {
    let (_t, dir) = copy_module();
    let layer = artifact_layer(&dir.join("timoni.cue"), "generic", false).unwrap();
    assert_eq!(names(&layer), [".", "timoni.cue"]);
    let layer = artifact_layer(&dir, "generic", false).unwrap();
    assert!(names(&layer).contains(&"cue.mod/module.cue".to_string()));
    assert!(!names(&layer).contains(&"debug_values.cue".to_string()));
}

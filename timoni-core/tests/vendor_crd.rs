//! `timoni mod vendor crd` on the CRDs of `tests/testdata/crd/*.yaml` (written for these tests):
//! every generated file is snapshotted, must parse, and the writer lays them out under
//! `cue.mod/gen/<group>/<kind>/<version>/types_gen.cue`.

use std::path::Path;

use timoni_core::vendor::crd;

fn inputs() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/crd");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    v
}

#[test]
fn snapshots() {
    for input in inputs() {
        let name = input.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&input).unwrap();
        let files = crd::generate(&text, &format!("{name}.yaml")).unwrap();
        assert!(!files.is_empty(), "{name}: no CRD converted");
        for f in files {
            cue_eval::format_source(&f.content)
                .unwrap_or_else(|e| panic!("{}: output does not parse: {e:?}", f.key));
            let snap = format!("{name}__{}", f.key.replace('/', "_"));
            insta::assert_snapshot!(snap, f.content);
        }
    }
}

#[test]
fn writes_under_cue_mod_gen() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(inputs()[0].clone()).unwrap();
    let files = crd::generate(&text, "x.yaml").unwrap();
    let err = crd::write(dir.path(), &files).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cue.mod not found in the module path"),
        "{err}"
    );
    std::fs::create_dir(dir.path().join("cue.mod")).unwrap();
    let written = crd::write(dir.path(), &files).unwrap();
    let rel: Vec<String> = written
        .iter()
        .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(
        rel,
        [
            "cue.mod/gen/example.dev/widget/v1/types_gen.cue",
            "cue.mod/gen/example.dev/widget/v1alpha1/types_gen.cue"
        ]
    );
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    for (text, want) in [
        ("a: [", "parsing CRDs failed"),
        (
            "kind: CustomResourceDefinition\nspec: {}\n",
            "invalid CRD: document 1: spec.group",
        ),
        (
            "kind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {group: g, names: {kind: K}}\n",
            "invalid CRD: x: spec.versions is missing",
        ),
    ] {
        let err = crd::generate(text, "t.yaml").unwrap_err().to_string();
        assert!(err.starts_with(want), "{text:?}: {err}");
    }
    assert!(crd::generate("kind: Other\n", "t.yaml").unwrap().is_empty());
}

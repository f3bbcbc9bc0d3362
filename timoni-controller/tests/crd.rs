//! The checked-in CRD (`config/crd/projects.timoni.sh.yaml`) is what `crdgen` prints now.

#[test]
fn the_checked_in_crd_is_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/crd/projects.timoni.sh.yaml"
    );
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == timoni_controller::crd::crd_yaml(),
        "{path} is stale: run `cargo run -p timoni-controller --bin crdgen > timoni-controller/config/crd/projects.timoni.sh.yaml`"
    );
}

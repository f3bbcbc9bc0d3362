//! `crdgen`: prints the `projects.timoni.sh` CRD YAML
//! (`cargo run -p timoni-controller --bin crdgen > timoni-controller/config/crd/projects.timoni.sh.yaml`).

fn main() {
    print!("{}", timoni_controller::crd::crd_yaml());
}

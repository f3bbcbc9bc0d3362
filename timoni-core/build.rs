//! Rebuilds the crate when the embedded starter blueprint changes (`include_dir!` does not
//! tell Cargo which files it read).

fn main() {
    println!("cargo:rerun-if-changed=blueprints");
}

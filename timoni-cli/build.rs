//! Link options of the `timoni` binary.
//!
//! On x86_64 GNU/Linux, where rustc links with lld, the binary is:
//! - a position-dependent executable (`-no-pie`), as Go links `cue` and Timoni: the dynamic
//!   loader has no relocations to apply at start-up, and the 0.6 MB of `.data.rel.ro` they would
//!   write stay clean file pages that a run maps only where it reads them. The price is that the
//!   binary's own code and data sit at the same addresses in every run (no address-space
//!   randomisation for them; the libraries, heap and stack keep it);
//! - laid out with the functions typical runs execute placed together (`hot-symbols.txt`, written
//!   by `scripts/hot-symbols`, given to lld's `--symbol-ordering-file`), so that a run maps about
//!   2 MiB of code instead of 5 MiB scattered over the 18 MB text.
//!
//! Both change only where code and data sit, never what runs. The figures are in
//! `docs/performance.md` ("Process start-up and code layout").
//!
//! Elsewhere on GNU/Linux (another architecture, or another linker chosen with
//! `-C linker-features`, `-fuse-ld` or `-C link-self-contained`: GNU ld has no symbol ordering
//! file) the binary stays position-independent, linked with packed relative relocations
//! (`DT_RELR`), so that the loader reads a small table instead of 0.9 MB of relocations; that
//! needs binutils 2.38 or lld to link and glibc 2.36 to run.

fn main() {
    println!("cargo:rerun-if-changed=hot-symbols.txt");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let var = |name| std::env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let own_linker = [
        "linker-features",
        "fuse-ld",
        "link-self-contained",
        "linker=",
    ]
    .iter()
    .any(|f| flags.contains(f));
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if var("CARGO_CFG_TARGET_ARCH") != "x86_64" || own_linker {
        println!("cargo:rustc-link-arg-bin=timoni=-Wl,-z,pack-relative-relocs");
        return;
    }
    // The linker reads a copy in this script's output directory: cargo keeps the flags of a run
    // of this script until `hot-symbols.txt` changes, and a path into the source tree would
    // go stale when the checkout moves, or when another checkout shares the target directory.
    let source = std::path::Path::new(&var("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
    let order = std::path::Path::new(&var("OUT_DIR")).join("hot-symbols.txt");
    if let Err(e) = std::fs::copy(&source, &order) {
        println!("cargo:warning=no code layout: {}: {e}", source.display());
        println!("cargo:rustc-link-arg-bin=timoni=-Wl,-z,pack-relative-relocs");
        return;
    }
    println!("cargo:rustc-link-arg-bin=timoni=-no-pie");
    println!(
        "cargo:rustc-link-arg-bin=timoni=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    // Names that match no symbol (a stale file) are expected and harmless.
    println!("cargo:rustc-link-arg-bin=timoni=-Wl,--no-warn-symbol-ordering");
}

//! Link options of the `timoni` binary.
//!
//! On GNU/Linux the binary is linked with packed relative relocations (`DT_RELR`): the
//! position-independent executable keeps its address randomisation, but the dynamic loader no
//! longer reads a 0.9 MB relocation table and the pages it touched at start-up, which was about
//! 2 MB of every run's peak memory (see `docs/performance.md`). It needs binutils 2.38 or lld to
//! link and glibc 2.36 to run.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=timoni=-Wl,-z,pack-relative-relocs");
    }
}

//! The `timoni` command line in three steps: clap structs (`flags.rs` holds the shared groups),
//! then the resolved settings (`settings.rs`), then one call into `timoni-core` per subcommand
//! and its rendering. Every error, usage errors included, exits with code 1 and one clear
//! message, as Timoni does.

mod apply;
mod artifact;
mod build;
mod bundle;
mod bundle_cluster;
mod cue;
mod delete;
mod flags;
mod fmt;
mod inspect;
mod krm;
mod list;
mod module;
mod module_oci;
mod output;
mod positions;
mod project;
mod registry;
mod registry_provider;
mod runtime;
mod settings;
mod sign;
mod spool;
mod status;
mod vendor;
mod version;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: flags::GlobalFlags,
}

/// Declares [`Command`] and, in module `one`, each of its subcommands as a `Subcommand` of its
/// own (same attributes and doc comment, so the same clap tree), with the names that select it
/// on the command line: its name and aliases, none for a subcommand that is always parsed with
/// the whole tree.
macro_rules! commands {
    ($( $(#[$m:meta])* $variant:ident($args:ty) = [$($name:literal),*], )*) => {
        #[derive(Subcommand, Debug)]
        enum Command {
            $( $(#[$m])* $variant($args), )*
        }

        /// Each subcommand of [`Command`] alone.
        #[allow(non_snake_case)]
        mod one {
            $(
                pub(super) mod $variant {
                    #[allow(unused_imports)]
                    use super::super::*;

                    /// The one subcommand.
                    #[derive(clap::Subcommand, Debug)]
                    pub(crate) enum One {
                        $(#[$m])* $variant($args),
                    }

                    /// The names that select it.
                    pub(crate) const NAMES: &[&str] = &[$($name),*];

                    /// The command line parsed with the root and this subcommand alone.
                    pub(crate) fn parse() -> Cli {
                        let c = parse_with::<Root<One>>();
                        let One::$variant(args) = c.command;
                        Cli { command: Command::$variant(args), global: c.global }
                    }
                }
            )*
        }

        /// The parser of the subcommand that `name` selects, if it has one of its own.
        fn one_parser(name: &str) -> Option<fn() -> Cli> {
            $(
                if one::$variant::NAMES.contains(&name) {
                    return Some(one::$variant::parse);
                }
            )*
            None
        }

        /// For each subcommand: its names and its tree as the root alone with it builds it.
        #[cfg(test)]
        fn one_trees() -> Vec<(&'static [&'static str], clap::Command)> {
            vec![$( (one::$variant::NAMES, command::<Root<one::$variant::One>>()), )*]
        }
    };
}

commands! {
    /// Install or upgrade a module instance on the cluster.
    #[command(aliases = ["install", "upgrade"])]
    Apply(apply::Args) = ["apply", "install", "upgrade"],
    /// Delete a module instance and the objects it applied.
    #[command(alias = "uninstall")]
    Delete(delete::Args) = ["delete", "uninstall"],
    /// Show the status of an instance's objects.
    Status(status::Args) = ["status"],
    /// List the instances on the cluster.
    #[command(alias = "ls")]
    List(list::Args) = ["list", "ls"],
    /// Inspect what an instance's inventory records.
    Inspect(inspect::Args) = ["inspect"],
    /// Render an instance's Kubernetes objects to stdout.
    #[command(alias = "template")]
    Build(build::Args) = ["build", "template"],
    /// Build and validate bundles of instances.
    Bundle(bundle::Args) = ["bundle"],
    /// Show the values of runtimes.
    Runtime(runtime::Args) = ["runtime"],
    /// Work with modules: vet, show, init, vendor, and push/pull/list in registries.
    Mod(module::Args) = ["mod"],
    /// Print the version information.
    Version(version::Args) = ["version"],
    /// Generate a shell completion script.
    Completion(CompletionArgs) = [],
    /// Format CUE files.
    Fmt(fmt::Args) = ["fmt"],
    /// Evaluate, export, validate and format CUE, as the `cue` tool does.
    Cue(cue::Args) = [],
    /// Push, pull, tag and list generic Timoni artifacts.
    Artifact(artifact::ArtifactArgs) = ["artifact"],
    /// Log in to and out of container registries.
    Registry(registry::RegistryArgs) = ["registry"],
    /// Timoni Projects: push them, bootstrap clusters onto them, and inspect or nudge their
    /// reconciliation by the Timoni controller.
    Project(project::Args) = ["project"],
    /// Run as a KRM function (kustomize, kpt): build the Instance or Bundle of the
    /// ResourceList's functionConfig, or vet its items (`fn vet`).
    Fn(krm::Args) = ["fn"],
}

/// The arguments of `timoni completion`.
#[derive(clap::Args, Debug)]
struct CompletionArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

// The root of `timoni` with one subcommand `S` alone, and the global flags: the same name,
// attributes and doc comment as `Cli`, so the subcommand's help, usage and errors read the same
// as with the whole tree.
/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", about, long_about = None)]
struct Root<S: Subcommand> {
    #[command(subcommand)]
    command: S,
    #[command(flatten)]
    global: flags::GlobalFlags,
}

/// A message with absolute paths below the working directory written relative to it (`./x`),
/// as `cue` prints positions.
pub(crate) fn relative(msg: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) => msg.replace(&format!("{}/", cwd.display()), "./"),
        Err(_) => msg.to_string(),
    }
}

// The root of `timoni cue …`: `Root` without the global flags, which `timoni cue` does not take.
/// Timoni: a package manager for Kubernetes, powered by CUE.
#[derive(Parser, Debug)]
#[command(name = "timoni", about, long_about = None)]
struct Bare<S: Subcommand> {
    #[command(subcommand)]
    command: S,
}

/// What the command line asks for: `timoni cue …`, parsed alone, or any other command with the
/// global flags.
enum Parsed {
    Cue(cue::Args),
    Full(Box<Cli>),
}

/// The line `timoni -v` and `timoni --version` print.
const VERSION_LINE: &str = concat!("timoni version ", env!("CARGO_PKG_VERSION"), "\n");

/// Parses the command line as clap's `Parser::parse` does, exiting with clap's message on an
/// error (code 1, as cobra's usage errors; 0 for `--help`, `--version` and a command group
/// given without its subcommand, whose help goes to stdout), without tearing the
/// command tree down afterwards: dropping it costs a third of building it, on every run, for
/// memory the process returns when it exits a moment later.
///
/// Clap builds the whole tree it is given to parse one command line, and building the tree of
/// every subcommand is most of what `timoni --version` or a small `timoni cue export` costs. So
/// when the first argument names a subcommand, only the root (with the global flags) and that
/// subcommand are built: its help, usage and errors are the same, since they never show the
/// other subcommands. `timoni -v` and `timoni --version` alone print the version line without
/// any tree. Everything else (no argument, a flag first, `help`, `completion`, an unknown
/// subcommand) is parsed with the whole tree.
fn parse_args() -> Parsed {
    let mut args = std::env::args_os().skip(1);
    let (first, second) = (args.next(), args.next());
    let Some(first) = first.as_ref().and_then(|a| a.to_str()) else {
        return Parsed::Full(Box::new(parse_with::<Cli>()));
    };
    if second.is_none() && (first == "-v" || first == "--version") {
        let _ = std::io::Write::write_all(&mut std::io::stdout(), VERSION_LINE.as_bytes());
        std::process::exit(0)
    }
    if first == "cue" {
        let one::Cue::One::Cue(args) = parse_with::<Bare<one::Cue::One>>().command;
        return Parsed::Cue(args);
    }
    match one_parser(first) {
        Some(parse) => Parsed::Full(Box::new(parse())),
        None => Parsed::Full(Box::new(parse_with::<Cli>())),
    }
}

/// The command tree of `P` with the rules of `flags.rs` applied and Timoni's root `-v/--version`
/// (printing `timoni version X`).
fn command<P: clap::CommandFactory>() -> clap::Command {
    let cmd = P::command()
        .version(concat!("version ", env!("CARGO_PKG_VERSION")))
        .disable_version_flag(true)
        .arg(
            clap::Arg::new("print-version")
                .short('v')
                .long("version")
                .action(clap::ArgAction::Version)
                .help("Print the version")
                .help_heading(None::<&str>),
        );
    flags::go_bools(cmd)
}

fn parse_with<P: clap::CommandFactory + clap::FromArgMatches>() -> P {
    let mut cmd = command::<P>();
    let parsed = cmd
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut m| {
            let p = P::from_arg_matches_mut(&mut m);
            std::mem::forget(m);
            p
        });
    match parsed {
        Ok(p) => {
            // Dropped rather than kept to the exit: the whole tree of `timoni` is about 0.7 MB
            // of heap, which the build would otherwise add to its peak.
            drop(cmd);
            p
        }
        Err(e) => {
            let e = e.format(&mut cmd);
            // A command group without its subcommand prints its help, as cobra does.
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let text = e.render().to_string();
                let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
                std::process::exit(0)
            }
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 1 } else { 0 })
        }
    }
}

fn main() -> ExitCode {
    end_quietly_on_closed_pipe();
    let cli = match parse_args() {
        Parsed::Cue(args) => {
            // Colours only on a terminal, so that piped output and snapshots are plain text; and
            // plain message lines, as the `cue` tool prints them.
            output::init(output::color_default(), false);
            set_miette_hook(output::colored());
            return finish(cue::run(args));
        }
        Parsed::Full(cli) => cli,
    };
    let settings = settings::Settings::resolve(&cli.global);
    output::init(settings.log_color, settings.log_pretty);
    set_miette_hook(output::colored());
    let s = &settings;
    let result = match cli.command {
        Command::Apply(args) => apply::run(args, s),
        Command::Delete(args) => delete::run(args, s),
        Command::Status(args) => status::run(args, s),
        Command::List(args) => list::run(args, s),
        Command::Inspect(args) => inspect::run(args, s),
        Command::Build(args) => build::run(args, s),
        Command::Bundle(args) => bundle::run(args, s),
        Command::Runtime(args) => runtime::run(args, s),
        Command::Mod(args) => module::run(args, s),
        Command::Version(args) => version::run(args),
        Command::Completion(CompletionArgs { shell }) => {
            let mut cmd = command::<Cli>();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "timoni", &mut script);
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
            Ok(ExitCode::SUCCESS)
        }
        Command::Fmt(args) => fmt::run(args),
        Command::Cue(args) => cue::run(args),
        Command::Artifact(args) => artifact::run_artifact(args, s),
        Command::Registry(args) => registry::run_registry(args, s),
        Command::Project(args) => project::run(args, s),
        Command::Fn(args) => krm::run(args, s),
    };
    finish(result)
}

/// Renders diagnostics with colours and Unicode only when `color` (`--log-color`, else whether
/// stderr is a terminal).
fn set_miette_hook(color: bool) {
    let _ = miette::set_hook(Box::new(move |_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .color(color)
                .unicode(color)
                .build(),
        )
    }));
}

/// The exit code of a command's result, printing its error.
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            output::error(format!("{e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// A reader that stops reading (`timoni build | head`) ends the process quietly, by `SIGPIPE`,
/// as it ends Timoni (a Go program dies of the signal when a write to its stdout or stderr
/// finds the pipe closed). Rust's runtime ignores the signal, so such a write would fail
/// instead: `println!` would panic and a streamed build would end with an `ERR` line. Sockets
/// are not affected: the standard library writes to them with `MSG_NOSIGNAL`.
#[allow(unsafe_code)]
fn end_quietly_on_closed_pipe() {
    // SAFETY: `signal` only sets the disposition of `SIGPIPE` back to the default; no handler
    // runs, and no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `pow` and `log2` are the only functions of the C math library that anything in the binary
/// calls (indicatif's and num-bigint's `f64::powf` and `f64::log2`; CUE's float functions
/// use the `libm` crate). Defining them here, from the same crate, keeps the process from
/// loading `libm.so` at all.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn log2(x: f64) -> f64 {
    libm::log2(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output of parsing `args` with `cmd`, as clap renders its help or error.
    fn rendered(mut cmd: clap::Command, args: &[&str]) -> String {
        match cmd.try_get_matches_from_mut(args) {
            Ok(_) => "parsed".to_string(),
            Err(e) => e.format(&mut cmd).render().to_string(),
        }
    }

    #[test]
    fn each_subcommand_alone_is_the_subcommand_of_the_whole_tree() {
        let full = command::<Cli>();
        let ones = one_trees();
        let mut selected = Vec::new();
        for sub in full.get_subcommands() {
            let names: Vec<&str> = std::iter::once(sub.get_name())
                .chain(sub.get_all_aliases())
                .collect();
            let Some((own, alone)) = ones.iter().find(|(n, _)| n.contains(&sub.get_name())) else {
                // Parsed with the whole tree.
                assert!(
                    ["completion", "cue", "help"].contains(&sub.get_name()),
                    "{} has no tree of its own",
                    sub.get_name()
                );
                continue;
            };
            assert_eq!(*own, names.as_slice(), "the names of {}", sub.get_name());
            // Display orders count the items added to the root before, so they differ; they
            // only order the root's own help, which is always rendered from the whole tree.
            let subs: Vec<_> = alone.get_subcommands().collect();
            assert_eq!(subs.len(), 1, "{} alone", sub.get_name());
            assert_eq!(
                format!("{:?}", subs[0].clone().display_order(0)),
                format!("{:?}", sub.clone().display_order(0))
            );
            let flags = |c: &clap::Command| {
                c.get_arguments()
                    .map(|a| format!("{:?}", a.clone().display_order(0)))
                    .collect::<Vec<_>>()
            };
            assert_eq!(flags(alone), flags(&full), "the root's flags");
            for name in &names {
                for tail in [&["--help"][..], &["-h"], &[], &["--no-such-flag"]] {
                    let args: Vec<&str> = ["timoni", name].iter().chain(tail).copied().collect();
                    assert_eq!(
                        rendered(alone.clone(), &args),
                        rendered(command::<Cli>(), &args),
                        "{args:?}"
                    );
                }
                selected.push(*name);
            }
        }
        let mut named: Vec<&str> = ones.iter().flat_map(|(n, _)| n.iter().copied()).collect();
        named.sort_unstable();
        selected.sort_unstable();
        assert_eq!(
            named, selected,
            "every name selects a subcommand of the whole tree"
        );
    }

    #[test]
    fn the_version_line_is_what_clap_prints() {
        for flag in ["-v", "--version"] {
            assert_eq!(rendered(command::<Cli>(), &["timoni", flag]), VERSION_LINE);
        }
    }
}

//! Everything `timoni` shows a person, in one place: Timoni's console log lines, the aligned
//! tables, `-o json|yaml`, and the spinner on long operations.
//!
//! Log lines are written as Timoni's logger (zerolog's console writer behind logr) writes them,
//! on stderr: `10:32AM INF b:bundle > c:cluster > i:instance > message`. The time (Go's
//! `time.Kitchen`, local time) and the level column appear with `--log-pretty` (the default) and
//! are left out with `--log-pretty=false`; the caller chain ends with `>`. With colour (on a
//! terminal unless `--log-color=false` or `NO_COLOR`), the escape sequences are those of zerolog
//! and of Timoni's `fatih/color` helpers byte for byte, which is why they are written here rather
//! than through a styling crate that would combine attributes differently.
//!
//! Tables go to stdout with their headers upper-cased and every cell padded to its column's width,
//! columns separated by a tab, as Timoni's `tablewriter` renders them.
//!
//! The spinner (Timoni's braille spinner, on stderr) is drawn only on a terminal; log lines
//! written while it spins are printed above it.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cue_eval::encode::{Data, Field, to_yaml};
use serde::Serialize;

/// How log lines are written, fixed once per run by [`init`].
#[derive(Debug, Clone, Copy)]
struct Style {
    color: bool,
    pretty: bool,
    terminal: bool,
}

static STYLE: OnceLock<Style> = OnceLock::new();
static SPINNER: Mutex<Option<indicatif::ProgressBar>> = Mutex::new(None);

/// Sets the log style of this run: `color` from `--log-color` (else [`color_default`]),
/// `pretty` from `--log-pretty`.
pub fn init(color: bool, pretty: bool) {
    let _ = STYLE.set(Style {
        color: color && !no_color_env(),
        pretty,
        terminal: std::io::stderr().is_terminal(),
    });
}

fn style() -> Style {
    *STYLE.get_or_init(|| Style {
        color: false,
        pretty: true,
        terminal: std::io::stderr().is_terminal(),
    })
}

/// Whether logs are coloured when `--log-color` is not given: on a terminal, unless `NO_COLOR`
/// is set or `TERM=dumb`, as `fatih/color` decides.
pub fn color_default() -> bool {
    std::io::stderr().is_terminal()
        && !no_color_env()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether the logs of this run are coloured (miette follows the same choice).
pub fn colored() -> bool {
    style().color
}

/// `s` wrapped in the ANSI attributes `codes` (`"90;3"`), when colours are on.
fn paint(codes: &str, s: &str) -> String {
    if style().color && !s.is_empty() {
        format!("\x1b[{codes}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// The subject of a message: an object, a name, a path (cyan).
pub fn subject(s: &str) -> String {
    paint("36", s)
}

/// `(dry run)` or `(server dry run)` (grey italic).
pub fn dry_run(s: &str) -> String {
    paint("90;3", s)
}

/// A note of success such as `valid resource` (green).
pub fn note(s: &str) -> String {
    paint("32", s)
}

/// A note of warning such as `valid image (digest missing)` (yellow).
pub fn caution(s: &str) -> String {
    paint("33", s)
}

/// An error text inside a message (bright red).
pub fn error_text(s: &str) -> String {
    paint("91", s)
}

/// An object and what was done to it: `Deployment/ns/name configured`, coloured per action.
pub fn change(object: &str, action: &str) -> String {
    let codes = match action {
        "created" => "92",
        "configured" => "96",
        "unchanged" | "skipped" => "90",
        "deleted" => "31",
        _ => "33;3",
    };
    format!("{} {}", subject(object), paint(codes, action))
}

/// A kstatus status (`Current`, `InProgress`, ...), coloured as Timoni colours it.
pub fn status(s: &str) -> String {
    let codes = match s {
        "InProgress" => "96;3",
        "Failed" => "91",
        "Current" => "92",
        "Terminating" => "31",
        _ => "33;3",
    };
    paint(codes, s)
}

/// Who a log line is about: `b:bundle > c:cluster > i:instance`, as Timoni's callers.
#[derive(Debug, Clone, Default)]
pub struct Log {
    parts: Vec<(&'static str, String)>,
}

impl Log {
    /// A log line about nothing in particular.
    pub fn new() -> Log {
        Log::default()
    }

    fn with(mut self, prefix: &'static str, name: &str) -> Log {
        if !name.is_empty() {
            self.parts.push((prefix, name.to_string()));
        }
        self
    }

    /// About bundle `name`.
    pub fn bundle(self, name: &str) -> Log {
        self.with("b:", name)
    }

    /// About runtime cluster `name` (nothing for the default cluster, given as `""`).
    pub fn cluster(self, name: &str) -> Log {
        self.with("c:", name)
    }

    /// About instance `name`.
    pub fn instance(self, name: &str) -> Log {
        self.with("i:", name)
    }

    /// About runtime `name`.
    pub fn runtime(self, name: &str) -> Log {
        self.with("r:", name)
    }

    /// Writes an `INF` line.
    pub fn info(&self, msg: impl AsRef<str>) {
        emit(&self.line(Level::Info, msg.as_ref()));
    }

    /// Writes an `ERR` line.
    pub fn error(&self, msg: impl AsRef<str>) {
        emit(&self.line(Level::Error, msg.as_ref()));
    }

    fn caller(&self) -> String {
        let arrow = format!(" {} ", paint("36", ">"));
        self.parts
            .iter()
            .map(|(p, n)| paint("90", p) + &paint("95", n))
            .collect::<Vec<_>>()
            .join(&arrow)
    }

    /// The line as zerolog's console writer lays it out: time, level, caller, message, each
    /// left out when empty.
    fn line(&self, level: Level, msg: &str) -> String {
        let s = style();
        let mut parts = Vec::with_capacity(4);
        if s.pretty {
            parts.push(paint("90", &kitchen_now()));
            parts.push(match level {
                Level::Info => paint("32", "INF"),
                Level::Error => paint("31", "ERR"),
            });
        }
        if !self.parts.is_empty() {
            parts.push(paint("1", &self.caller()) + &paint("36", " >"));
        }
        if !msg.is_empty() {
            parts.push(paint("1", msg));
        }
        parts.join(" ")
    }
}

#[derive(Debug, Clone, Copy)]
enum Level {
    Info,
    Error,
}

/// Writes an `INF` line without a caller.
pub fn info(msg: impl AsRef<str>) {
    Log::new().info(msg)
}

/// Writes an `ERR` line without a caller: how every failed command ends.
pub fn error(msg: impl AsRef<str>) {
    Log::new().error(msg)
}

/// A whole number of seconds as Go prints a `time.Duration`: `3s`, `2m0s`, `1h0m5s`.
pub fn go_seconds(secs: u64) -> String {
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s}s"),
        _ => format!("{h}h{m}m{s}s"),
    }
}

/// The local time as Go's `time.Kitchen` (`3:04PM`).
fn kitchen_now() -> String {
    jiff::Zoned::now().strftime("%-I:%M%p").to_string()
}

/// Writes a line on stderr, above the spinner if one is drawn.
fn emit(line: &str) {
    let write = || {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    };
    match SPINNER.lock().ok().as_deref().and_then(Option::as_ref) {
        Some(pb) => pb.suspend(write),
        None => write(),
    }
}

/// A spinner with a message on stderr while a long operation runs, drawn only on a terminal;
/// cleared when dropped.
pub struct Spinner {
    bar: Option<indicatif::ProgressBar>,
}

/// Starts a spinner with `msg` (Timoni's `StartSpinner`).
pub fn spinner(msg: impl Into<String>) -> Spinner {
    if !style().terminal {
        return Spinner { bar: None };
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(st) = indicatif::ProgressStyle::with_template("{spinner} {msg}") {
        bar.set_style(st.tick_chars("⣾⣽⣻⢿⡿⣟⣯⣷ "));
    }
    bar.set_message(msg.into());
    bar.enable_steady_tick(Duration::from_millis(100));
    if let Ok(mut s) = SPINNER.lock() {
        *s = Some(bar.clone());
    }
    Spinner { bar: Some(bar) }
}

impl Spinner {
    /// Replaces the message beside the spinner.
    pub fn set_message(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
            if let Ok(mut s) = SPINNER.lock() {
                *s = None;
            }
        }
    }
}

/// A table as Timoni prints it: upper-cased headers, every cell padded to its column's width,
/// columns separated by a tab.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let header: Vec<String> = headers.iter().map(|h| h.to_uppercase()).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        let cells: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let cell = row.get(i).map_or("", String::as_str);
                format!("{cell}{}", " ".repeat(w - cell.chars().count()))
            })
            .collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

/// Prints [`table`] on stdout.
pub fn print_table(headers: &[&str], rows: &[Vec<String>]) {
    print_stdout(&table(headers, rows));
}

/// Writes `text` on stdout; a closed pipe (`| head`) is not an error worth a message.
pub fn print_stdout(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `-o/--output` where Timoni has it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// Prints `value` on stdout as indented JSON or as YAML.
pub fn render(value: &impl Serialize, format: Format) -> anyhow::Result<()> {
    let v = serde_json::to_value(value)?;
    match format {
        Format::Json => print_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?)),
        Format::Yaml => print_stdout(&to_yaml(&to_data(&v))),
    }
    Ok(())
}

fn to_data(v: &serde_json::Value) -> Data {
    match v {
        serde_json::Value::Null => Data::Null,
        serde_json::Value::Bool(b) => Data::Bool(*b),
        serde_json::Value::Number(n) => Data::int(n.to_string()),
        serde_json::Value::String(s) => Data::string(s.clone()),
        serde_json::Value::Array(a) => Data::List(a.iter().map(to_data).collect()),
        serde_json::Value::Object(m) => {
            Data::Struct(m.iter().map(|(k, v)| Field::new(k, to_data(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{go_seconds, table};

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_seconds(0), "0s");
        assert_eq!(go_seconds(59), "59s");
        assert_eq!(go_seconds(120), "2m0s");
        assert_eq!(go_seconds(3605), "1h0m5s");
    }

    #[test]
    fn table_cells_are_padded_to_the_column_width() {
        let rows = vec![
            vec!["podinfo".to_string(), "oci://ghcr.io/m/podinfo".to_string()],
            vec!["redis".to_string(), "oci://r/redis".to_string()],
        ];
        insta::assert_snapshot!(table(&["name", "module"], &rows).replace('\t', "→"), @r"
        NAME   →MODULE                 
        podinfo→oci://ghcr.io/m/podinfo
        redis  →oci://r/redis          
        ");
    }
}

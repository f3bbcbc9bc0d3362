//! The differential check: small generated CUE programs exported by our evaluator and by an
//! oracle `cue` binary (CUE v0.17.1), compared.
//!
//! [`generate`] writes a program of one [`Family`] from a seed, with a tiny xorshift64* PRNG
//! written here ([`Rng`]; no `rand` dependency), so a seed always gives the same program. The
//! families aim at the parts of the evaluator where bugs hide: closedness through references and
//! embeddings, disjunction defaults, field order from merged literals and comprehensions, and
//! errors inside structs read by their siblings.
//!
//! Each program is written as `in.cue` in a scratch directory. Ours is exported through
//! [`crate::wild::export_json`] (the facade, as `timoni cue export --out json`); the oracle runs
//! `cue export --out json in.cue` there with `CUE_REGISTRY=none`. Both sides have a time limit.
//! A program is a finding when the exit status differs (zero or not), when both succeed with
//! different stdout, or when ours times out or panics. Findings are grouped by a [`shape`]: the
//! template and structural choices that produced the program plus the kind of difference (and,
//! where `cue` fails, its error with names and values blanked), so one bug is reported once.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::json;

/// The file name programs are written to.
pub const FILE: &str = "in.cue";

/// The comment line that opens every recorded case of `conformance/testdata/diff`.
pub const RECORDED_HEADER: &str =
    "// Expected output recorded from cue v0.17.1 (cue export --out json).";

/// xorshift64* (Vigna): small, fast and good enough to pick templates and names.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so seeds 0, 1, 2 ... start far apart (and never at 0).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn coin(&mut self) -> bool {
        self.below(2) == 0
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// `k` distinct labels from a pool, in random order.
    pub fn labels(&mut self, k: usize) -> Vec<&'static str> {
        let mut pool = LABELS.to_vec();
        self.shuffle(&mut pool);
        pool.truncate(k);
        pool
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// A small integer literal.
    pub fn int(&mut self) -> i64 {
        self.below(5) as i64 + 1
    }
}

const LABELS: &[&str] = &["a", "b", "c", "d", "e", "f", "g", "h", "m", "n", "p", "q"];

/// The families of programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// Closedness through references and embeddings.
    Closed,
    /// Disjunction defaults.
    Defaults,
    /// Comprehensions and field order.
    Order,
    /// Errors inside structs and the siblings that read them.
    Errors,
}

impl Family {
    pub const ALL: [Family; 4] = [
        Family::Closed,
        Family::Defaults,
        Family::Order,
        Family::Errors,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::Closed => "closed",
            Family::Defaults => "defaults",
            Family::Order => "order",
            Family::Errors => "errors",
        }
    }
}

/// A generated program and the template choices that made it (the structural part of its
/// shape: names and values are left out).
#[derive(Debug, Clone)]
pub struct Program {
    pub family: Family,
    pub text: String,
    pub template: String,
}

/// The program of `family` for `seed`.
pub fn generate(family: Family, seed: u64) -> Program {
    // Each family has its own stream, so adding a template to one leaves the others' programs.
    let mut r = Rng::new(seed ^ ((family as u64 + 1) << 56));
    let mut t = Template::default();
    let text = match family {
        Family::Closed => closed(&mut r, &mut t),
        Family::Defaults => defaults(&mut r, &mut t),
        Family::Order => order(&mut r, &mut t),
        Family::Errors => errors(&mut r, &mut t),
    };
    Program {
        family,
        text,
        template: t.key(),
    }
}

/// The structural choices made while writing a program.
#[derive(Default)]
struct Template(Vec<String>);

impl Template {
    fn set(&mut self, choice: impl Into<String>) {
        self.0.push(choice.into());
    }

    /// Records a yes/no choice under `name` and returns it.
    fn flag(&mut self, r: &mut Rng, name: &str) -> bool {
        let on = r.coin();
        if on {
            self.set(name);
        }
        on
    }

    fn key(&self) -> String {
        self.0.join(",").replace(['\n', '\t'], " ")
    }
}

fn closed(r: &mut Rng, t: &mut Template) -> String {
    let l = r.labels(4);
    let (a, b, c, d) = (l[0], l[1], l[2], l[3]);
    let (n, m) = (r.int(), r.int());
    let open = |r: &mut Rng, t: &mut Template| {
        if t.flag(r, "open") { "\n\t..." } else { "" }
    };
    match r.below(17) {
        14 => {
            t.set("select-variants");
            let dots = open(r, t);
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let head = format!("#D: {{\n\t{b}: {{\n\t\t{a}: *{n} | int{dots}\n\t}}\n}}\n");
            let body = match r.below(5) {
                0 => {
                    t.set("def-select");
                    format!("w: #D.{b} & {{{a}: {n}{extra}}}\n")
                }
                1 => {
                    t.set("paren-select");
                    format!("w: (#D & {{}}).{b} & {{{a}: {n}{extra}}}\n")
                }
                2 => {
                    t.set("let-select");
                    format!("let V = #D\nw: V.{b} & {{{a}: {n}{extra}}}\n")
                }
                3 => {
                    t.set("embed-select");
                    format!("_v: #D\nw: {{\n\t_v.{b}\n\t{a}: {n}{extra}\n}}\n")
                }
                _ => {
                    t.set("def-field-of-def");
                    format!("#E: {{{d}: #D.{b}}}\nw: #E & {{{d}: {{{a}: {n}{extra}}}}}\n")
                }
            };
            format!("{head}{body}")
        }
        15 => {
            t.set("embed-chain");
            let dots = open(r, t);
            let extra = if t.flag(r, "extra") {
                format!("\n\t{c}: {m}")
            } else {
                String::new()
            };
            let mid = if t.flag(r, "mid-def") { "#X" } else { "x" };
            format!(
                "#D: {{\n\t{a}: {n}{dots}\n}}\n{mid}: {{\n\t#D\n}}\ny: {{\n\t{mid}{extra}\n}}\n"
            )
        }
        16 => {
            t.set("closed-in-disjunction-default");
            let with = match r.below(3) {
                0 => format!("{a}: {n}"),
                1 => {
                    t.set("second");
                    format!("{b}: {m}")
                }
                _ => {
                    t.set("extra");
                    format!("{c}: {m}")
                }
            };
            format!("#A: {{{a}: int}}\n#B: {{{b}: int}}\nx: *#A | #B\ny: x & {{{with}}}\n")
        }
        11 => {
            t.set("embed-def-typed-value");
            let extra = if t.flag(r, "extra") {
                format!("\n\t{c}: {m}")
            } else {
                String::new()
            };
            let hidden = if t.flag(r, "hidden") { "_" } else { "" };
            format!(
                "#D: {{{a}: int}}\n{hidden}v: #D & {{{a}: {n}}}\nx: {{\n\t{hidden}v{extra}\n}}\n"
            )
        }
        12 => {
            t.set("def-with-comprehension");
            let given = match r.below(3) {
                0 => format!("{a}: {n}"),
                1 => {
                    t.set("yielded");
                    format!("{a}: {n}, {b}: {m}")
                }
                _ => {
                    t.set("extra");
                    format!("{a}: {n}, {c}: {m}")
                }
            };
            let cond = if t.flag(r, "false") { "false" } else { "true" };
            format!(
                "#D: {{\n\t{a}: int\n\tif {cond} {{\n\t\t{b}: {m}\n\t}}\n}}\nx: #D & {{{given}}}\n"
            )
        }
        13 => {
            t.set("list-of-defs");
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let via = if t.flag(r, "via-ref") {
                format!("l: [...#D]\nx: l & [{{{a}: {n}{extra}}}]\n")
            } else {
                format!("x: [...#D] & [{{{a}: {n}{extra}}}]\n")
            };
            format!("#D: {{{a}: int}}\n{via}")
        }
        0 => {
            t.set("def&lit");
            let dots = open(r, t);
            let extra = match r.below(3) {
                0 => String::new(),
                1 => {
                    t.set("optional-given");
                    format!(", {b}: \"s\"")
                }
                _ => {
                    t.set("extra");
                    format!(", {c}: {m}")
                }
            };
            format!("#D: {{\n\t{a}: int\n\t{b}?: string{dots}\n}}\nx: #D & {{{a}: {n}{extra}}}\n")
        }
        1 => {
            t.set("select-from-def-value");
            let dots = open(r, t);
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let hidden = if t.flag(r, "hidden") { "_" } else { "" };
            format!(
                "#D: {{\n\t{b}: {{\n\t\t{a}: int{dots}\n\t}}\n\t{d}: int\n}}\n{hidden}v: #D & {{{b}: {a}: {n}, {d}: {m}}}\nw: {hidden}v.{b} & {{{a}: {n}{extra}}}\n"
            )
        }
        2 => {
            t.set("embed-def-in-struct");
            let dots = open(r, t);
            let inner = if t.flag(r, "field-beside") {
                format!("\n\t{b}: {m}")
            } else {
                String::new()
            };
            let after = match r.below(3) {
                0 => String::new(),
                1 => {
                    t.set("unify-extra");
                    format!("y: x & {{{c}: {n}}}\n")
                }
                _ => {
                    t.set("unify-known");
                    format!("y: x & {{{a}: {n}}}\n")
                }
            };
            format!("#D: {{\n\t{a}: {n}{dots}\n}}\nx: {{\n\t#D{inner}\n}}\n{after}")
        }
        3 => {
            t.set("embed-def-in-def");
            let dots = open(r, t);
            let extra = match r.below(3) {
                0 => String::new(),
                1 => {
                    t.set("declared");
                    format!(", {b}: {m}")
                }
                _ => {
                    t.set("extra");
                    format!(", {c}: {m}")
                }
            };
            format!(
                "#D: {{\n\t{a}: int\n}}\n#E: {{\n\t#D\n\t{b}?: int{dots}\n}}\nx: #E & {{{a}: {n}{extra}}}\n"
            )
        }
        4 => {
            t.set("def-in-regular-field");
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let via = if t.flag(r, "via-ref") {
                format!("s: {{{b}: #D}}\nt: s & {{{b}: {{{a}: {n}{extra}}}}}\n")
            } else {
                format!("s: {{{b}: #D & {{{a}: {n}}}}}\nt: s.{b} & {{{a}: {n}{extra}}}\n")
            };
            format!("#D: {{{a}: int}}\n{via}")
        }
        5 => {
            t.set("let-alias");
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let dots = open(r, t);
            format!("#D: {{\n\t{a}: int{dots}\n}}\nlet L = #D\nx: L & {{{a}: {n}{extra}}}\n")
        }
        6 => {
            t.set("nested-defs");
            let extra = if t.flag(r, "extra") {
                format!(", {c}: {m}")
            } else {
                String::new()
            };
            let embed = if t.flag(r, "embedded") {
                format!("#B: {{\n\t{b}: #A\n\t#C\n}}\n#C: {{{d}: int}}\n")
            } else {
                format!("#B: {{\n\t{b}: #A\n\t{d}: int\n}}\n")
            };
            format!("#A: {{{a}: int}}\n{embed}x: #B & {{{d}: {n}, {b}: {{{a}: {m}{extra}}}}}\n")
        }
        7 => {
            t.set("reopen");
            let how = match r.below(3) {
                0 => {
                    t.set("embed-with-dots");
                    "{\n\t#D\n\t...\n}"
                }
                1 => {
                    t.set("and-dots");
                    "#D & {...}"
                }
                _ => {
                    t.set("embed-only");
                    "{\n\t#D\n}"
                }
            };
            format!("#D: {{{a}: {n}}}\nx: {how}\ny: x & {{{c}: {m}}}\n")
        }
        8 => {
            t.set("pattern");
            let pat = if t.flag(r, "regexp") {
                format!("[=~\"^{a}\"]: int")
            } else {
                "[string]: int".to_owned()
            };
            let other = if t.flag(r, "other") {
                format!(", {b}: {m}")
            } else {
                String::new()
            };
            format!("#D: {{\n\t{pat}\n\t{d}?: int\n}}\nx: #D & {{{a}{a}: {n}{other}}}\n")
        }
        9 => {
            t.set("close");
            let extra = if t.flag(r, "extra") {
                format!("{c}: {m}")
            } else {
                format!("{a}: {n}")
            };
            if t.flag(r, "via-ref") {
                format!("s: close({{{a}: {n}}})\nx: s & {{{extra}}}\n")
            } else {
                format!("x: close({{{a}: {n}}}) & {{{extra}}}\n")
            }
        }
        _ => {
            t.set("def-disjunction");
            let pick = match r.below(3) {
                0 => format!("{a}: {n}"),
                1 => {
                    t.set("second");
                    format!("{b}: {n}")
                }
                _ => {
                    t.set("neither");
                    format!("{c}: {n}")
                }
            };
            format!("#A: {{{a}: int}}\n#B: {{{b}: int}}\nx: (#A | #B) & {{{pick}}}\n")
        }
    }
}

fn defaults(r: &mut Rng, t: &mut Template) -> String {
    let l = r.labels(4);
    let (a, b, c, d) = (l[0], l[1], l[2], l[3]);
    let (n, m) = (r.int(), r.int() + 5);
    match r.below(14) {
        10 => {
            t.set("default-vs-constraint");
            let other = r.pick(&["int", ">0", ">N", "<N", "*N | int", "*M | int", "N | M"]);
            t.set(other);
            let other = other
                .replace('N', &n.to_string())
                .replace('M', &m.to_string());
            let def = t.flag(r, "def");
            if def {
                format!("#D: {{{a}: *{n} | int}}\nx: #D & {{{a}: {other}}}\n")
            } else {
                format!("{a}: *{n} | int\n{a}: {other}\n")
            }
        }
        11 => {
            t.set("tagged-struct-disjunction");
            let pick = match r.below(3) {
                0 => "k: \"p\"".to_owned(),
                1 => {
                    t.set("second");
                    "k: \"q\"".to_owned()
                }
                _ => {
                    t.set("field-only");
                    format!("{b}: {m}")
                }
            };
            let def = t.flag(r, "def");
            let name = if def { "#S" } else { "s" };
            format!(
                "{name}: *{{k: \"p\", {a}: {n}}} | {{k: \"q\", {b}: int}}\nx: {name} & {{{pick}}}\n"
            )
        }
        12 => {
            t.set("null-or-struct");
            let more = if t.flag(r, "more") {
                format!("\nx: {a}: {n}")
            } else {
                String::new()
            };
            let first = if t.flag(r, "null-default") {
                format!("*null | {{{a}: int}}")
            } else {
                format!("null | *{{{a}: *{n} | int}}")
            };
            format!("x: {first}{more}\ny: x\n")
        }
        13 => {
            t.set("nested-def-default");
            let read = match r.below(3) {
                0 => format!("x: #D.{b}.{a}"),
                1 => {
                    t.set("via-value");
                    format!("_v: #D\nx: _v.{b}.{a} + 1")
                }
                _ => {
                    t.set("override-nested");
                    format!("x: #D & {{{b}: {a}: {m}}}")
                }
            };
            format!("#D: {{{b}: {{{a}: *{n} | {m}}}}}\n{read}\n")
        }
        8 => {
            t.set("default-in-comprehension");
            let body = if t.flag(r, "list") {
                "l: [for _, v in s {v}]".to_owned()
            } else {
                "x: {\n\tfor k, v in s {\n\t\t(k): v\n\t}\n}".to_owned()
            };
            let hidden = t.flag(r, "hidden");
            let body = if hidden {
                body.replace(" s ", " _s ")
            } else {
                body
            };
            let s_name = if hidden { "_s" } else { "s" };
            format!("{s_name}: {{{a}: *{n} | {m}, {b}: *\"s\" | string}}\n{body}\n")
        }
        9 => {
            t.set("two-def-defaults");
            let use_ = match r.below(3) {
                0 => "x: #A & #B".to_owned(),
                1 => {
                    t.set("given");
                    format!("x: #A & #B & {{{a}: {m}}}")
                }
                _ => {
                    t.set("same-default");
                    "x: #A & #A".to_owned()
                }
            };
            format!("#A: {{{a}: *{n} | int}}\n#B: {{{a}: *{m} | int}}\n{use_}\n")
        }
        0 => {
            t.set("def-defaults");
            let struct_field = if t.flag(r, "struct-default") {
                format!("\n\t{c}: *{{n: {n}}} | {{m: {m}}}")
            } else {
                String::new()
            };
            let given = match r.below(3) {
                0 => String::new(),
                1 => {
                    t.set("override");
                    format!("{a}: {m}")
                }
                _ => {
                    t.set("override-bad");
                    format!("{b}: {m}")
                }
            };
            format!(
                "#D: {{\n\t{a}: *{n} | int\n\t{b}: *\"s\" | string{struct_field}\n}}\nx: #D & {{{given}}}\ny: #D\n"
            )
        }
        1 => {
            t.set("reference");
            let use_ = r.pick(&[
                "b: a",
                "b: a + 1",
                "b: [a]",
                "b: \"\\(a)\"",
                "b: a & M",
                "b: {v: a}",
                "b: a | M",
                "b: *a | M",
            ]);
            t.set(use_);
            let body = use_
                .replace('b', b)
                .replace('a', a)
                .replace('M', &m.to_string());
            format!("{a}: *{n} | {m}\n{body}\n")
        }
        2 => {
            t.set("struct-disjunction");
            let def = t.flag(r, "def");
            let name = if def { "#S" } else { "s" };
            let with = match r.below(3) {
                0 => format!("{c}: {n}"),
                1 => {
                    t.set("first-field");
                    format!("{a}: {n}")
                }
                _ => {
                    t.set("second-field");
                    format!("{b}: {m}")
                }
            };
            format!("{name}: *{{{a}: {n}}} | {{{b}: {m}}}\nt: {name} & {{{with}}}\n")
        }
        3 => {
            t.set("nested");
            let expr = r.pick(&[
                "*N | *M | 3",
                "(*N | M) & (M | *N)",
                "(*N | M) & (*M | N)",
                "*(*N | M) | 3",
                "*N | (*M | 3)",
                "(*N | M | 3) & (N | M)",
                "*N | M | *N",
            ]);
            t.set(expr);
            let expr = expr
                .replace('N', &n.to_string())
                .replace('M', &m.to_string());
            let read = if t.flag(r, "read") {
                format!("{b}: {a} + 0\n")
            } else {
                String::new()
            };
            format!("{a}: {expr}\n{read}")
        }
        4 => {
            t.set("def-field-via-value");
            let how = match r.below(4) {
                0 => format!("w: v.{a}"),
                1 => {
                    t.set("override");
                    format!("w: v & {{{a}: {m}}}")
                }
                2 => {
                    t.set("arith");
                    format!("w: v.{a} + 1")
                }
                _ => {
                    t.set("list");
                    format!("w: [v.{a}, v.{b}]")
                }
            };
            let hidden = if t.flag(r, "hidden") { "_" } else { "" };
            let how = how.replace("v", &format!("{hidden}v"));
            format!("#D: {{\n\t{a}: *{n} | int\n\t{b}: *\"s\" | string\n}}\n{hidden}v: #D\n{how}\n")
        }
        5 => {
            t.set("condition");
            let test = if t.flag(r, "eq-default") {
                format!("x.{a} == {n}")
            } else {
                format!("x.{a} == {m}")
            };
            format!(
                "x: {{{a}: *{n} | {m}}}\nif {test} {{\n\t{c}: 1\n}}\n{d}: [if {test} {{x.{a}}}]\n"
            )
        }
        6 => {
            t.set("embedding");
            match r.below(3) {
                0 => {
                    t.set("scalar");
                    format!("x: {{\n\t*{n} | {m}\n}}\n")
                }
                1 => {
                    t.set("def-plus-field");
                    format!("#D: {{{a}: *{n} | int}}\nx: {{\n\t#D\n\t{a}: {m}\n}}\n")
                }
                _ => {
                    t.set("def-alone");
                    format!("#D: {{{a}: *{n} | int, {b}: *{a} | int}}\nx: {{\n\t#D\n}}\n")
                }
            }
        }
        _ => {
            t.set("list");
            match r.below(3) {
                0 => {
                    t.set("list-default");
                    format!("{a}: *[{n}, {m}] | [...int]\n{b}: len({a})\n")
                }
                1 => {
                    t.set("list-default-unified");
                    format!("{a}: *[{n}, {m}] | [...int]\n{b}: {a} & [{n}, {m}, 1]\n")
                }
                _ => {
                    t.set("element-default");
                    format!("{a}: [...(*{n} | int)]\n{b}: {a} & [_, {m}]\n")
                }
            }
        }
    }
}

fn order(r: &mut Rng, t: &mut Template) -> String {
    // Labels with fixed values, so every literal agrees with the others.
    let pool = r.labels(6);
    let value = |l: &str| (l.as_bytes()[0] - b'a' + 1).to_string();
    let literal = |r: &mut Rng| {
        let k = 1 + r.below(3);
        let mut ls = pool.clone();
        r.shuffle(&mut ls);
        ls.truncate(k);
        ls.iter()
            .map(|l| format!("{l}: {}", value(l)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let body = match r.below(7) {
        0 => {
            t.set("merge");
            let k = 2 + r.below(2);
            t.set(format!("literals={k}"));
            let lits: Vec<String> = (0..k).map(|_| format!("{{{}}}", literal(r))).collect();
            format!("x: {}\n", lits.join(" & "))
        }
        1 => {
            t.set("embed-ref");
            let (s1, s2) = (literal(r), literal(r));
            let before = t.flag(r, "field-first");
            let own = format!("{}: 9", pool[5]);
            if before {
                format!("s: {{{s1}}}\nx: {{\n\t{own}\n\ts\n\t{s2}\n}}\n")
            } else {
                format!("s: {{{s1}}}\nx: {{\n\ts\n\t{own}\n\t{s2}\n}}\n")
            }
        }
        2 => {
            t.set("for");
            let s = literal(r);
            let cond = if t.flag(r, "if") {
                format!(" if v > {}", 1 + r.below(3))
            } else {
                String::new()
            };
            let around = r.below(3);
            t.set(format!("around={around}"));
            let (pre, post) = match around {
                0 => (String::new(), String::new()),
                1 => (format!("\t{}: 0\n", pool[5]), String::new()),
                _ => (String::new(), format!("\t{}: 0\n", pool[5])),
            };
            let key = if t.flag(r, "interpolated") {
                "\"\\(k)x\""
            } else {
                "k"
            };
            format!(
                "s: {{{s}}}\nx: {{\n{pre}\tfor k, v in s{cond} {{\n\t\t({key}): v\n\t}}\n{post}}}\n"
            )
        }
        3 => {
            t.set("if-fields");
            let (s1, s2) = (literal(r), literal(r));
            let cond = if t.flag(r, "false") { "false" } else { "true" };
            format!(
                "x: {{\n\tif {cond} {{{s1}}}\n\t{s2}\n\tif true {{{}: 0}}\n}}\n",
                pool[5]
            )
        }
        4 => {
            t.set("def-order");
            let (s1, s2) = (literal(r), literal(r));
            let dots = if t.flag(r, "open") { ", ..." } else { "" };
            let types = s1
                .split(", ")
                .map(|f| format!("{}: int", f.split(':').next().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", ");
            format!("#D: {{{types}{dots}}}\nx: #D & {{{s2}}} & {{{s1}}}\n")
        }
        5 => {
            t.set("nested-merge");
            let (s1, s2, s3) = (literal(r), literal(r), literal(r));
            format!(
                "x: {{\n\t{}: {{{s1}}}\n}} & {{\n\t{}: {{{s2}}}\n\t{}: {{{s3}}}\n}}\n",
                pool[0], pool[1], pool[0]
            )
        }
        _ => {
            t.set("let-dynamic");
            let s = literal(r);
            let extra = if t.flag(r, "static-after") {
                format!("\t{}: 0\n", pool[5])
            } else {
                String::new()
            };
            format!(
                "s: {{{s}}}\nx: {{\n\tlet L = [for k, _ in s {{k}}]\n\tfor i, k in L {{\n\t\t(k): i\n\t}}\n{extra}}}\n"
            )
        }
    };
    let target = if body.starts_with("x:") || body.contains("\nx:") {
        "x"
    } else {
        "s"
    };
    format!("{body}keys: [for k, _ in {target} {{k}}]\n")
}

fn errors(r: &mut Rng, t: &mut Template) -> String {
    let l = r.labels(4);
    let (a, b, c, d) = (l[0], l[1], l[2], l[3]);
    let (n, m) = (r.int(), r.int() + 5);
    let hidden = |r: &mut Rng, t: &mut Template| if t.flag(r, "hidden") { "_" } else { "" };
    let reader = |r: &mut Rng, t: &mut Template, x: &str| {
        let how = r.pick(&[
            "y: X.a",
            "y: X.b",
            "y: *X.a | 0",
            "y: *X.b | 0",
            "y: X.b + 1",
            "if X.a == 1 {\n\ty: 1\n}",
            "y: [for k, _ in X {k}]",
            "y: len(X)",
        ]);
        t.set(how);
        how.replace('X', x)
            .replace(".a", &format!(".{a}"))
            .replace(".b", &format!(".{b}"))
    };
    match r.below(6) {
        0 => {
            t.set("conflict-in-field");
            let h = hidden(r, t);
            let x = format!("{h}x");
            let inner = if t.flag(r, "same-literal") {
                format!("{x}: {{{a}: {n}, {b}: {n}, {b}: {m}}}\n")
            } else {
                format!("{x}: {{{a}: {n}, {b}: {n}}}\n{x}: {{{b}: {m}}}\n")
            };
            let read = reader(r, t, &x);
            format!("{inner}{read}\n")
        }
        1 => {
            t.set("disallowed");
            let h = hidden(r, t);
            let x = format!("{h}x");
            let read = reader(r, t, &x);
            format!("#D: {{{a}: int, {b}?: int}}\n{x}: #D & {{{a}: {n}, {c}: {m}}}\n{read}\n")
        }
        2 => {
            t.set("sibling-default");
            let expr = r.pick(&[
                "{a: *N | int, b: a + 1}",
                "{a: *N | int, b: a & M}",
                "{a: *N | string, b: a + 1}",
                "{a: N & M, b: *a | 0}",
                "{a: N & M, b: *0 | a}",
                "{a: *(N & M) | M, b: a}",
            ]);
            t.set(expr);
            let expr = expr
                .replace('a', a)
                .replace('b', b)
                .replace('N', &n.to_string())
                .replace('M', &m.to_string());
            format!("x: {expr}\n")
        }
        3 => {
            t.set("not-exported");
            let place = r.pick(&[
                "_h: N & M",
                "#D: {a: N & M}",
                "o?: N & M",
                "#D: {a: int, a: \"s\"}",
            ]);
            t.set(place);
            let place = place
                .replace('a', a)
                .replace('N', &n.to_string())
                .replace('M', &m.to_string());
            let use_ = if t.flag(r, "used") {
                match place.chars().next() {
                    Some('_') => "u: _h\n".to_owned(),
                    Some('#') => format!("u: #D.{a}\n"),
                    _ => "u: o\n".to_owned(),
                }
            } else {
                String::new()
            };
            format!("{place}\nk: 1\n{use_}")
        }
        4 => {
            t.set("list-element");
            let h = hidden(r, t);
            let read = r.pick(&["n: len(L)", "n: L[0]", "n: L[1]", "n: [for e in L {e}]"]);
            t.set(read);
            let read = read.replace('L', &format!("{h}l"));
            format!("{h}l: [{n}, {n} & {m}]\n{read}\n")
        }
        _ => {
            t.set("struct-conflict-kinds");
            let h = hidden(r, t);
            let x = format!("{h}x");
            let value = r.pick(&["{c: 1}", "[1]", "\"s\"", "null"]);
            t.set(value);
            let value = value.replace('c', c);
            let read = reader(r, t, &x);
            format!("{x}: {{{a}: {n}, {b}: {d}: 1}}\n{x}: {b}: {value}\n{read}\n")
        }
    }
}

/// What one side printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0 with this stdout.
    Ok(String),
    /// A non-zero exit with this stderr.
    Failed(String),
    Panicked(String),
    TimedOut,
    /// The side could not be run at all.
    Broken(String),
}

impl Outcome {
    /// What `NAME.expected` (or `NAME.ours`) records: stdout, or `error: <first stderr line>`.
    pub fn recorded(&self) -> String {
        match self {
            Outcome::Ok(out) => out.clone(),
            Outcome::Failed(err) => format!("error: {}\n", err.lines().next().unwrap_or("")),
            Outcome::Panicked(m) => format!("panic: {m}\n"),
            Outcome::TimedOut => "timed out\n".to_owned(),
            Outcome::Broken(m) => format!("broken: {m}\n"),
        }
    }
}

/// Exports `dir/in.cue` with our evaluator as `timoni cue export --out json in.cue` does there.
pub fn export_ours(dir: &Path) -> Outcome {
    let loader = cue_eval::Context::new().loader(dir).args([FILE]);
    match crate::wild::export_json(loader, &[]) {
        Ok(out) => Outcome::Ok(out),
        Err(e) => Outcome::Failed(format!("{}\n", e.relative_to(dir))),
    }
}

/// [`export_ours`] on a thread with a large stack and a time limit (a timed-out thread is left
/// running).
pub fn export_ours_in_thread(dir: &Path, timeout: Duration) -> Outcome {
    let dir = dir.to_path_buf();
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let out = std::panic::catch_unwind(|| export_ours(&dir)).unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                Outcome::Panicked(msg)
            });
            let _ = tx.send(out);
        });
    if let Err(e) = spawned {
        return Outcome::Broken(format!("thread: {e}"));
    }
    rx.recv_timeout(timeout).unwrap_or(Outcome::TimedOut)
}

/// Runs `cmd` with a time limit, killing it when it is over. `panic_marker`: a stderr line
/// starting with it makes a failure a panic.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration, panic_marker: &str) -> Outcome {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Broken(format!("spawn: {e}")),
    };
    // Drain the pipes on threads so a large output cannot block the child.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Outcome::Broken(format!("wait: {e}")),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        None => Outcome::TimedOut,
        Some(s) if s.success() => Outcome::Ok(stdout),
        Some(_) if !panic_marker.is_empty() && stderr.starts_with(panic_marker) => {
            Outcome::Panicked(stderr[panic_marker.len()..].trim().to_owned())
        }
        Some(_) => Outcome::Failed(stderr),
    }
}

/// `cue export --out json in.cue` in `dir`, with no registry.
pub fn export_oracle(oracle: &Path, dir: &Path, timeout: Duration) -> Outcome {
    let mut cmd = Command::new(oracle);
    cmd.args(["export", "--out", "json", FILE])
        .current_dir(dir)
        .env("CUE_REGISTRY", "none");
    run_with_timeout(cmd, timeout, "")
}

/// How ours differs from the oracle's, `None` when it does not.
pub fn difference(oracle: &Outcome, ours: &Outcome) -> Option<String> {
    match (oracle, ours) {
        (_, Outcome::TimedOut) => Some("ours times out".to_owned()),
        (_, Outcome::Panicked(_)) => Some("ours panics".to_owned()),
        (_, Outcome::Broken(why)) => Some(format!("ours broken: {why}")),
        (Outcome::Ok(want), Outcome::Ok(got)) if want == got => None,
        (Outcome::Ok(want), Outcome::Ok(got)) => Some(stdout_difference(want, got)),
        (Outcome::Failed(_), Outcome::Failed(_)) => None,
        (Outcome::Ok(_), Outcome::Failed(_)) => Some("cue succeeds, ours fails".to_owned()),
        (Outcome::Failed(_), Outcome::Ok(_)) => Some("cue fails, ours succeeds".to_owned()),
        // The oracle itself timed out, panicked or could not run: not a finding of ours.
        _ => None,
    }
}

/// Why a successful export's stdout is not the oracle's.
fn stdout_difference(want: &str, got: &str) -> String {
    match (json::parse(want), json::parse(got)) {
        (Ok(w), Ok(g)) => match json::first_difference(&w, &g) {
            Some(_) => "value differs".to_owned(),
            None if !json::same_key_order(&w, &g) => "key order differs".to_owned(),
            None => "same value, other text".to_owned(),
        },
        _ => "stdout differs".to_owned(),
    }
}

/// The shape a finding is deduplicated by: family, template (its first choice: the finer choices
/// most often reach the same bug), the kind of difference, and where `cue` fails, its first error
/// line with paths, names, numbers and the contents of structs and lists blanked.
pub fn shape(program: &Program, oracle: &Outcome, kind: &str) -> String {
    let cue = match oracle {
        Outcome::Failed(err) => format!(" [cue: {}]", normalise_error(err)),
        _ => String::new(),
    };
    let template = program.template.split(',').next().unwrap_or_default();
    format!("{}/{template} => {kind}{cue}", program.family.name())
}

/// The first line of an error with its path, quoted text and numbers blanked: `x.b: conflicting
/// values 1 and 7` becomes `conflicting values N and N`.
pub fn normalise_error(stderr: &str) -> String {
    let first = stderr.lines().next().unwrap_or("");
    let message = match first.split_once(": ") {
        Some((path, rest)) if !path.contains(' ') => rest,
        _ => first,
    };
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '{' || ch == '[' {
            let close = if ch == '{' { '}' } else { ']' };
            let mut depth = 1;
            for c in chars.by_ref() {
                if c == ch {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            out.push(ch);
            out.push(close);
        } else if ch == '"' {
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
            }
            out.push('S');
        } else if ch.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(ch);
        }
    }
    out
}

/// One generated program's result.
#[derive(Debug, Clone)]
pub struct Checked {
    pub program: Program,
    pub seed: u64,
    pub oracle: Outcome,
    pub ours: Outcome,
    /// The kind of difference, `None` when both agree.
    pub finding: Option<String>,
}

/// Writes `program` to a scratch directory and runs both sides; `ours` runs ours there.
pub fn check(
    program: Program,
    seed: u64,
    oracle: &Path,
    timeout: Duration,
    ours: &dyn Fn(&Path, Duration) -> Outcome,
) -> Checked {
    let scratch = tempfile::Builder::new().prefix("diff-").tempdir();
    let (oracle_out, ours_out) = match scratch {
        Err(e) => {
            let b = Outcome::Broken(format!("scratch directory: {e}"));
            (b.clone(), b)
        }
        Ok(dir) => match std::fs::write(dir.path().join(FILE), &program.text) {
            Err(e) => {
                let b = Outcome::Broken(format!("write: {e}"));
                (b.clone(), b)
            }
            Ok(()) => (
                export_oracle(oracle, dir.path(), timeout),
                ours(dir.path(), timeout),
            ),
        },
    };
    let finding = difference(&oracle_out, &ours_out);
    Checked {
        program,
        seed,
        oracle: oracle_out,
        ours: ours_out,
        finding,
    }
}

/// The result of reading one recorded case of `conformance/testdata/diff`: `Ok` when ours
/// agrees with the `.expected` file (for an `error: ...` expectation, when ours fails too).
pub fn agrees_with_recorded(expected: &str, ours: &Outcome) -> Result<(), String> {
    match ours {
        Outcome::Failed(_) if expected.starts_with("error: ") => Ok(()),
        Outcome::Ok(out) if out == expected => Ok(()),
        other => Err(format!(
            "expected {:?}, ours {:?}",
            first_line(expected),
            first_line(&other.recorded())
        )),
    }
}

fn first_line(s: &str) -> String {
    let mut lines = s.lines();
    let first = lines.next().unwrap_or("").to_owned();
    if lines.next().is_some() {
        // JSON output: the whole of it on one line is more telling than its `{`.
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic() {
        for f in Family::ALL {
            for seed in 0..50 {
                let (p, q) = (generate(f, seed), generate(f, seed));
                assert_eq!(p.text, q.text);
                assert_eq!(p.template, q.template);
                assert!(!p.text.is_empty() && !p.template.is_empty());
            }
        }
        assert_ne!(
            generate(Family::Order, 1).text,
            generate(Family::Order, 2).text
        );
    }

    #[test]
    fn programs_parse() {
        for f in Family::ALL {
            for seed in 0..200 {
                let p = generate(f, seed);
                let (_, errors) = cue_eval::syntax::Document::parse_bytes("", p.text.as_bytes());
                assert!(
                    errors.is_empty(),
                    "{} seed {seed} does not parse: {:?}\n{}",
                    f.name(),
                    errors,
                    p.text
                );
            }
        }
    }

    #[test]
    fn errors_normalise() {
        assert_eq!(
            normalise_error("x.b: conflicting values 1 and 7:\n    ./in.cue:1:2\n"),
            "conflicting values N and N:"
        );
        assert_eq!(
            normalise_error("x.\"c\": field not allowed:"),
            "field not allowed:"
        );
        assert_eq!(
            normalise_error("incomplete value \"s\""),
            "incomplete value S"
        );
        assert_eq!(
            normalise_error("x.b: conflicting values {e:1} and [1] (mismatched types)"),
            "conflicting values {} and [] (mismatched types)"
        );
    }

    #[test]
    fn differences() {
        let ok = |s: &str| Outcome::Ok(s.to_owned());
        let fail = Outcome::Failed("x: bad".to_owned());
        assert_eq!(difference(&ok("1\n"), &ok("1\n")), None);
        assert_eq!(difference(&fail, &fail), None);
        assert_eq!(
            difference(&ok("{\"a\": 1, \"b\": 2}"), &ok("{\"b\": 2, \"a\": 1}")).as_deref(),
            Some("key order differs")
        );
        assert_eq!(
            difference(&fail, &ok("1")).as_deref(),
            Some("cue fails, ours succeeds")
        );
        assert_eq!(
            difference(&fail, &Outcome::TimedOut).as_deref(),
            Some("ours times out")
        );
        assert_eq!(agrees_with_recorded("error: x\n", &fail), Ok(()));
        assert!(agrees_with_recorded("1\n", &fail).is_err());
    }
}

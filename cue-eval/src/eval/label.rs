//! Interned labels ("features"): every field name is a `u32`, with its kind in the top bits.
//!
//! `a` and `"a"` are the same label. Definitions (`#a`), hidden fields (`_a`), hidden definitions
//! (`_#a`) and lets are kinds of their own, so a pattern constraint can tell at a glance that it
//! never applies to them. List indices are labels too (kind `Int`, the index in the low bits).

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// The kind of a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LabelKind {
    String = 0,
    Int = 1,
    Def = 2,
    Hidden = 3,
    HiddenDef = 4,
    Let = 5,
}

const KIND_SHIFT: u32 = 29;
const INDEX_MASK: u32 = (1 << KIND_SHIFT) - 1;

/// An interned label.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(u32);

impl Label {
    pub fn kind(self) -> LabelKind {
        match self.0 >> KIND_SHIFT {
            0 => LabelKind::String,
            1 => LabelKind::Int,
            2 => LabelKind::Def,
            3 => LabelKind::Hidden,
            4 => LabelKind::HiddenDef,
            _ => LabelKind::Let,
        }
    }
    pub fn index(self) -> u32 {
        self.0 & INDEX_MASK
    }
    pub fn int(i: u32) -> Label {
        Label((LabelKind::Int as u32) << KIND_SHIFT | (i & INDEX_MASK))
    }
    fn make(kind: LabelKind, index: u32) -> Label {
        Label((kind as u32) << KIND_SHIFT | index)
    }
    /// A regular label (string or list index): the only kind pattern constraints apply to and the
    /// only kind that is exported.
    pub fn is_regular(self) -> bool {
        matches!(self.kind(), LabelKind::String | LabelKind::Int)
    }
    pub fn is_def(self) -> bool {
        matches!(self.kind(), LabelKind::Def | LabelKind::HiddenDef)
    }
    pub fn is_hidden(self) -> bool {
        matches!(self.kind(), LabelKind::Hidden | LabelKind::HiddenDef)
    }
    pub fn is_let(self) -> bool {
        self.kind() == LabelKind::Let
    }
    pub fn is_int(self) -> bool {
        self.kind() == LabelKind::Int
    }
}

impl std::fmt::Debug for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}#{}", self.kind(), self.index())
    }
}

/// The string table behind labels.
#[derive(Clone, Default)]
pub struct Interner {
    map: HashMap<Rc<str>, u32>,
    names: Vec<Rc<str>>,
    lets: u32,
    /// A definition or hidden label was made.
    hidden_or_def: bool,
}

impl Interner {
    fn intern_str(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let rc: Rc<str> = Rc::from(s);
        let i = self.names.len() as u32;
        self.names.push(rc.clone());
        self.map.insert(rc, i);
        i
    }

    /// The label of an identifier as written (`a`, `#a`, `_a`, `_#a`).
    pub fn ident(&mut self, name: &str) -> Label {
        let kind = if name.starts_with("_#") {
            LabelKind::HiddenDef
        } else if name.starts_with('#') {
            LabelKind::Def
        } else if name.starts_with('_') && name != "_" {
            LabelKind::Hidden
        } else {
            LabelKind::String
        };
        self.hidden_or_def |= kind != LabelKind::String;
        let i = self.intern_str(name);
        Label::make(kind, i)
    }

    /// Whether any definition or hidden label (`#a`, `_a`, `_#a`) was made: without one, no
    /// vertex has such an arc.
    pub fn has_hidden_or_def(&self) -> bool {
        self.hidden_or_def
    }

    /// The label of a quoted (or computed) string label: always a regular field.
    pub fn string(&mut self, name: &str) -> Label {
        let i = self.intern_str(name);
        Label::make(LabelKind::String, i)
    }

    /// A fresh let label: every `let` is its own arc.
    pub fn fresh_let(&mut self, name: &str) -> Label {
        self.lets += 1;
        let i = self.intern_str(&format!("{name}\u{0}{}", self.lets));
        Label::make(LabelKind::Let, i)
    }

    /// The text of a label as CUE prints it in paths (`a`, `#a`, `0`), without quoting.
    pub fn name(&self, l: Label) -> &str {
        match l.kind() {
            LabelKind::Int => "",
            LabelKind::Let => {
                let s = &self.names[l.index() as usize];
                s.split('\u{0}').next().unwrap_or(s)
            }
            _ => &self.names[l.index() as usize],
        }
    }

    /// The label as text, list indices included.
    pub fn text(&self, l: Label) -> String {
        match l.kind() {
            LabelKind::Int => l.index().to_string(),
            _ => self.name(l).to_string(),
        }
    }

    /// The label as it appears in an error path: quoted when it is not an identifier.
    pub fn path_text(&self, l: Label) -> String {
        match l.kind() {
            LabelKind::Int => l.index().to_string(),
            LabelKind::String => {
                let s = self.name(l);
                if is_identifier(s) {
                    s.to_string()
                } else {
                    quote(s)
                }
            }
            _ => self.name(l).to_string(),
        }
    }
}

/// Whether `s` can be written as a field label without quotes.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(c) = chars.next() else { return false };
    if !(c.is_alphabetic() || c == '_' || c == '$' || c == '#') {
        return false;
    }
    if c == '#' && s.len() == 1 {
        return false;
    }
    s[c.len_utf8()..]
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// Go's `strconv.Quote` (`%q`): Go's escapes, as Go prints texts in messages (template output,
/// `net` and number-literal errors).
pub fn go_quote(s: &str) -> String {
    crate::syntax::quote::quote_with(s, crate::syntax::quote::Form::GO)
}

/// A double-quoted string with CUE's escapes, as CUE prints quoted labels and strings.
pub fn quote(s: &str) -> String {
    crate::syntax::quote::quote_with(s, crate::syntax::quote::Form::CUE)
}

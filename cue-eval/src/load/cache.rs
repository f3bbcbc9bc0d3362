//! Parse results shared between loads: a [`ParseCache`] set in [`super::Config::parse_cache`]
//! lets many loads of the same module (the instances of a bundle, built on several threads)
//! skim and parse each file once. A result is reused only for the same text at the same file
//! id (positions carry the id) and the same parse request; anything else parses anew. A tree
//! is shared, not copied: a load that rewrites its tree (tag values, embedded files) copies it
//! first.
//!
//! Results are found by the file's name, the request and the text's length, and the text is
//! then compared in full: looking a file up costs a hash of its name and one comparison of
//! its text, not a hash of its text. A file whose text changes keeps the slot of the text it
//! had first; the new text is parsed anew every time it is asked for.
//!
//! The cache also holds the run's memo of the disk (`load/fs.rs`): the loads that share it
//! read each file once, and hold the same text, which a slot keeps too, so that comparing a
//! load's text with the slot's stops at the pointer.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::{FxHashMap as HashMap, FxHasher};

use super::skim::{self, Skim};
use crate::ParseError;
use crate::ast::{File, FileId};
use crate::eval::compile::ParsedLazy;

/// What was asked of the parser.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Request {
    /// `parse_with(comments)`.
    Whole(bool),
    /// `parse_ranges` over these byte ranges.
    Ranges(Vec<(usize, usize)>),
    /// `skim`.
    Skim,
    /// The deferred field at this byte range (`eval::compile::DeferredField`); its text is
    /// the declaration's.
    Field(u32, u32),
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    file: u32,
    request: Request,
    name_hash: u64,
    text_len: usize,
}

enum Outcome {
    Parsed(Arc<File>, Vec<ParseError>),
    Skimmed(Option<Arc<Skim>>),
    Field(Arc<ParsedLazy>),
}

/// One cached result, with the text it was computed from (compared on every hit, so that a
/// hash collision can only cost a parse, never give a wrong tree).
struct Slot {
    text: Arc<String>,
    outcome: Outcome,
}

/// A cache of skims and parses, safe to share between threads. Each result is computed once:
/// a second thread asking for the same one waits for the first.
#[derive(Default)]
pub struct ParseCache {
    slots: Mutex<HashMap<Key, Arc<OnceLock<Slot>>>>,
    /// Deferred fields parsed (not counted in `computed` and `reused`, which count files).
    fields_parsed: AtomicUsize,
    computed: AtomicUsize,
    reused: AtomicUsize,
    /// What the run's loads read from the disk.
    disk: super::fs::DiskMemo,
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseCache")
            .field("computed", &self.computed())
            .field("reused", &self.reused())
            .field("fields_parsed", &self.fields_parsed())
            .finish()
    }
}

impl ParseCache {
    /// An empty cache.
    pub fn new() -> ParseCache {
        ParseCache::default()
    }

    /// How many skims and parses were computed (not found in the cache).
    pub fn computed(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }

    /// How many were answered from the cache.
    pub fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// How many files the loads sharing this cache read from the disk. Each is read once (or
    /// once by each thread that asks for it at the same moment), and every load of the run
    /// sees the content first kept (see `load/fs.rs`).
    pub fn files_read(&self) -> usize {
        self.disk.reads()
    }

    pub(crate) fn disk(&self) -> &super::fs::DiskMemo {
        &self.disk
    }

    /// How many deferred fields of imported files the evaluator parsed through this cache
    /// (each is parsed once, whichever build uses it first; these are not counted in
    /// [`ParseCache::computed`] and [`ParseCache::reused`], which count files).
    pub fn fields_parsed(&self) -> usize {
        self.fields_parsed.load(Ordering::Relaxed)
    }

    /// The tree of the deferred field at `start..end` of `text`, the text of file `file`: the
    /// one parsed for a build before when it had the same declaration text at the same place
    /// (a field's tree depends on nothing else), otherwise `parse()`'s.
    pub(crate) fn deferred_field(
        &self,
        file: FileId,
        start: u32,
        end: u32,
        text: &str,
        parse: impl FnOnce() -> ParsedLazy,
    ) -> Arc<ParsedLazy> {
        let decl = text.get(start as usize..end as usize).unwrap_or_default();
        let request = Request::Field(start, end);
        match self.get(file, request, "", decl, None, || {
            Outcome::Field(Arc::new(parse()))
        }) {
            Outcome::Field(tree) => tree,
            _ => unreachable!("a field request gives a field"),
        }
    }

    fn slot(&self, file: FileId, request: Request, name: &str, text: &str) -> Arc<OnceLock<Slot>> {
        let mut h = FxHasher::default();
        name.hash(&mut h);
        let key = Key {
            file: file.0,
            request,
            name_hash: h.finish(),
            text_len: text.len(),
        };
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(key).or_default().clone()
    }

    /// The result for `request` on `text` (of the file named `name`), computing it with
    /// `compute` when absent (or when the cached text differs: then the result is computed and
    /// not kept).
    fn get(
        &self,
        file: FileId,
        request: Request,
        name: &str,
        text: &str,
        shared: Option<&Arc<String>>,
        compute: impl FnOnce() -> Outcome,
    ) -> Outcome {
        let field = matches!(request, Request::Field(..));
        let computed = if field {
            &self.fields_parsed
        } else {
            &self.computed
        };
        let slot = self.slot(file, request, name, text);
        let mut fresh = false;
        let mut compute = Some(compute);
        let s = slot.get_or_init(|| {
            fresh = true;
            Slot {
                text: shared.cloned().unwrap_or_else(|| Arc::new(text.to_owned())),
                outcome: (compute.take().expect("computed once"))(),
            }
        });
        // A slot filled just now holds `text`: only an older one needs comparing (at once when
        // it is the same text the run's disk memo handed both loads).
        if !fresh && !super::same_text(&s.text, text) {
            computed.fetch_add(1, Ordering::Relaxed);
            return (compute.take().expect("not computed yet"))();
        }
        if fresh {
            computed.fetch_add(1, Ordering::Relaxed);
        } else if !field {
            self.reused.fetch_add(1, Ordering::Relaxed);
        }
        match &s.outcome {
            Outcome::Parsed(f, e) => Outcome::Parsed(Arc::clone(f), e.clone()),
            Outcome::Skimmed(sk) => Outcome::Skimmed(sk.clone()),
            Outcome::Field(tree) => Outcome::Field(tree.clone()),
        }
    }
}

/// `skim(text)` of the file named `name`, through `cache` when there is one (a cached skim is
/// shared, not copied).
pub(super) fn skim(
    cache: Option<&ParseCache>,
    name: &str,
    text: &Arc<String>,
) -> Option<Arc<Skim>> {
    let Some(c) = cache else {
        return skim::skim(text).map(Arc::new);
    };
    match c.get(FileId(0), Request::Skim, name, text, Some(text), || {
        Outcome::Skimmed(skim::skim(text).map(Arc::new))
    }) {
        Outcome::Skimmed(s) => s,
        _ => unreachable!("a skim request gives a skim"),
    }
}

/// `parse_with(file, text, comments)` of the file named `name`, through `cache` when there is
/// one.
pub(super) fn parse_with(
    cache: Option<&ParseCache>,
    file: FileId,
    name: &str,
    text: &Arc<String>,
    comments: bool,
) -> (Arc<File>, Vec<ParseError>) {
    let Some(c) = cache else {
        let (f, e) = crate::parse_with(file, text, comments);
        return (Arc::new(f), e);
    };
    parsed(c.get(
        file,
        Request::Whole(comments),
        name,
        text,
        Some(text),
        || {
            let (f, e) = crate::parse_with(file, text, comments);
            Outcome::Parsed(Arc::new(f), e)
        },
    ))
}

/// `parse_ranges(file, text, ranges)` of the file named `name`, through `cache` when there is
/// one.
pub(super) fn parse_ranges(
    cache: Option<&ParseCache>,
    file: FileId,
    name: &str,
    text: &Arc<String>,
    ranges: &[(usize, usize)],
) -> (Arc<File>, Vec<ParseError>) {
    let Some(c) = cache else {
        let (f, e) = crate::parse_ranges(file, text, ranges);
        return (Arc::new(f), e);
    };
    parsed(c.get(
        file,
        Request::Ranges(ranges.to_vec()),
        name,
        text,
        Some(text),
        || {
            let (f, e) = crate::parse_ranges(file, text, ranges);
            Outcome::Parsed(Arc::new(f), e)
        },
    ))
}

fn parsed(o: Outcome) -> (Arc<File>, Vec<ParseError>) {
    match o {
        Outcome::Parsed(f, e) => (f, e),
        _ => unreachable!("a parse request gives a tree"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_is_computed_once_and_then_reused() {
        let c = ParseCache::new();
        let text = &Arc::new(String::from("package p\na: 1\nb: a\n"));
        let (f1, e1) = parse_with(Some(&c), FileId(3), "p.cue", text, false);
        let (f2, e2) = parse_with(Some(&c), FileId(3), "p.cue", text, false);
        assert_eq!((c.computed(), c.reused()), (1, 1));
        assert!(Arc::ptr_eq(&f1, &f2), "a reused tree is shared, not copied");
        assert_eq!(e1, e2);
        assert_eq!(*f1, crate::parse_with(FileId(3), text, false).0);
    }

    #[test]
    fn another_file_id_or_text_or_request_parses_anew() {
        let c = ParseCache::new();
        let text = &Arc::new(String::from("package p\na: 1\n"));
        parse_with(Some(&c), FileId(0), "p.cue", text, false);
        let (f, _) = parse_with(Some(&c), FileId(1), "p.cue", text, false);
        assert_eq!(*f, crate::parse_with(FileId(1), text, false).0);
        // Another text of the same length under the same name: its own tree, every time.
        let edited = &Arc::new(String::from("package p\na: 2\n"));
        for _ in 0..2 {
            let (f, _) = parse_with(Some(&c), FileId(0), "p.cue", edited, false);
            assert_eq!(*f, crate::parse_with(FileId(0), edited, false).0);
        }
        parse_with(Some(&c), FileId(0), "p.cue", text, true);
        parse_ranges(Some(&c), FileId(0), "p.cue", text, &[(10, 14)]);
        // The same text under another name.
        parse_with(Some(&c), FileId(0), "q.cue", text, false);
        assert_eq!((c.computed(), c.reused()), (7, 0));
        let sk = |name| skim(Some(&c), name, text);
        assert_eq!(sk("p.cue").as_deref(), skim::skim(text).as_ref());
        assert_eq!(sk("p.cue").as_deref(), skim::skim(text).as_ref());
        assert_eq!((c.computed(), c.reused()), (8, 1));
    }

    #[test]
    fn threads_share_one_computation() {
        let c = ParseCache::new();
        let text = Arc::new("package p\n".to_string() + &"x: {a: 1, b: [1, 2]}\n".repeat(200));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| parse_with(Some(&c), FileId(0), "p.cue", &text, false));
            }
        });
        assert_eq!((c.computed(), c.reused()), (1, 3));
    }
}

//! Where `bundle build` keeps the output of the instances built so far. As Timoni does, it
//! prints nothing until every instance is built, so that a failing instance prints nothing; the
//! sections built meanwhile, which grow with the number of instances (about 4 KB each for a
//! small module, 0.9 MB for one that renders CRDs), are kept in memory up to a bound and then
//! in an unnamed temporary file, so that the run's peak memory does not grow with them.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

/// The bytes of sections a run keeps in memory before it writes the next ones to a file.
pub const IN_MEMORY: usize = 1 << 20;

/// The sections kept so far, shared by the build threads.
pub struct Spool {
    limit: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The bytes of the sections kept in memory.
    in_memory: usize,
    file: FileState,
}

/// The file the sections past the limit go to.
#[derive(Default)]
enum FileState {
    /// No section has gone past the limit yet.
    #[default]
    None,
    /// The file and its length.
    Open(File, u64),
    /// The file could not be made or written: everything stays in memory from then on. A file
    /// that failed a write still holds the sections written before.
    Failed(Option<File>),
}

/// A kept section.
pub enum Kept {
    Memory(Vec<u8>),
    File { offset: u64, len: usize },
}

impl FileState {
    /// Appends `text` to the file, made on first use, and returns where it starts; `None` once
    /// the file could not be made or written. A failed write may have left part of the
    /// section in the file, past the length recorded: nothing reads it.
    fn append(&mut self, text: &[u8]) -> Option<u64> {
        let (mut f, len) = match std::mem::take(self) {
            FileState::None => match tempfile::tempfile() {
                Ok(f) => (f, 0),
                Err(_) => {
                    *self = FileState::Failed(None);
                    return None;
                }
            },
            FileState::Open(f, len) => (f, len),
            failed => {
                *self = failed;
                return None;
            }
        };
        if f.write_all(text).is_err() {
            *self = FileState::Failed(Some(f));
            return None;
        }
        *self = FileState::Open(f, len + text.len() as u64);
        Some(len)
    }
}

impl Spool {
    /// A spool that keeps up to `limit` bytes in memory.
    pub fn new(limit: usize) -> Spool {
        Spool {
            limit,
            state: Mutex::new(State::default()),
        }
    }

    /// Keeps `text`: in memory while the sections there stay within the limit, else at the
    /// end of the file (in memory when the file cannot be made or written).
    pub fn keep(&self, mut text: Vec<u8>) -> Kept {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.in_memory + text.len() > self.limit
            && let Some(offset) = st.file.append(&text)
        {
            return Kept::File {
                offset,
                len: text.len(),
            };
        }
        st.in_memory += text.len();
        drop(st);
        // Kept until every instance is built: without the room the writes left.
        text.shrink_to_fit();
        Kept::Memory(text)
    }

    /// Writes a kept section to `out`.
    pub fn write_to(&self, kept: &Kept, out: &mut dyn Write) -> std::io::Result<()> {
        match kept {
            Kept::Memory(text) => out.write_all(text),
            Kept::File { offset, len } => {
                let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let (FileState::Open(f, _) | FileState::Failed(Some(f))) = &mut st.file else {
                    return Err(std::io::Error::other("the spool file is gone"));
                };
                f.seek(SeekFrom::Start(*offset))?;
                let mut text = vec![0; *len];
                f.read_exact(&mut text)?;
                out.write_all(&text)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sections, kept in a spool of `limit` bytes in the order given, then written in
    /// `order`.
    fn round_trip(limit: usize, sections: &[&str], order: &[usize]) -> (String, usize) {
        let spool = Spool::new(limit);
        let kept: Vec<Kept> = sections
            .iter()
            .map(|s| spool.keep(s.as_bytes().to_vec()))
            .collect();
        let in_file = kept
            .iter()
            .filter(|k| matches!(k, Kept::File { .. }))
            .count();
        let mut out = Vec::new();
        for &i in order {
            spool.write_to(&kept[i], &mut out).unwrap();
        }
        (String::from_utf8(out).unwrap(), in_file)
    }

    #[test]
    fn sections_past_the_limit_go_to_a_file_and_come_back_in_any_order() {
        let sections = ["alpha\n", "", "bravo bravo\n", "charlie\n", "d\n"];
        // All in memory.
        let (out, in_file) = round_trip(1 << 20, &sections, &[0, 1, 2, 3, 4]);
        assert_eq!(out, sections.concat());
        assert_eq!(in_file, 0);
        // Past 7 bytes, to the file: the first section (6 bytes) and the empty one stay.
        let (out, in_file) = round_trip(7, &sections, &[4, 2, 0, 3, 1]);
        assert_eq!(out, "d\nbravo bravo\nalpha\ncharlie\n");
        assert_eq!(in_file, 3);
        // Nothing in memory.
        let (out, in_file) = round_trip(0, &sections, &[3, 2, 1, 0, 4]);
        assert_eq!(out, "charlie\nbravo bravo\nalpha\nd\n");
        assert_eq!(in_file, 4);
    }

    #[test]
    fn a_file_that_fails_a_write_keeps_what_it_holds_and_the_rest_stays_in_memory() {
        let path = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        let spool = Spool::new(0);
        let rw = File::options().read(true).write(true).open(&path).unwrap();
        spool.state.lock().unwrap().file = FileState::Open(rw, 0);
        let a = spool.keep(b"alpha\n".to_vec());
        assert!(matches!(a, Kept::File { offset: 0, len: 6 }));
        // The same file, now read-only: the next write fails.
        let ro = File::open(&path).unwrap();
        spool.state.lock().unwrap().file = FileState::Open(ro, 6);
        let b = spool.keep(b"bravo\n".to_vec());
        let c = spool.keep(b"charlie\n".to_vec());
        assert!(matches!(b, Kept::Memory(_)));
        assert!(matches!(c, Kept::Memory(_)));
        let mut out = Vec::new();
        for k in [&c, &a, &b] {
            spool.write_to(k, &mut out).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "charlie\nalpha\nbravo\n");
    }

    #[test]
    fn build_threads_keep_sections_side_by_side() {
        let spool = Spool::new(64);
        let kept: Vec<(usize, Kept)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|t| {
                    let spool = &spool;
                    s.spawn(move || {
                        (0..50)
                            .map(|i| {
                                let n = t * 50 + i;
                                (n, spool.keep(format!("section {n}\n").into_bytes()))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let mut kept = kept;
        kept.sort_by_key(|(n, _)| *n);
        let mut out = Vec::new();
        for (_, k) in &kept {
            spool.write_to(k, &mut out).unwrap();
        }
        let want: String = (0..200).map(|n| format!("section {n}\n")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}

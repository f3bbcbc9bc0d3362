//! The vertex arena: every vertex of a graph, addressed by its [`VId`], kept in chunks of a
//! fixed number of vertices.
//!
//! One vector of vertices would double as the graph grows, and past the allocator's mmap
//! threshold each doubling takes fresh pages the size of the whole graph: on a file of
//! concrete data those pages came on top of the memory that the freed syntax tree had left,
//! which stays with the process. Chunks of about 100 KiB (under the allocator's mmap threshold)
//! are placed in that freed memory, a vertex never moves, growing copies nothing, and at most
//! one chunk is partly used.
//!
//! A build thread makes one graph after another (the instances of a bundle, and the small
//! graphs of each instance's values and module name). A graph that goes away leaves its chunks,
//! with placeholders back in the slots it used, to the next graph of its thread, up to
//! [`SPARE_MAX`] of them: the next graph neither allocates them nor fills 512 placeholders per
//! chunk again, and the slots it never uses are not dropped at all.

use super::label::Label;
use super::{ArcType, VId, Vertex};

/// Vertices per chunk: 512 vertices of 208 bytes (128 and the first conjunct) are 104 KiB.
const SHIFT: u32 = 9;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

/// The most chunks a thread keeps for its next graph (1.7 MB).
const SPARE_MAX: usize = 16;

type Chunk = Box<[Vertex; CHUNK]>;

thread_local! {
    /// Chunks left by the graphs of this thread that went away, every slot a placeholder.
    static SPARE: std::cell::RefCell<Vec<Chunk>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Frees the chunks this thread keeps for its next graph.
pub(crate) fn release_spare_chunks() {
    let _ = SPARE.try_with(|s| s.borrow_mut().clear());
}

/// What a slot holds before a vertex is put there. It owns no memory (its lists are empty and
/// hold nothing on the heap), so one can be overwritten without being dropped.
fn placeholder() -> Vertex {
    Vertex::new(None, Label::int(0), ArcType::Member)
}

/// A chunk with a placeholder in every slot: a spare one of this thread if there is one.
fn fresh_chunk() -> Chunk {
    if let Some(c) = SPARE.with(|s| s.borrow_mut().pop()) {
        return c;
    }
    let slots: Box<[Vertex]> = (0..CHUNK).map(|_| placeholder()).collect();
    slots.try_into().expect("a chunk has CHUNK slots")
}

/// The chunks are arrays, so that the index within one needs no bounds check: the slots past
/// the last vertex hold placeholders that no id reaches.
#[derive(Default)]
pub(crate) struct Vertices {
    chunks: Vec<Chunk>,
    len: usize,
}

impl Vertices {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `v` and returns its id.
    pub(crate) fn push(&mut self, v: Vertex) -> VId {
        let id = self.len;
        if id & MASK == 0 {
            self.chunks.push(fresh_chunk());
        }
        // The placeholder owns nothing: forgetting it frees nothing.
        std::mem::forget(std::mem::replace(
            &mut self.chunks[id >> SHIFT][id & MASK],
            v,
        ));
        self.len += 1;
        id as VId
    }

    #[inline]
    pub(crate) fn get(&self, id: VId) -> &Vertex {
        let i = id as usize;
        &self.chunks[i >> SHIFT][i & MASK]
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: VId) -> &mut Vertex {
        let i = id as usize;
        &mut self.chunks[i >> SHIFT][i & MASK]
    }
}

impl Drop for Vertices {
    /// Drops the vertices, and leaves their chunks, placeholders again, to the thread's next
    /// graph (those past [`SPARE_MAX`] are freed).
    fn drop(&mut self) {
        let mut used = self.len;
        for mut chunk in self.chunks.drain(..) {
            for slot in chunk.iter_mut().take(used.min(CHUNK)) {
                *slot = placeholder();
            }
            used = used.saturating_sub(CHUNK);
            // A thread that is exiting has no spare list any more: the chunk is freed.
            let _ = SPARE.try_with(|s| {
                let mut s = s.borrow_mut();
                if s.len() < SPARE_MAX {
                    s.push(chunk);
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_vertices_stay_where_they_were_put() {
        let mut vs = Vertices::default();
        let n = 3 * CHUNK + 7;
        for i in 0..n {
            let parent = i.checked_sub(1).map(|p| p as VId);
            assert_eq!(
                vs.push(Vertex::new(parent, Label::int(0), ArcType::Member)),
                i as VId
            );
        }
        assert_eq!(vs.len(), n);
        assert_eq!(vs.chunks.len(), 4);
        let first = vs.get(CHUNK as VId) as *const Vertex;
        for _ in 0..CHUNK {
            vs.push(Vertex::new(None, Label::int(0), ArcType::Member));
        }
        assert_eq!(
            vs.get(CHUNK as VId) as *const Vertex,
            first,
            "growing moves nothing"
        );
        for i in 1..n {
            assert_eq!(vs.get(i as VId).parent, Some(i as VId - 1));
        }
        vs.get_mut(5).parent = Some(99);
        assert_eq!(vs.get(5).parent, Some(99));
    }

    /// Whether `v` is what a slot holds before a vertex is put there.
    fn is_placeholder(v: &Vertex) -> bool {
        v.parent.is_none() && v.arcs.is_empty() && v.conjuncts.is_empty() && v.extra.is_none()
    }

    #[test]
    fn a_graph_leaves_its_chunks_cleared_to_the_next_graph_of_its_thread() {
        release_spare_chunks();
        let mut first = Vertices::default();
        for i in 0..CHUNK + 3 {
            let mut v = Vertex::new(Some(i as VId), Label::int(1), ArcType::Member);
            v.arcs.push(7);
            v.xm().list_len = Some(2);
            first.push(v);
        }
        let chunk = |vs: &Vertices, i: usize| &*vs.chunks[i] as *const [Vertex; CHUNK];
        let (a, b) = (chunk(&first, 0), chunk(&first, 1));
        drop(first);
        let spare: Vec<*const [Vertex; CHUNK]> =
            SPARE.with_borrow(|s| s.iter().map(|c| &**c as *const _).collect());
        assert_eq!(spare, [a, b]);
        assert!(SPARE.with_borrow(|s| s.iter().all(|c| c.iter().all(is_placeholder))));
        // The next graph takes them, the last one left first, and finds placeholders only.
        let mut next = Vertices::default();
        let id = next.push(Vertex::new(None, Label::int(2), ArcType::Optional));
        assert_eq!(chunk(&next, 0), b);
        assert_eq!(next.get(id).arc_type, ArcType::Optional);
        assert!(next.chunks[0].iter().skip(1).all(is_placeholder));
        release_spare_chunks();
        assert!(SPARE.with_borrow(|s| s.is_empty()));
    }

    #[test]
    fn a_thread_keeps_at_most_its_share_of_chunks() {
        release_spare_chunks();
        let mut vs = Vertices::default();
        for _ in 0..(SPARE_MAX + 2) * CHUNK {
            vs.push(Vertex::new(None, Label::int(0), ArcType::Member));
        }
        drop(vs);
        assert_eq!(SPARE.with_borrow(|s| s.len()), SPARE_MAX);
        release_spare_chunks();
    }
}

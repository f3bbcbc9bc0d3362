//! The vertex arena: every vertex of a graph, addressed by its [`VId`], kept in chunks of a
//! fixed number of vertices.
//!
//! One vector of vertices would double as the graph grows, and past the allocator's mmap
//! threshold each doubling takes fresh pages the size of the whole graph: on a file of
//! concrete data those pages came on top of the memory that the freed syntax tree had left,
//! which stays with the process. Chunks of about 100 KiB (under the allocator's mmap threshold)
//! are placed in that freed memory, a vertex never moves, growing copies nothing, and at most
//! one chunk is partly used.

use super::label::Label;
use super::{ArcType, VId, Vertex};

/// Vertices per chunk: 512 vertices of 208 bytes (128 and the first conjunct) are 104 KiB.
const SHIFT: u32 = 9;
const CHUNK: usize = 1 << SHIFT;
const MASK: usize = CHUNK - 1;

/// The chunks are arrays, so that the index within one needs no bounds check: the slots past
/// the last vertex hold placeholders that no id reaches.
#[derive(Default)]
pub(crate) struct Vertices {
    chunks: Vec<Box<[Vertex; CHUNK]>>,
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
            let slots: Box<[Vertex]> = (0..CHUNK)
                .map(|_| Vertex::new(None, Label::int(0), ArcType::Member))
                .collect();
            self.chunks
                .push(slots.try_into().expect("a chunk has CHUNK slots"));
        }
        self.chunks[id >> SHIFT][id & MASK] = v;
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
}

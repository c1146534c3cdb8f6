//! The heads of the hotlists: an open-addressing hash table from (PC,
//! value type) to the list's scalar state, one 64-byte cache line per list.
//!
//! A sample needs its list's state (p, the filter of the values held, the
//! count) before anything else; a hash map from PC to list number followed
//! by an array of states costs two dependent cache misses for a PC not in
//! the cache, and a table of 10,000 PCs is larger than the cache. Here the
//! key and the state share one aligned line, found by linear probing from
//! a multiplicative hash of the key: one miss. The values and counters
//! stay in the table's flat arrays, at the list number the head holds.

use super::list::ListState;

/// `n` of an empty slot.
const EMPTY: u32 = u32::MAX;

/// One list's head: its key, its number (where its values and counters
/// are), and its state.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Head {
    pub(crate) pc: u64,
    /// Position of the value type in the configuration's list of types.
    pub(crate) kind: u32,
    /// The list number; `EMPTY` for an empty slot.
    pub(crate) n: u32,
    pub(crate) state: ListState,
}

/// The table of heads; at most three quarters full, so that a probe for a
/// key present reads about 2.5 slots on average (adjacent lines), and
/// memory stays within 86–171 bytes per list.
#[derive(Clone, Debug)]
pub(crate) struct Heads {
    slots: Vec<Head>,
    /// Lists held.
    len: usize,
}

impl Heads {
    pub(crate) fn new() -> Heads {
        Heads {
            slots: Self::empty_slots(64),
            len: 0,
        }
    }

    fn empty_slots(n: usize) -> Vec<Head> {
        vec![
            Head {
                pc: 0,
                kind: 0,
                n: EMPTY,
                state: ListState::new(),
            };
            n
        ]
    }

    /// Lists held; they are numbered 0 to `len() - 1` in order of arrival.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn home(&self, pc: u64, kind: u32) -> usize {
        let h = (pc ^ ((kind as u64) << 59)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// The slot of the list for (`pc`, `kind`), if there is one.
    #[inline(always)]
    pub(crate) fn find(&self, pc: u64, kind: u32) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut s = self.home(pc, kind);
        loop {
            let h = &self.slots[s];
            if h.n == EMPTY {
                return None;
            }
            if h.pc == pc && h.kind == kind {
                return Some(s);
            }
            s = (s + 1) & mask;
        }
    }

    /// Adds a new list for (`pc`, `kind`), which must not be present,
    /// numbered `len()`; returns its slot.
    pub(crate) fn insert(&mut self, pc: u64, kind: u32) -> usize {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow();
        }
        let n = self.len as u32;
        self.len += 1;
        self.place(Head {
            pc,
            kind,
            n,
            state: ListState::new(),
        })
    }

    fn place(&mut self, head: Head) -> usize {
        let mask = self.slots.len() - 1;
        let mut s = self.home(head.pc, head.kind);
        while self.slots[s].n != EMPTY {
            s = (s + 1) & mask;
        }
        self.slots[s] = head;
        s
    }

    fn grow(&mut self) {
        let bigger = Self::empty_slots(2 * self.slots.len());
        let old = std::mem::replace(&mut self.slots, bigger);
        for h in old.into_iter().filter(|h| h.n != EMPTY) {
            self.place(h);
        }
    }

    /// The head in slot `s`.
    #[inline(always)]
    pub(crate) fn at_mut(&mut self, s: usize) -> &mut Head {
        &mut self.slots[s]
    }

    /// The head for (`pc`, `kind`), if there is one.
    pub(crate) fn get(&self, pc: u64, kind: u32) -> Option<&Head> {
        self.find(pc, kind).map(|s| &self.slots[s])
    }

    /// Every list's head, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Head> {
        self.slots.iter().filter(|h| h.n != EMPTY)
    }

    /// Bytes of the table.
    pub(crate) fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Head>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_key_across_growth() {
        let mut h = Heads::new();
        for i in 0..5000u64 {
            assert_eq!(h.find(i * 4, (i % 2) as u32), None);
            let s = h.insert(i * 4, (i % 2) as u32);
            h.at_mut(s).state.offered = i;
        }
        assert_eq!(h.len(), 5000);
        assert!(h.bytes() >= 5000 * 64 * 4 / 3);
        for i in 0..5000u64 {
            let head = h.get(i * 4, (i % 2) as u32).expect("present");
            assert_eq!(head.n as u64, i);
            assert_eq!(head.state.offered, i);
            assert!(h.get(i * 4, 1 - (i % 2) as u32).is_none());
        }
        assert_eq!(h.iter().count(), 5000);
        assert_eq!(std::mem::size_of::<Head>(), 64);
    }
}

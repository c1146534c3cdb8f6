//! The record codec: one event ⇄ a few bytes, before zstd.
//!
//! Each record is a tag byte (class in the low four bits, then ADDR, VALUE,
//! TAKEN, EXT), the PC as a zigzag delta from the previous record's PC,
//! the access size for loads and stores, the address (a control transfer's
//! target as a delta from its own PC; a memory address as a delta from the
//! previous memory address), the value, and an extension varint for rare
//! flags. Deltas restart at every chunk, so chunks decode independently. In
//! a loop the same deltas recur, which zstd then compresses to almost
//! nothing.

use super::format::tag;
use super::varint::{get, put, unzigzag, zigzag};
use crate::event::{flags, Class, Event};

/// Encoder state: the previous PC and memory address of this chunk.
#[derive(Default)]
pub struct Encoder {
    prev_pc: u64,
    prev_mem: u64,
}

impl Encoder {
    /// Starts a new chunk.
    pub fn reset(&mut self) {
        *self = Encoder::default();
    }

    /// Appends the record of `e` to `out`.
    #[inline]
    pub fn encode(&mut self, e: &Event, out: &mut Vec<u8>) {
        let memory = e.class.is_memory();
        let control = e.class.is_control();
        let mut t = e.class as u8;
        if e.addr != 0 || memory {
            t |= tag::ADDR;
        }
        if e.flags & flags::HAS_VALUE != 0 {
            t |= tag::VALUE;
        }
        if e.flags & flags::TAKEN != 0 {
            t |= tag::TAKEN;
        }
        let rest = e.flags & !(flags::HAS_VALUE | flags::TAKEN);
        let ext_size = if memory { 0 } else { e.size };
        if rest != 0 || ext_size != 0 {
            t |= tag::EXT;
        }
        out.push(t);
        put(out, zigzag(e.pc.wrapping_sub(self.prev_pc) as i64));
        self.prev_pc = e.pc;
        if memory {
            out.push(e.size);
        }
        if t & tag::ADDR != 0 {
            let base = if control { e.pc } else { self.prev_mem };
            put(out, zigzag(e.addr.wrapping_sub(base) as i64));
            if !control {
                self.prev_mem = e.addr;
            }
        }
        if t & tag::VALUE != 0 {
            put(out, e.value);
        }
        if t & tag::EXT != 0 {
            put(out, rest as u64 | (ext_size as u64) << 16);
        }
    }

    /// Appends a thread-switch record: the events after it are thread
    /// `tid`'s. The deltas go on across it.
    pub fn switch(&mut self, tid: u64, out: &mut Vec<u8>) {
        out.push(tag::SWITCH);
        put(out, tid);
    }
}

/// Why a record would not decode.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The record's bytes end early.
    Short,
    /// The tag names no class.
    BadClass(u8),
    /// Flag bits that no version of the format defines.
    BadFlags(u64),
}

/// Decoder state, the mirror of [`Encoder`].
#[derive(Default)]
pub struct Decoder {
    prev_pc: u64,
    prev_mem: u64,
}

impl Decoder {
    /// The thread id of the thread-switch record at `*pos`, advancing it,
    /// or `None` (and `*pos` as it was) when the record there is an
    /// event's. A switch changes no state of the decoder's.
    #[inline]
    pub fn switch(buf: &[u8], pos: &mut usize) -> Result<Option<u64>, DecodeError> {
        if buf.get(*pos) != Some(&tag::SWITCH) {
            return Ok(None);
        }
        let mut at = *pos + 1;
        let tid = get(buf, &mut at).ok_or(DecodeError::Short)?;
        *pos = at;
        Ok(Some(tid))
    }

    /// Decodes the record at `*pos`, advancing it.
    #[inline]
    pub fn decode(&mut self, buf: &[u8], pos: &mut usize) -> Result<Event, DecodeError> {
        let t = *buf.get(*pos).ok_or(DecodeError::Short)?;
        *pos += 1;
        let class = Class::from_u8(t & 0x0f).ok_or(DecodeError::BadClass(t & 0x0f))?;
        let pc = self
            .prev_pc
            .wrapping_add(unzigzag(get(buf, pos).ok_or(DecodeError::Short)?) as u64);
        self.prev_pc = pc;
        let mut e = Event::new(pc, class);
        let memory = class.is_memory();
        if memory {
            e.size = *buf.get(*pos).ok_or(DecodeError::Short)?;
            *pos += 1;
        }
        if t & tag::ADDR != 0 {
            let d = unzigzag(get(buf, pos).ok_or(DecodeError::Short)?) as u64;
            if class.is_control() {
                e.addr = pc.wrapping_add(d);
            } else {
                e.addr = self.prev_mem.wrapping_add(d);
                self.prev_mem = e.addr;
            }
        }
        if t & tag::VALUE != 0 {
            e.value = get(buf, pos).ok_or(DecodeError::Short)?;
            e.flags |= flags::HAS_VALUE;
        }
        if t & tag::TAKEN != 0 {
            e.flags |= flags::TAKEN;
        }
        if t & tag::EXT != 0 {
            let x = get(buf, pos).ok_or(DecodeError::Short)?;
            let rest = x & 0xffff;
            if rest & !(flags::KNOWN as u64) != 0 || x >> 24 != 0 || (memory && x >> 16 != 0) {
                return Err(DecodeError::BadFlags(x));
            }
            e.flags |= rest as u16;
            if !memory {
                e.size = (x >> 16) as u8;
            }
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_event() -> impl Strategy<Value = Event> {
        (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            0u8..11,
            any::<u8>(),
            0u16..=flags::KNOWN,
        )
            .prop_map(|(pc, addr, value, c, size, fl)| Event {
                pc,
                addr,
                value,
                class: Class::from_u8(c).unwrap(),
                size,
                flags: fl,
            })
    }

    proptest! {
        #[test]
        fn records_round_trip(events in proptest::collection::vec(arb_event(), 0..200)) {
            let mut enc = Encoder::default();
            let mut buf = Vec::new();
            for e in &events { enc.encode(e, &mut buf); }
            let mut dec = Decoder::default();
            let mut pos = 0;
            for e in &events {
                let mut want = *e;
                // A value without HAS_VALUE is not stored.
                if want.flags & flags::HAS_VALUE == 0 { want.value = 0; }
                prop_assert_eq!(dec.decode(&buf, &mut pos).unwrap(), want);
            }
            prop_assert_eq!(pos, buf.len());
        }

        #[test]
        fn switches_round_trip_between_events(
            events in proptest::collection::vec((arb_event(), proptest::option::of(any::<u64>())), 0..200),
        ) {
            let mut enc = Encoder::default();
            let mut buf = Vec::new();
            for (e, switch) in &events {
                if let Some(tid) = switch { enc.switch(*tid, &mut buf); }
                enc.encode(e, &mut buf);
            }
            let mut dec = Decoder::default();
            let mut pos = 0;
            for (e, switch) in &events {
                prop_assert_eq!(Decoder::switch(&buf, &mut pos).unwrap(), *switch);
                prop_assert_eq!(Decoder::switch(&buf, &mut pos).unwrap(), None);
                let got = dec.decode(&buf, &mut pos).unwrap();
                prop_assert_eq!((got.pc, got.class, got.addr), (e.pc, e.class, e.addr));
            }
            prop_assert_eq!(pos, buf.len());
        }

        #[test]
        fn garbage_never_panics(bytes: Vec<u8>) {
            let mut dec = Decoder::default();
            let mut pos = 0;
            while pos < bytes.len() {
                match Decoder::switch(&bytes, &mut pos) {
                    Ok(Some(_)) => continue,
                    Ok(None) => {}
                    Err(_) => break,
                }
                if dec.decode(&bytes, &mut pos).is_err() { break; }
            }
        }
    }
}

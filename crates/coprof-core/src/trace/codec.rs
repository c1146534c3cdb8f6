//! The record codec: one event ⇄ a few bytes, before zstd.
//!
//! Each record is a tag byte (class in the low four bits, then ADDR, VALUE,
//! TAKEN, EXT), the PC as a zigzag delta from the previous record's PC,
//! the access size for loads and stores, the address (a control transfer's
//! target as a delta from its own PC; a memory address as a delta from the
//! previous memory address), the value, and an extension varint for rare
//! flags. Deltas restart at every chunk, so chunks decode independently. In
//! a loop the same deltas recur, which zstd then compresses to almost
//! nothing. Two records are not events: a thread switch (version 2) and a
//! sampled event's stack (version 3), each with a tag no event has.

use super::format::{tag, MAX_STACK};
use super::varint::{get, put, unzigzag, zigzag};
use crate::event::{flags, Class, Event};
use crate::OpenCall;

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

    /// Appends a stack record: the calls open when the next event was
    /// sampled. The deltas of events go on across it.
    pub fn stack(&mut self, calls: &[OpenCall], out: &mut Vec<u8>) {
        out.push(tag::STACK);
        put(out, calls.len() as u64);
        let mut prev = 0u64;
        for c in calls {
            put(out, zigzag(c.call_site.wrapping_sub(prev) as i64));
            put(out, zigzag(c.target.wrapping_sub(c.call_site) as i64));
            prev = c.call_site;
        }
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
    /// A stack record of more calls than [`MAX_STACK`].
    LongStack(u64),
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

    /// The calls of the stack record at `*pos`, appended to `calls`,
    /// advancing `*pos`: `true`, or `false` (and `*pos` as it was) when
    /// the record there is not a stack's. A stack changes no state of the
    /// decoder's.
    pub fn stack(
        buf: &[u8],
        pos: &mut usize,
        calls: &mut Vec<OpenCall>,
    ) -> Result<bool, DecodeError> {
        if buf.get(*pos) != Some(&tag::STACK) {
            return Ok(false);
        }
        let mut at = *pos + 1;
        let n = get(buf, &mut at).ok_or(DecodeError::Short)?;
        if n > MAX_STACK {
            return Err(DecodeError::LongStack(n));
        }
        let mut prev = 0u64;
        for _ in 0..n {
            let site = get(buf, &mut at).ok_or(DecodeError::Short)?;
            let target = get(buf, &mut at).ok_or(DecodeError::Short)?;
            let call_site = prev.wrapping_add(unzigzag(site) as u64);
            calls.push(OpenCall {
                call_site,
                target: call_site.wrapping_add(unzigzag(target) as u64),
            });
            prev = call_site;
        }
        *pos = at;
        Ok(true)
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

    #[test]
    fn a_stack_of_more_calls_than_a_reader_keeps_is_refused() {
        let mut buf = vec![tag::STACK];
        put(&mut buf, MAX_STACK + 1);
        let mut calls = Vec::new();
        assert_eq!(
            Decoder::stack(&buf, &mut 0, &mut calls),
            Err(DecodeError::LongStack(MAX_STACK + 1))
        );
        // One that ends early is short.
        let mut buf = vec![tag::STACK];
        put(&mut buf, 2);
        put(&mut buf, 0x40);
        assert_eq!(
            Decoder::stack(&buf, &mut 0, &mut calls),
            Err(DecodeError::Short)
        );
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
        fn stacks_round_trip_before_their_events(
            events in proptest::collection::vec(
                (arb_event(), proptest::option::of(proptest::collection::vec(any::<(u64, u64)>(), 0..20))),
                0..100,
            ),
        ) {
            let mut enc = Encoder::default();
            let mut buf = Vec::new();
            let stack_of = |s: &[(u64, u64)]| -> Vec<OpenCall> {
                s.iter().map(|&(call_site, target)| OpenCall { call_site, target }).collect()
            };
            for (e, stack) in &events {
                if let Some(s) = stack { enc.stack(&stack_of(s), &mut buf); }
                enc.encode(e, &mut buf);
            }
            let mut dec = Decoder::default();
            let mut pos = 0;
            for (e, stack) in &events {
                let mut calls = Vec::new();
                prop_assert_eq!(Decoder::stack(&buf, &mut pos, &mut calls).unwrap(), stack.is_some());
                prop_assert_eq!(&calls, &stack.as_deref().map(stack_of).unwrap_or_default());
                prop_assert!(!Decoder::stack(&buf, &mut pos, &mut calls).unwrap());
                let got = dec.decode(&buf, &mut pos).unwrap();
                prop_assert_eq!((got.pc, got.class, got.addr), (e.pc, e.class, e.addr));
            }
            prop_assert_eq!(pos, buf.len());
        }

        #[test]
        fn garbage_never_panics(bytes: Vec<u8>) {
            let mut dec = Decoder::default();
            let mut pos = 0;
            let mut calls = Vec::new();
            while pos < bytes.len() {
                match Decoder::switch(&bytes, &mut pos) {
                    Ok(Some(_)) => continue,
                    Ok(None) => {}
                    Err(_) => break,
                }
                match Decoder::stack(&bytes, &mut pos, &mut calls) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(_) => break,
                }
                if dec.decode(&bytes, &mut pos).is_err() { break; }
            }
        }
    }
}

//! LEB128 varints and zigzag encoding for the record codec.

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Maps a signed delta to an unsigned number with small magnitudes small.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Reads a varint at `*pos`, advancing it. `None` if the bytes end first or
/// the varint is longer than 10 bytes or overflows 64 bits. Inlined into
/// the record decoder, where it is the hottest code of trace reading.
#[inline(always)]
pub fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let b = *buf.get(*pos)?;
    *pos += 1;
    if b < 0x80 {
        return Some(b as u64);
    }
    let mut v = (b & 0x7f) as u64;
    let mut shift = 7;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return None;
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(v: u64) {
            let mut b = Vec::new();
            put(&mut b, v);
            let mut p = 0;
            prop_assert_eq!(get(&b, &mut p), Some(v));
            prop_assert_eq!(p, b.len());
        }

        #[test]
        fn zigzag_round_trip(v: i64) {
            prop_assert_eq!(unzigzag(zigzag(v)), v);
        }

        #[test]
        fn never_panics_on_garbage(bytes: Vec<u8>) {
            let mut p = 0;
            while p < bytes.len() {
                if get(&bytes, &mut p).is_none() { break; }
            }
        }
    }

    #[test]
    fn small_deltas_are_one_byte() {
        let mut b = Vec::new();
        put(&mut b, zigzag(-4));
        put(&mut b, zigzag(60));
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn rejects_overlong() {
        let b = [0xffu8; 11];
        assert_eq!(get(&b, &mut 0), None);
        let b = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(get(&b, &mut 0), None);
    }
}

//! A network monitor that finds where its traffic comes from and goes to,
//! by address ranges, with range-adaptive profiling (Mysore et al., TACO
//! 2008): a two-dimensional RAP tree over (source, destination) IPv4
//! addresses, a 32-bit universe in each. The tree refines itself where the
//! packets are (§2.2.1) and merges away what stopped mattering (§2.2.2), so
//! a subnet that sends a flood appears as its own range without a
//! configured list of prefixes, in bounded memory, and every range's count
//! is within ε·n of the truth (§2.3): checked here against an exact count
//! of the same packets. A split halves both addresses at once (b = 4 is
//! 2 × 2), so the ranges are boxes whose two prefixes have one length: a
//! flood from a /16 to one server shows as boxes of the /16 against the
//! server's /16, the finest split its share pays for.
//!
//! Run: `cargo run -p coprof-engines --example network_monitor`

use coprof_engines::rap::{Rap, RapConfig};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;

const PACKETS: u64 = 2_000_000;

fn ip(a: u8, b: u8, c: u8, d: u8) -> u64 {
    u32::from_be_bytes([a, b, c, d]) as u64
}

fn dotted(x: u64) -> String {
    let [a, b, c, d] = (x as u32).to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

/// `lo..=hi` as a prefix (`10.1.0.0/16`) when it is one, else as a span.
fn prefix(lo: u64, hi: u64) -> String {
    let size = hi - lo + 1;
    if size.is_power_of_two() && lo.is_multiple_of(size) {
        format!("{}/{}", dotted(lo), 32 - size.trailing_zeros())
    } else {
        format!("{}-{}", dotted(lo), dotted(hi))
    }
}

/// One packet's (source, destination): a flood from 10.1.0.0/16 to one
/// server (40%), a scan by one host across 192.168.0.0/16 (20%), web
/// clients anywhere to a /24 of servers (25%), and noise (15%).
fn packet(rng: &mut Xoshiro256PlusPlus) -> [u64; 2] {
    let r: f64 = rng.gen();
    let any = |rng: &mut Xoshiro256PlusPlus| rng.gen::<u32>() as u64;
    if r < 0.40 {
        [ip(10, 1, 0, 0) + (any(rng) & 0xffff), ip(192, 168, 1, 10)]
    } else if r < 0.60 {
        [ip(172, 16, 5, 5), ip(192, 168, 0, 0) + (any(rng) & 0xffff)]
    } else if r < 0.85 {
        [any(rng), ip(203, 0, 113, 0) + (any(rng) & 0xff)]
    } else {
        [any(rng), any(rng)]
    }
}

/// A hot range of traffic: the estimate, and the exact count beside it.
struct Found {
    src: (u64, u64),
    dst: (u64, u64),
    estimate: u64,
    exact: u64,
}

/// Profiles `PACKETS` packets at error bound `epsilon`; returns the
/// ranges with at least `hot` of the traffic, the tree's bytes, and
/// the exact hash map's.
fn run(epsilon: f64, hot: f64) -> (Vec<Found>, usize, usize) {
    let config = RapConfig {
        bits: 32,
        ..RapConfig::with_epsilon(epsilon)
    };
    let mut rap: Rap<2> = Rap::new(config).expect("a valid configuration");
    let mut exact: HashMap<[u64; 2], u64> = HashMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for _ in 0..PACKETS {
        let p = packet(&mut rng);
        rap.add(p);
        *exact.entry(p).or_default() += 1;
    }
    let snapshot = rap.snapshot();
    let found = snapshot
        .hot_ranges(hot)
        .into_iter()
        .map(|h| {
            let inside = |p: &[u64; 2]| (0..2).all(|d| (h.lo[d]..=h.hi[d]).contains(&p[d]));
            Found {
                src: (h.lo[0], h.hi[0]),
                dst: (h.lo[1], h.hi[1]),
                estimate: h.count,
                exact: exact
                    .iter()
                    .filter(|(p, _)| inside(p))
                    .map(|(_, &c)| c)
                    .sum(),
            }
        })
        .collect();
    let exact_bytes = exact.capacity() * (2 * 8 + 8 + 1);
    (found, rap.bytes(), exact_bytes)
}

fn main() {
    let epsilon = 0.01;
    let (found, tree_bytes, exact_bytes) = run(epsilon, 0.05);
    println!("{PACKETS} packets; ranges with at least 5% of them (ε = {epsilon}):");
    println!(
        "{:<36} {:<36} {:>8} {:>8}",
        "source", "destination", "share", "exact"
    );
    for f in &found {
        println!(
            "{:<36} {:<36} {:>7.2}% {:>7.2}%",
            prefix(f.src.0, f.src.1),
            prefix(f.dst.0, f.dst.1),
            f.estimate as f64 * 100.0 / PACKETS as f64,
            f.exact as f64 * 100.0 / PACKETS as f64
        );
    }
    println!(
        "RAP tree: {tree_bytes} bytes; the exact count of the same packets: {exact_bytes} bytes"
    );
}

#[test]
fn the_flood_and_the_scan_are_found_within_the_bound() {
    let epsilon = 0.01;
    let (found, tree_bytes, exact_bytes) = run(epsilon, 0.05);
    let bound = (epsilon * PACKETS as f64) as u64;
    for f in &found {
        assert!(
            f.estimate.abs_diff(f.exact) <= bound,
            "{} against {}",
            f.estimate,
            f.exact
        );
    }
    let within = |r: (u64, u64), lo: u64, bits: u32| lo <= r.0 && r.1 < lo + (1 << (32 - bits));
    let share = |f: &Found| f.estimate as f64 / PACKETS as f64;
    // The flood, 40% of the packets: its sources' /16 to the server's
    // /16, and narrower boxes inside.
    assert!(found.iter().any(|f| within(f.src, ip(10, 1, 0, 0), 16)
        && within(f.dst, ip(192, 168, 0, 0), 16)
        && (share(f) - 0.40).abs() < 0.01));
    // The scan, 20%: a box around the one host that holds all of it.
    assert!(found
        .iter()
        .any(|f| (f.src.0..=f.src.1).contains(&ip(172, 16, 5, 5))
            && within(f.src, ip(172, 16, 0, 0), 16)
            && within(f.dst, ip(192, 168, 0, 0), 16)
            && share(f) > 0.19));
    // The web clients come from everywhere: no box narrower than a
    // quarter of the sources holds 5% of the traffic to their /24.
    assert!(!found.iter().any(|f| within(f.dst, ip(203, 0, 113, 0), 8)));
    assert!(
        tree_bytes * 5 < exact_bytes,
        "{tree_bytes} against {exact_bytes}"
    );
}

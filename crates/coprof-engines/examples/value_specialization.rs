//! A language runtime that decides which call sites to specialize on an
//! argument's value, from a sampled value profile: DCPI's value sampling
//! with a Gibbons–Matias hotlist per site (Burrows et al., ASPLOS 2000,
//! §2.2). Every 16th call offers its argument to the site's list of at
//! most 16 values, so a site costs 16 values and counters whatever it is
//! called with; the estimates are checked here against exact counts.
//!
//! The lists use counting samples (Gibbons & Matias): once a value is in,
//! every later sample of it counts, so a frequent value's share is
//! estimated closely, which is what a specialization decision needs. A
//! site called with thousands of values keeps lowering its entry
//! probability p to stay within 16 values, and its most frequent value is
//! then overestimated by up to 1/p samples: a few percent here, far below
//! a specialization threshold. DCPI's own lists are concise samples, the
//! default of [`HotlistConfig`], whose estimates are unbiased but vary more
//! (here 89.8% for a flag that is 0 in 95.0% of calls).
//!
//! Run: `cargo run -p coprof-engines --example value_specialization`

use coprof_engines::hotlist::{HotlistConfig, HotlistTable, ValueKind, Variant};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;

const CALLS: u64 = 400_000;

/// A call site: its address, and the argument it passes on a call.
struct Site {
    pc: u64,
    what: &'static str,
    arg: fn(&mut Xoshiro256PlusPlus) -> u64,
}

fn sites() -> [Site; 4] {
    [
        Site {
            pc: 0x1000,
            what: "a size that never changes",
            arg: |_| 8,
        },
        Site {
            pc: 0x2000,
            what: "a flag that is almost always 0",
            arg: |r| {
                if r.gen_bool(0.95) {
                    0
                } else {
                    r.gen_range(1..64)
                }
            },
        },
        Site {
            pc: 0x3000,
            what: "an index over a large table",
            arg: |r| r.gen_range(0..100_000),
        },
        Site {
            pc: 0x4000,
            what: "one of two object types",
            arg: |r| if r.gen_bool(0.6) { 0xa0 } else { 0xb0 },
        },
    ]
}

/// One site's answer: its most frequent value, the sampled estimate of
/// that value's share of the calls, and the exact share.
struct Answer {
    pc: u64,
    what: &'static str,
    value: u64,
    estimated: f64,
    exact: f64,
}

fn run() -> (Vec<Answer>, usize) {
    let config = HotlistConfig {
        period: 16,
        variant: Variant::Counting,
        ..HotlistConfig::default()
    };
    let mut table = HotlistTable::new(config).expect("a valid configuration");
    let mut exact: HashMap<(u64, u64), u64> = HashMap::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let sites = sites();
    for _ in 0..CALLS {
        for s in &sites {
            let v = (s.arg)(&mut rng);
            table.add(s.pc, ValueKind::Loaded, v);
            *exact.entry((s.pc, v)).or_default() += 1;
        }
    }
    let snapshot = table.snapshot();
    let answers = snapshot
        .pc_values(ValueKind::Loaded)
        .into_iter()
        .map(|p| {
            let top = p.values[0];
            let s = sites.iter().find(|s| s.pc == p.pc).unwrap();
            Answer {
                pc: p.pc,
                what: s.what,
                value: top.value,
                estimated: top.invariance,
                exact: exact.get(&(p.pc, top.value)).copied().unwrap_or(0) as f64 / CALLS as f64,
            }
        })
        .collect();
    (answers, table.bytes())
}

fn main() {
    let (answers, bytes) = run();
    println!("{CALLS} calls per site, every 16th sampled; specialize at 90%:");
    for a in &answers {
        let verdict = if a.estimated >= 0.9 {
            "specialize"
        } else {
            "leave generic"
        };
        println!(
            "site {:#x} ({}): value {:#x} in {:.1}% of calls (exact {:.1}%): {verdict}",
            a.pc,
            a.what,
            a.value,
            a.estimated * 100.0,
            a.exact * 100.0
        );
    }
    println!("hotlists: {bytes} bytes");
}

#[test]
fn invariant_sites_are_specialized_and_the_shares_are_close() {
    let (answers, _) = run();
    assert_eq!(answers.len(), 4);
    let of = |pc: u64| answers.iter().find(|a| a.pc == pc).unwrap();
    // Frequent values are estimated closely.
    for a in answers.iter().filter(|a| a.exact > 0.5) {
        assert!(
            (a.estimated - a.exact).abs() < 0.02,
            "{:#x}: {} against {}",
            a.pc,
            a.estimated,
            a.exact
        );
    }
    assert_eq!((of(0x1000).value, of(0x1000).estimated), (8, 1.0));
    assert_eq!(of(0x2000).value, 0);
    assert!(of(0x2000).estimated >= 0.9);
    assert!(of(0x3000).exact < 0.001 && of(0x3000).estimated < 0.2);
    assert_eq!(of(0x4000).value, 0xa0);
    assert!((0.55..0.65).contains(&of(0x4000).estimated));
}

//! One test per rule of Appendix A (A.1–A.5) on the co-processor side.

use super::*;
use crate::coproc::primitives::Exit;

fn slots(cfg: LvpConfig) -> Slots {
    Slots::new(&cfg)
}

fn s(pc: u64, value: u64) -> Sample {
    Sample { pc, value }
}

/// Feeds samples until `pc` holds a slot (replacement is random).
fn place(sl: &mut Slots, pc: u64, value: u64) -> usize {
    for _ in 0..1000 {
        sl.sample(s(pc, value));
        if let Some(i) = (0..sl.values_len()).find(|&i| sl.is_valid(i) && sl.record(i).pc == pc) {
            return i;
        }
    }
    panic!("pc {pc:#x} never got a slot");
}

#[test]
fn a1_resampling_reselects_below_20_percent() {
    let mut sl = slots(LvpConfig::with_slots(4));
    let i = place(&mut sl, 0x10, 7);
    let t0 = sl.record(i).total;
    // hit = 1; four misses give 1/5 = 20%: not below, no re-selection.
    for _ in 0..4 {
        sl.sample(s(0x10, 9));
    }
    assert_eq!(
        (sl.record(i).value, sl.record(i).hit, sl.record(i).miss),
        (7, 1, 4)
    );
    // The fifth miss gives 1/6 < 20%: the active value becomes 9.
    sl.sample(s(0x10, 9));
    let r = sl.record(i);
    assert_eq!((r.value, r.hit, r.miss, r.total), (9, 1, 0, t0 + 5));
    assert!(sl.is_valid(i));
}

#[test]
fn a2_saturated_hit_counter_turns_slot_off() {
    let mut sl = slots(LvpConfig::with_slots(4));
    let i = place(&mut sl, 0x10, 7);
    while sl.record(i).hit < 254 {
        sl.sample(s(0x10, 7));
        assert!(sl.is_valid(i));
    }
    sl.sample(s(0x10, 7));
    assert_eq!(sl.record(i).hit, 255);
    assert!(
        !sl.is_valid(i),
        "saturated hit counter leaves the slot valid"
    );
}

#[test]
fn a2_saturated_miss_and_total_counters_turn_slot_off() {
    // Misses: alternate values so that invariance stays >= 20%.
    let mut sl = slots(LvpConfig::with_slots(4));
    let i = place(&mut sl, 0x10, 7);
    let mut n = 0;
    while sl.is_valid(i) {
        sl.sample(s(0x10, if n % 2 == 0 { 7 } else { 8 }));
        n += 1;
    }
    let r = sl.record(i);
    assert!(r.hit == 255 || r.miss == 255, "{r:?}");
    // Total: a narrow total counter with wide hit counters.
    let mut sl = slots(LvpConfig {
        hit_miss_bits: 16,
        total_bits: 6,
        ..LvpConfig::with_slots(4)
    });
    let i = place(&mut sl, 0x10, 7);
    while sl.is_valid(i) {
        sl.sample(s(0x10, 7));
    }
    assert_eq!(sl.record(i).total, 63);
}

#[test]
fn a2_reselection_after_16_samples_turns_slot_off() {
    let mut sl = slots(LvpConfig::with_slots(4));
    let i = place(&mut sl, 0x10, 1000);
    let mut v = 0;
    while sl.is_valid(i) {
        v += 1;
        sl.sample(s(0x10, v)); // every value new: re-selection every 5 misses
    }
    let r = sl.record(i);
    assert!(r.total >= 16, "{r:?}");
    assert!(
        r.total <= 20,
        "{r:?}: turned off later than the first re-selection past 16"
    );
}

#[test]
fn a3_replacement_only_of_next_up_slot_and_only_when_uninformed() {
    let cfg = LvpConfig::with_slots(2);
    let mut sl = slots(cfg);
    // Fill both slots with informative loads (total >= 15).
    let a = place(&mut sl, 0x10, 1);
    let b = place(&mut sl, 0x20, 1);
    assert_ne!(a, b);
    for _ in 0..20 {
        sl.sample(s(0x10, 1));
        sl.sample(s(0x20, 1));
    }
    // A random number in 0..15 never exceeds a total of 15 or more: every
    // miss fails, and the next-up index advances either way.
    for k in 0..50 {
        let before = sl.next_up();
        let exit = sl.sample(s(0x30 + k, 5));
        assert_eq!(sl.next_up(), (before + 1) % 2);
        assert!(sl.records().all(|r| r.pc != 0x30 + k));
        if exit != Exit::Done {
            break;
        }
    }
    // An empty slot (total 0) is replaced unless the number drawn is 0.
    let mut sl = slots(LvpConfig::with_slots(64));
    let mut replaced = 0;
    for k in 0..64 {
        sl.sample(s(0x1000 + 4 * k, 1));
        replaced += sl.records().count() as u64 - replaced;
    }
    assert!(
        (52..=64).contains(&replaced),
        "{replaced} of 64 empty slots taken"
    );
}

#[test]
fn a4_failed_replacements_raise_interrupt_at_threshold() {
    let cfg = LvpConfig {
        interrupt_threshold: 8,
        ..LvpConfig::with_slots(1)
    };
    let mut sl = slots(cfg);
    place(&mut sl, 0x10, 1);
    for _ in 0..20 {
        sl.sample(s(0x10, 1));
    }
    // Each new PC fails to replace (total >= 15): +1 each; the 8th fails
    // at the threshold.
    for k in 0..7 {
        assert_eq!(sl.sample(s(0x100 + k, 0)), Exit::Done, "{k}");
        assert_eq!(sl.failed(), k as u32 + 1);
    }
    assert_eq!(sl.sample(s(0x200, 0)), Exit::Interrupt(LvpInterrupt::Full));
    // A success counts down.
    sl.restart();
    assert_eq!(sl.failed(), 0);
}

#[test]
fn a4_success_decrements_the_failed_counter() {
    let cfg = LvpConfig {
        interrupt_threshold: 100,
        ..LvpConfig::with_slots(2)
    };
    let mut sl = slots(cfg);
    let i = place(&mut sl, 0x10, 1);
    for _ in 0..20 {
        sl.sample(s(0x10, 1));
    }
    // Slot i is informative; the other is empty. Misses alternate between
    // failing on i and (usually) succeeding on the other.
    let mut max_failed = 0;
    for k in 0..200 {
        sl.sample(s(0x1000 + k, 0));
        max_failed = max_failed.max(sl.failed());
    }
    assert!(sl.is_valid(i));
    assert!(
        max_failed < 20,
        "failures are offset by successes: {max_failed}"
    );
}

#[test]
fn a5_thrashing_raises_interrupt_after_4x_slots_replacements() {
    let mut sl = slots(LvpConfig::with_slots(8));
    let mut n = 0u64;
    let exit = loop {
        n += 1;
        // Every sample a new PC: slots never gather information.
        match sl.sample(s(0x1_0000 + 4 * n, 0)) {
            Exit::Done => assert!(sl.replacements() <= 32),
            e => break e,
        }
    };
    assert_eq!(sl.replacements(), 33);
    assert_eq!(exit, Exit::Interrupt(LvpInterrupt::Thrash { samples: n }));
}

//! The frequent loop detector (Gordon-Ross & Vahid, CASES 2003): watches
//! the retired instruction stream for taken short backward branches (§3.1),
//! tallies every k-th of them (§6), optionally through the coalescing
//! register (§5), in the frequent loop cache (§3.3).

use super::cache::FrequencyCache;
use super::coalesce::CoalescingRegister;
use super::config::{ConfigError, LoopConfig};
use super::snapshot::{DetectedLoop, HardwareCost, LoopProfile};
use coprof_core::event::is_short_backward;
use coprof_core::{flags, Blocks, ClassSet, Event, Run, Sink, Transfers};

/// The detector: a [`Sink`] of events, or fed short backward branches
/// directly with [`add_sbb`](LoopDetector::add_sbb).
#[derive(Clone, Debug)]
pub struct LoopDetector {
    config: LoopConfig,
    cache: FrequencyCache,
    coal: CoalescingRegister,
    /// Short backward branches still to see before the next tallied one
    /// (1 means the next is tallied).
    until_tally: u64,
    sbbs: u64,
    tallied: u64,
    instructions: u64,
    compressed_seen: bool,
    /// Whether the instruction stream comes as runs of blocks: the
    /// detector then finds the taken branches in the runs and ignores
    /// events.
    runs: bool,
    /// With runs: where the branches and jumps that end runs went.
    branches: Transfers,
}

/// Consecutive taken short backward branches of one loop, gathered so that
/// they are applied as one run ([`LoopDetector::add_sbb_run`]): the same
/// state, sooner. Other instructions between them do not matter.
#[derive(Default)]
struct SbbRun(Option<(u64, u64, u64)>);

impl SbbRun {
    /// One more sbb at `pc` to `target`; applies the gathered run to `d`
    /// when this one belongs to another loop.
    #[inline]
    fn push(&mut self, d: &mut LoopDetector, pc: u64, target: u64) {
        match &mut self.0 {
            Some((at, _, n)) if *at == pc => *n += 1,
            _ => {
                self.end(d);
                self.0 = Some((pc, target, 1));
            }
        }
    }

    /// Applies what is gathered.
    fn end(&mut self, d: &mut LoopDetector) {
        if let Some((pc, target, n)) = self.0.take() {
            d.add_sbb_run(pc, target, n);
        }
    }
}

impl LoopDetector {
    /// A detector with `config`, or the reason the configuration cannot be
    /// built.
    pub fn new(config: LoopConfig) -> Result<LoopDetector, ConfigError> {
        config.validate()?;
        Ok(LoopDetector {
            config,
            cache: FrequencyCache::new(config.sets(), config.ways, config.width),
            coal: CoalescingRegister::new(),
            until_tally: config.sample_interval,
            sbbs: 0,
            tallied: 0,
            instructions: 0,
            compressed_seen: false,
            runs: false,
            branches: Transfers::new(ClassSet::LOOP_BRANCHES),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LoopConfig {
        &self.config
    }

    /// One taken short backward branch at `pc` jumping back to `target`
    /// (the caller has recognised it as one, §3.1).
    #[inline]
    pub fn add_sbb(&mut self, pc: u64, target: u64) {
        self.sbbs += 1;
        self.until_tally -= 1;
        if self.until_tally != 0 {
            return;
        }
        self.until_tally = self.config.sample_interval;
        self.tallied += 1;
        let index = pc >> self.config.index_shift;
        if self.config.coalesce {
            self.coal.tally(&mut self.cache, pc, index, target, 1);
        } else {
            self.cache.increment(pc, index, target, 1);
        }
    }

    /// `n` consecutive taken short backward branches of one loop: the same
    /// result as `n` calls of [`add_sbb`](Self::add_sbb), in time that does
    /// not grow with `n` (used by the design-space sweep).
    #[inline]
    pub fn add_sbb_run(&mut self, pc: u64, target: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.sbbs += n;
        // Of the n, those that land on a sampling point (§6) are tallied.
        let k = self.config.sample_interval;
        let tallied = if k == 1 {
            n
        } else if n < self.until_tally {
            self.until_tally -= n;
            0
        } else {
            let past = n - self.until_tally;
            self.until_tally = k - past % k;
            1 + past / k
        };
        if tallied == 0 {
            return;
        }
        self.tallied += tallied;
        let index = pc >> self.config.index_shift;
        if self.config.coalesce {
            self.coal.tally(&mut self.cache, pc, index, target, tallied);
        } else {
            self.cache.increment(pc, index, target, tallied);
        }
    }

    /// A slice of taken short backward branches as (PC, target), in
    /// order. Consecutive sbbs of one loop are applied as one run
    /// ([`add_sbb_run`](Self::add_sbb_run)): the same result as one
    /// [`add_sbb`](Self::add_sbb) each, in less time.
    pub fn add_sbbs(&mut self, sbbs: &[(u64, u64)]) {
        let mut i = 0;
        while i < sbbs.len() {
            let (pc, target) = sbbs[i];
            let mut j = i + 1;
            while j < sbbs.len() && sbbs[j].0 == pc {
                j += 1;
            }
            self.add_sbb_run(pc, target, (j - i) as u64);
            i = j;
        }
    }

    /// Counts `n` retired instructions without looking at them, for callers
    /// that feed short backward branches directly but know how many
    /// instructions ran (the denominator of the execution share).
    pub fn add_instructions(&mut self, n: u64) {
        self.instructions += n;
    }

    /// Writes the coalescing register's pending count to the cache (done by
    /// [`finish`](Sink::finish) at the end of the stream).
    pub fn flush(&mut self) {
        self.coal.write_back(&mut self.cache);
    }

    /// The raw frequency count of the loop whose sbb is at `pc`, as the
    /// cache holds it now (pending coalesced counts not included).
    pub fn count(&self, pc: u64) -> Option<u64> {
        self.cache.get(pc, pc >> self.config.index_shift)
    }

    /// Short backward branches seen (before sampling).
    pub fn sbbs(&self) -> u64 {
        self.sbbs
    }

    /// Bytes the detector holds.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<LoopDetector>() + self.cache.bytes()
    }

    /// The detected loops, most frequent first, with the hardware's costs.
    /// A pending coalesced count is included as if written now; the
    /// detector itself is not changed.
    pub fn snapshot(&self) -> LoopProfile {
        let mut cache = self.cache.clone();
        let mut coal = self.coal;
        coal.write_back(&mut cache);
        let k = self.config.sample_interval;
        let mut entries = cache.entries();
        entries.sort_unstable_by(|a, b| b.count.cmp(&a.count).then(a.tag.cmp(&b.tag)));
        let total: u64 = entries.iter().map(|e| e.count).sum();
        let body_instructions =
            |e: &super::cache::CacheEntry| (e.tag - e.target.min(e.tag)) / 4 + 1;
        let loop_time: u64 = entries
            .iter()
            .map(|e| e.count * k * body_instructions(e))
            .sum();
        // The execution share is relative to every retired instruction when
        // the detector saw them, else to the time of the detected loops.
        let time_base = if self.instructions > 0 {
            self.instructions
        } else {
            loop_time
        };
        let loops = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let iterations = e.count * k;
                let body = body_instructions(e);
                DetectedLoop {
                    rank: i + 1,
                    pc: e.tag,
                    body_lo: e.target,
                    body_hi: e.tag,
                    count: e.count,
                    iterations,
                    body_instructions: body,
                    share: ratio(e.count, total),
                    exec_share: ratio(iterations * body, time_base),
                }
            })
            .collect();
        let c = cache.cost();
        let coalesced = coal.coalesced();
        LoopProfile {
            config: self.config,
            loops,
            sbbs: self.sbbs,
            tallied: self.tallied,
            instructions: self.instructions,
            compressed_seen: self.compressed_seen,
            cost: HardwareCost {
                cache_updates: c.updates,
                cache_reads: c.reads,
                cache_writes: c.writes,
                halvings: c.halvings,
                misses: c.misses,
                replacements: c.replacements,
                coalesced,
                updates_saved: ratio(coalesced, self.tallied),
            },
            bytes: self.bytes(),
        }
    }
}

/// `a / b`, or 0 when `b` is 0.
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Sink for LoopDetector {
    /// Every class: the detector needs only branches and jumps to find
    /// loops, but it counts every retired instruction for the execution
    /// share, as the on-chip detector sees the whole instruction stream.
    fn wants(&self) -> ClassSet {
        ClassSet::ALL
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.runs {
            return;
        }
        self.instructions += batch.len() as u64;
        let d = self.config.max_distance;
        let mut all_flags = 0;
        let mut run = SbbRun::default();
        for e in batch {
            all_flags |= e.flags;
            if e.is_short_backward_branch(d) {
                run.push(self, e.pc, e.addr);
            }
        }
        run.end(self);
        if all_flags & flags::COMPRESSED != 0 {
            self.compressed_seen = true;
        }
    }

    fn finish(&mut self) {
        self.flush();
    }

    /// With runs, the detector needs no events: the runs count the
    /// instructions, and a run that ends in a conditional branch or a jump
    /// (the classes a short backward branch can be, §3.1) is followed by
    /// the run of its target, so the branch was taken backward when the
    /// next run starts at or before it.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::NONE)
    }

    fn runs_follow(&mut self) {
        self.runs = true;
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        let d = self.config.max_distance;
        let mut sbbs = SbbRun::default();
        let mut branches = self.branches;
        branches.scan(runs, blocks, |pc, to| {
            if is_short_backward(pc, to, d) {
                sbbs.push(self, pc, to);
            }
        });
        self.branches = branches;
        sbbs.end(self);
        self.instructions += coprof_core::runs::instructions(runs);
        if !self.compressed_seen {
            self.compressed_seen = runs.iter().any(|r| blocks.run_has_compressed(*r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_core::Class;

    fn sbb(pc: u64, target: u64) -> Event {
        Event::control(pc, Class::CondBranch, target, true)
    }

    #[test]
    fn finds_loops_by_taken_short_backward_branches() {
        let mut d = LoopDetector::new(LoopConfig::default()).unwrap();
        let mut ev = Vec::new();
        for _ in 0..30 {
            ev.push(Event::new(0x100, Class::IntAlu));
            ev.push(sbb(0x10c, 0x100));
        }
        ev.push(Event::control(0x10c, Class::CondBranch, 0x100, false)); // exit
        ev.push(Event::control(0x9000, Class::Jump, 0x10, true)); // too far
        ev.push(Event::control(0x200, Class::CondBranch, 0x300, true)); // forward
        ev.push(Event::control(0x400, Class::Call, 0x3f0, true)); // a call
        for _ in 0..10 {
            ev.push(sbb(0x208, 0x200));
        }
        d.observe(&ev);
        d.finish();
        let p = d.snapshot();
        assert_eq!(p.loops.len(), 2);
        assert_eq!(
            (p.loops[0].pc, p.loops[0].body_lo, p.loops[0].count),
            (0x10c, 0x100, 30)
        );
        assert_eq!(p.loops[0].body_instructions, 4);
        assert_eq!(p.loops[1].pc, 0x208);
        assert!((p.loops[0].share - 0.75).abs() < 1e-12);
        assert_eq!(p.instructions, ev.len() as u64);
        assert_eq!(p.sbbs, 40);
        assert!(!p.compressed_seen);
    }

    #[test]
    fn sampling_tallies_every_kth() {
        let mut d = LoopDetector::new(LoopConfig::default().sampling(4)).unwrap();
        for _ in 0..40 {
            d.add_sbb(0x40, 0x20);
        }
        for _ in 0..9 {
            d.add_sbb(0x80, 0x20);
        }
        let p = d.snapshot();
        assert_eq!(p.tallied, 12);
        assert_eq!(p.loops[0].count, 10);
        assert_eq!(p.loops[0].iterations, 40);
        assert_eq!(p.loops[1].count, 2); // the 44th and 48th sbb
    }

    #[test]
    fn runs_equal_single_sbbs_under_sampling() {
        for k in [1u64, 2, 3, 7] {
            for coalesce in [false, true] {
                let cfg = LoopConfig::sized(4, 2, 4).sampling(k).coalescing(coalesce);
                let mut a = LoopDetector::new(cfg).unwrap();
                let mut b = a.clone();
                for (i, n) in [5u64, 1, 30, 2, 0, 17, 4, 40, 3].into_iter().enumerate() {
                    let pc = 0x100 + 4 * (i as u64 % 5);
                    a.add_sbb_run(pc, 0x80, n);
                    for _ in 0..n {
                        b.add_sbb(pc, 0x80);
                    }
                }
                let (pa, pb) = (a.snapshot(), b.snapshot());
                assert_eq!(pa.loops, pb.loops, "k {k} coalesce {coalesce}");
                assert_eq!(pa.cost, pb.cost);
                assert_eq!(pa.tallied, pb.tallied);
            }
        }
    }

    #[test]
    fn snapshot_includes_pending_coalesced_count_without_changing_state() {
        let mut d = LoopDetector::new(LoopConfig::default().coalescing(true)).unwrap();
        for _ in 0..7 {
            d.add_sbb(0x40, 0x20);
        }
        assert_eq!(d.count(0x40), None);
        assert_eq!(d.snapshot().loops[0].count, 7);
        assert_eq!(d.count(0x40), None);
        d.flush();
        assert_eq!(d.count(0x40), Some(7));
    }

    #[test]
    fn execution_share_uses_body_length() {
        let mut d = LoopDetector::new(LoopConfig::default()).unwrap();
        // Loop A: 10 iterations of a 4-instruction body; loop B: 10 of 1.
        for _ in 0..10 {
            d.add_sbb(0x10c, 0x100);
            d.add_sbb(0x200, 0x200);
        }
        let p = d.snapshot();
        let a = p.loops.iter().find(|l| l.pc == 0x10c).unwrap();
        assert!((a.exec_share - 0.8).abs() < 1e-12, "{}", a.exec_share);
        d.add_instructions(100);
        let p = d.snapshot();
        let a = p.loops.iter().find(|l| l.pc == 0x10c).unwrap();
        assert!((a.exec_share - 0.4).abs() < 1e-12);
    }

    #[test]
    fn notes_compressed_code() {
        let mut d = LoopDetector::new(LoopConfig::default()).unwrap();
        let mut e = sbb(0x10, 0x8);
        e.flags |= flags::COMPRESSED;
        d.observe(&[e]);
        assert!(d.snapshot().compressed_seen);
    }

    #[test]
    fn runs_of_blocks_give_the_same_profile_as_events() {
        use coprof_core::synth::{generate, GenConfig, Workload};
        use coprof_core::{SliceSource, Source};
        for (workload, seed) in [(Workload::Loops, 1), (Workload::Mixed, 2)] {
            let events = generate(&GenConfig::new(workload, 200_000).seed(seed)).unwrap();
            for cfg in [
                LoopConfig::default(),
                LoopConfig::default().coalescing(true).sampling(5),
            ] {
                let mut plain = LoopDetector::new(cfg).unwrap();
                SliceSource::new(&events).run(&mut plain).unwrap();
                let mut with_runs = LoopDetector::new(cfg).unwrap();
                let delivered = SliceSource::new(&events)
                    .with_runs()
                    .run(&mut with_runs)
                    .unwrap();
                assert_eq!(delivered, 0, "the branches are found in the runs");
                let (a, b) = (plain.snapshot(), with_runs.snapshot());
                assert!(a.tallied > 0, "{workload:?}: no loops");
                assert_eq!(a.instructions, events.len() as u64);
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{workload:?}");
            }
        }
    }
}

//! `coprof values`: load-value profiles from the profiling co-processor's
//! load-value profiler (Zilles & Sohi, HPCA 2001, §5.1), simple sampling
//! (§5) or Gibbons–Matias hotlists (DCPI, Burrows et al., ASPLOS 2000,
//! §2.2), optionally scored against the exact profile with the paper's
//! weighted RMS invariance error (§5.2–5.3) and its convergence (Fig. 7).

use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{pct, thousands};
use coprof_core::metrics::invariance::{exact_invariance, Criteria};
use coprof_core::wanted::with_wanted;
use coprof_core::{Class, ClassSet, Event, ExactCounts, Sink};
use coprof_engines::coproc::{
    invariance_error, Coprocessor, HostConfig, LoadValueProfiler, LvpConfig, PartitionHash,
    PcValues, SimpleConfig, SimpleSampler,
};
use coprof_engines::hotlist::{HotlistConfig, HotlistTable, ValueKind, Variant};
use serde::Serialize;

/// Which loads are (semi-)invariant, and with what value.
///
/// Runs one value profiler over the input and reports, per load PC, the
/// most frequent values with their estimated invariance (the share of the
/// load's executions that produced the value), sorted by execution weight.
/// With --exact it also counts every (PC, value) exactly and scores the
/// estimates with the co-processor paper's metric: the root-mean-square
/// invariance error weighted by frequency, over pairs with at least 200
/// executions and 25% invariance (unreported pairs count as 0).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof gen --workload zipf --events 2000000 -o zipf.cpt
  coprof values zipf.cpt
  coprof values zipf.cpt --algo simple --period 512 --exact
  coprof values zipf.cpt --algo hotlist --variant counting --exact --json
  coprof values zipf.cpt --algo hotlist --value-type address --exact
  coprof values zipf.cpt --slots 512 --service-rate 0.25 --exact
  coprof values zipf.cpt --sweep --sweep-slots 128,256 --sweep-service-rate 1,0.25
  coprof values zipf.cpt --sweep --algo hotlist --sweep-period 1,1024
  coprof values zipf.cpt --sweep --algo simple --sweep-values-per-pc 1,4")]
pub struct Args {
    #[command(flatten)]
    pub(crate) input: crate::input::InputArgs,
    /// The profiler: coproc (the co-processor's load-value profiler),
    /// simple (every N-th load into per-PC tables) or hotlist
    /// (Gibbons–Matias hotlists of DCPI value sampling).
    #[arg(long, default_value = "coproc", value_parser = ["coproc", "simple", "hotlist"])]
    pub(crate) algo: String,
    /// coproc: number of slots (paper: 256; also 128, 512).
    #[arg(long)]
    slots: Option<usize>,
    /// coproc: samples the co-processor processes per retired instruction;
    /// below 1 the 1 KB sample buffer can fill and drop samples.
    #[arg(long)]
    service_rate: Option<f64>,
    /// coproc: sample buffer size in bytes (paper: 1024; 16 bytes per sample).
    #[arg(long)]
    buffer_bytes: Option<usize>,
    /// coproc: partition filter hash: multiplicative, fold or low.
    #[arg(long)]
    partition_hash: Option<String>,
    /// coproc: once the profile is complete, keep the front end watching
    /// the whole program for loads the mask table does not know (a later
    /// phase's) instead of stopping (§5.1.4 stops; this is an option).
    /// Masked loads still cost nothing.
    #[arg(long)]
    watch_new_loads: bool,
    /// simple and hotlist: take every N-th load (simple: 1024; hotlist: 1).
    #[arg(long)]
    period: Option<u64>,
    /// simple: values kept per load PC; a new value that finds them all
    /// taken replaces the least counted [default: 16].
    #[arg(long, value_name = "N")]
    values_per_pc: Option<usize>,
    /// hotlist: values per hotlist, N (DCPI: 16).
    #[arg(long)]
    hotlist_size: Option<usize>,
    /// hotlist: concise or counting samples.
    #[arg(long)]
    variant: Option<String>,
    /// hotlist: which value of each load to profile, as DCPI keeps a
    /// hotlist per PC and value type: value (the value loaded; default) or
    /// address (the load's effective address). --exact counts the same type.
    #[arg(long, value_name = "TYPE", value_parser = ["value", "address"])]
    value_type: Option<String>,
    /// Seed of the profiler's random numbers (coproc LFSR, hotlist coins).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Values shown per load.
    #[arg(long, default_value_t = 4)]
    top: usize,
    /// Loads shown in the text report (JSON lists every load).
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Count exactly too: exact invariance of each value, the weighted
    /// RMS error, and its convergence with events processed.
    #[arg(long)]
    exact: bool,
    /// Explore the design space instead of building one profile: run every combination of the
    /// --sweep-* lists over the same stream (with --algo coproc: slots, service rate, sample
    /// buffer; with --algo simple: period, values per PC; with --algo hotlist: hotlist size,
    /// period, variant), each scored against the exact profile, and name the cheapest within
    /// --max-error.
    #[arg(long, conflicts_with_all = ["slots", "service_rate", "buffer_bytes", "exact", "period", "values_per_pc", "hotlist_size", "variant", "value_type"])]
    pub(crate) sweep: bool,
    /// With --sweep (coproc): the slot counts to try, comma-separated [default: 128,256,512].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_slots: Option<Vec<usize>>,
    /// With --sweep (coproc): the service rates to try (samples per retired instruction),
    /// comma-separated [default: 1,0.5,0.25,0.125].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_service_rate: Option<Vec<f64>>,
    /// With --sweep (coproc): the sample buffer sizes to try in bytes, comma-separated
    /// [default: 256,1024,4096].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_buffer: Option<Vec<usize>>,
    /// With --sweep (hotlist): the values per hotlist to try, comma-separated
    /// [default: 4,8,16,32].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_hotlist_size: Option<Vec<usize>>,
    /// With --sweep (simple, hotlist): the sampling periods to try in loads, comma-separated
    /// [default: 1,64,1024,16384].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_period: Option<Vec<u64>>,
    /// With --sweep (simple): the values kept per load PC to try, comma-separated
    /// [default: 4,8,16,32].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_values_per_pc: Option<Vec<usize>>,
    /// With --sweep (hotlist): the sample kinds to try, comma-separated: concise, counting
    /// [default: both].
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep")]
    pub(crate) sweep_variant: Option<Vec<String>>,
    /// With --sweep: the largest weighted RMS invariance error the cheapest reported
    /// configuration may have.
    #[arg(long, requires = "sweep", default_value_t = 0.05)]
    pub(crate) max_error: f64,
    #[command(flatten)]
    pub(crate) svg: crate::output::SvgArgs,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// One of the three profilers, behind one interface for the report.
enum Engine {
    Coproc(Box<Coprocessor<LoadValueProfiler>>),
    Simple(SimpleSampler),
    /// The table, with the one value type it keeps.
    Hotlist(HotlistTable, ValueKind),
}

/// The overhead proxies of §3.5.
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Overhead {
    interrupts: u64,
    samples_transferred: u64,
    samples_dropped: u64,
}

impl Engine {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        match self {
            Engine::Coproc(c) => c.as_mut(),
            Engine::Simple(s) => s,
            Engine::Hotlist(h, _) => h,
        }
    }

    fn wants(&self) -> ClassSet {
        match self {
            Engine::Coproc(c) => c.wants(),
            Engine::Simple(s) => s.wants(),
            Engine::Hotlist(h, _) => h.wants(),
        }
    }

    fn pcs(&self) -> Vec<PcValues> {
        match self {
            Engine::Coproc(c) => c.program().estimates(),
            Engine::Simple(s) => s.snapshot().pcs,
            Engine::Hotlist(h, kind) => h.snapshot().pc_values(*kind),
        }
    }

    fn overhead(&self) -> Overhead {
        match self {
            Engine::Coproc(c) => Overhead {
                interrupts: c.stats().interrupts,
                samples_transferred: c.stats().transferred,
                samples_dropped: c.stats().dropped,
            },
            // Every sample is one interrupt and one sample handed over.
            Engine::Simple(s) => Overhead {
                interrupts: s.samples(),
                samples_transferred: s.samples(),
                samples_dropped: 0,
            },
            Engine::Hotlist(h, _) => {
                let n = h.samples();
                Overhead {
                    interrupts: n,
                    samples_transferred: n,
                    samples_dropped: 0,
                }
            }
        }
    }

    /// Which value of each load the profile is of.
    fn kind(&self) -> ValueKind {
        match self {
            Engine::Hotlist(_, kind) => *kind,
            _ => ValueKind::Loaded,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Engine::Coproc(c) => c.bytes(),
            Engine::Simple(s) => s.bytes(),
            Engine::Hotlist(h, _) => h.bytes(),
        }
    }

    fn details(&self) -> serde_json::Value {
        let v = match self {
            Engine::Coproc(c) => serde_json::to_value(c.snapshot()),
            Engine::Simple(s) => serde_json::to_value(s.snapshot()),
            Engine::Hotlist(h, _) => serde_json::to_value(h.snapshot()),
        };
        let mut v = v.unwrap_or(serde_json::Value::Null);
        // The per-PC lists are already the report's `pcs`.
        if let Some(o) = v.as_object_mut() {
            o.remove("pcs");
            o.remove("lists");
        }
        v
    }
}

/// The co-processor's hardware and program parameters of `a` other than
/// its slots: what a sweep's configurations share.
pub(crate) fn coproc_config(a: &Args) -> anyhow::Result<(HostConfig, LvpConfig)> {
    let mut host = HostConfig::default();
    if let Some(r) = a.service_rate {
        host.service_rate = r;
    }
    if let Some(b) = a.buffer_bytes {
        host.buffer_bytes = b;
    }
    if let Some(h) = &a.partition_hash {
        host.partition_hash = h
            .parse::<PartitionHash>()
            .map_err(|e| bad_input(format!("--partition-hash: {e}")))?;
    }
    let lvp = LvpConfig {
        seed: (a.seed as u32) ^ ((a.seed >> 32) as u32),
        watch_new_loads: a.watch_new_loads,
        ..LvpConfig::default()
    };
    Ok((host, lvp))
}

/// Refuses an option given for another algorithm than `a`'s, naming it.
pub(crate) fn only(a: &Args, set: bool, opt: &str, algo: &str) -> anyhow::Result<()> {
    if set && a.algo != algo {
        return Err(bad_input(format!(
            "{opt} applies to --algo {algo}, not --algo {}",
            a.algo
        )));
    }
    Ok(())
}

/// The co-processor's options other than its sizes, which a sweep shares
/// with one profile: refused with another algorithm.
pub(crate) fn check_coproc_options(a: &Args) -> anyhow::Result<()> {
    only(a, a.partition_hash.is_some(), "--partition-hash", "coproc")?;
    only(a, a.watch_new_loads, "--watch-new-loads", "coproc")
}

fn build(a: &Args) -> anyhow::Result<Engine> {
    let only = |set: bool, opt: &str, algo: &str| only(a, set, opt, algo);
    only(a.slots.is_some(), "--slots", "coproc")?;
    only(a.service_rate.is_some(), "--service-rate", "coproc")?;
    only(a.buffer_bytes.is_some(), "--buffer-bytes", "coproc")?;
    check_coproc_options(a)?;
    only(a.values_per_pc.is_some(), "--values-per-pc", "simple")?;
    only(a.hotlist_size.is_some(), "--hotlist-size", "hotlist")?;
    only(a.variant.is_some(), "--variant", "hotlist")?;
    // The value loaded is what every profiler profiles.
    only(
        a.value_type.as_deref() == Some("address"),
        "--value-type address",
        "hotlist",
    )?;
    if a.algo == "coproc" && a.period.is_some() {
        return Err(bad_input(
            "--period applies to --algo simple or hotlist: the co-processor sees every load",
        ));
    }
    if a.period == Some(0) {
        return Err(bad_input("--period must be at least 1 load, got 0"));
    }
    Ok(match a.algo.as_str() {
        "coproc" => {
            let slots = a.slots.unwrap_or(256);
            if !(1..=65536).contains(&slots) {
                return Err(bad_input(format!(
                    "--slots must be in 1..=65536, got {slots}"
                )));
            }
            let (host, cfg) = coproc_config(a)?;
            let lvp = LoadValueProfiler::new(LvpConfig { slots, ..cfg }).map_err(bad_input)?;
            let cp = Coprocessor::new(&host, lvp)
                .map_err(|e| bad_input(format!("--service-rate / --buffer-bytes: {e}")))?;
            Engine::Coproc(Box::new(cp))
        }
        "simple" => Engine::Simple(
            SimpleSampler::new({
                let paper = SimpleConfig::default();
                SimpleConfig {
                    period: a.period.unwrap_or(paper.period),
                    values_per_pc: a.values_per_pc.unwrap_or(paper.values_per_pc),
                }
            })
            .map_err(|e| bad_input(format!("--values-per-pc: {e}")))?,
        ),
        _ => {
            let variant = match &a.variant {
                Some(v) => v
                    .parse::<Variant>()
                    .map_err(|e| bad_input(format!("--variant: {e}")))?,
                None => Variant::Concise,
            };
            let kind: ValueKind = a
                .value_type
                .as_deref()
                .unwrap_or("value")
                .parse()
                .map_err(|e| bad_input(format!("--value-type: {e}")))?;
            let cfg = HotlistConfig {
                capacity: a.hotlist_size.unwrap_or(16),
                variant,
                kinds: vec![kind],
                period: a.period.unwrap_or(1),
                seed: a.seed,
                ..HotlistConfig::default()
            };
            Engine::Hotlist(
                HotlistTable::new(cfg).map_err(|e| bad_input(format!("--hotlist-size: {e}")))?,
                kind,
            )
        }
    })
}

/// One point of the convergence curve (Fig. 7).
#[derive(Clone, Debug, Serialize)]
struct ConvergencePoint {
    events: u64,
    weighted_rms_error: f64,
    #[serde(flatten)]
    overhead: Overhead,
}

/// Feeds the engine and, with --exact, the exact counts, scoring the
/// engine at geometric points of the events processed (4096 · 2^k).
pub struct Run {
    engine: Engine,
    algo: String,
    top: usize,
    limit: usize,
    exact: Option<ExactCounts>,
    events: u64,
    next_point: u64,
    curve: Vec<ConvergencePoint>,
    /// The batch's events of the wanted classes.
    wanted: Vec<Event>,
    /// For an address profile, the loads with their address as the value,
    /// for the exact counts of (PC, address).
    as_values: Vec<Event>,
}

const FIRST_POINT: u64 = 4096;

impl Run {
    /// Feeds the engine and the exact counts, stopping at each convergence point.
    fn observe_wanted(&mut self, mut batch: &[Event]) {
        while !batch.is_empty() {
            let room = if self.exact.is_some() {
                (self.next_point - self.events).min(batch.len() as u64) as usize
            } else {
                batch.len()
            };
            let (now, rest) = batch.split_at(room);
            self.engine.sink().observe(now);
            if let Some(x) = &mut self.exact {
                match self.engine.kind() {
                    ValueKind::Loaded => x.observe(now),
                    ValueKind::Address => {
                        self.as_values.clear();
                        self.as_values.extend(now.iter().map(|e| match e.class {
                            Class::Load => Event {
                                value: e.addr,
                                ..*e
                            },
                            _ => *e,
                        }));
                        x.observe(&self.as_values);
                    }
                }
            }
            self.events += now.len() as u64;
            batch = rest;
            if self.exact.is_some() && self.events == self.next_point {
                self.point();
                self.next_point *= 2;
            }
        }
    }

    fn point(&mut self) {
        if let Some(x) = &self.exact {
            let e = invariance_error(x, Criteria::default(), &self.engine.pcs());
            self.curve.push(ConvergencePoint {
                events: self.events,
                weighted_rms_error: e.weighted_rms_error,
                overhead: self.engine.overhead(),
            });
        }
    }
}

impl Sink for Run {
    fn wants(&self) -> ClassSet {
        let w = self.engine.wants();
        if self.exact.is_some() {
            w.with(Class::Load)
        } else {
            w
        }
    }

    /// Passes on only the classes asked for, as a trace reader or the
    /// simulator does for a sink alone: the co-processor's model times its
    /// sample buffer in events received, so a profile sharing the pass with
    /// other engines must give it the same events as `coprof values`.
    fn observe(&mut self, batch: &[Event]) {
        let mut wanted = std::mem::take(&mut self.wanted);
        with_wanted(self.wants(), batch, &mut wanted, |b| self.observe_wanted(b));
        self.wanted = wanted;
    }

    fn finish(&mut self) {
        self.engine.sink().finish();
        if self.exact.is_some() {
            // The final point, after the engine's last copy-out.
            self.curve.retain(|p| p.events != self.events);
            self.point();
        }
    }
}

#[derive(Serialize)]
struct ValueOut {
    value: u64,
    invariance: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_invariance: Option<f64>,
    /// What the value points at, when a function or a data object of the
    /// program or its libraries starts there (a function pointer, a
    /// global's address): `memset in libc.so.6`.
    #[serde(skip_serializing_if = "Option::is_none")]
    points_to: Option<String>,
}

#[derive(Serialize)]
struct PcOut {
    pc: u64,
    weight: u64,
    samples: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    executions: Option<u64>,
    status: coprof_engines::coproc::PcStatus,
    glacial: bool,
    values: Vec<ValueOut>,
    /// Where the load is: `function (file:line)`, with the program's symbols.
    #[serde(skip_serializing_if = "Option::is_none")]
    place: Option<String>,
    /// The mapping the load lies in (`[anon]` for generated code, else
    /// its file's path), when the run's mappings are known: what names a
    /// load no symbol covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    area: Option<String>,
    /// The load instruction's assembly text.
    #[serde(skip_serializing_if = "Option::is_none")]
    disasm: Option<String>,
    /// Its source line, as DCPI's annotated listings show it.
    #[serde(skip_serializing_if = "Option::is_none")]
    source_text: Option<String>,
}

#[derive(Serialize)]
struct Report {
    algo: String,
    /// Which value of each load: `value` (the value loaded) or `address`
    /// (its effective address); the `value` of each entry is of this type.
    value_type: &'static str,
    events: u64,
    loads: Option<u64>,
    interrupts: u64,
    samples_transferred: u64,
    samples_dropped: u64,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    weighted_rms_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scored_pairs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unreported_pairs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_bytes: Option<usize>,
    pcs: Vec<PcOut>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    convergence: Vec<ConvergencePoint>,
    engine: serde_json::Value,
}

/// Why the values report does not read samples that are PCs alone.
pub const NEEDS_LOADS: &str = "the values report needs each sampled load with its value";

pub fn run(mut a: Args) -> anyhow::Result<()> {
    a.input.refuse_pcs_only(NEEDS_LOADS)?;
    let json = a.json;
    // A native x86-64 program is sampled, each sample taken at its
    // next load.
    a.input.setup.native = Some(true);
    crate::job::run_one(&a.input, json, prepare(&a)?)
}

/// The value report of `a`'s options, or its sweep, as a [`Job`].
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    if a.sweep {
        return super::values_sweep::prepare(a);
    }
    Ok(Box::new(single(a)?))
}

/// The value report of one profiler.
fn single(a: &Args) -> anyhow::Result<Run> {
    Ok(Run {
        engine: build(a)?,
        algo: a.algo.clone(),
        top: a.top,
        limit: a.limit,
        exact: a.exact.then(ExactCounts::new),
        events: 0,
        next_point: FIRST_POINT,
        curve: Vec::new(),
        wanted: Vec::new(),
        as_values: Vec::new(),
    })
}

impl Job for Run {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        self
    }

    fn finish(mut self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        let sym = info.symbols.as_ref();
        let exact = self.exact.take();
        let events = self.events;
        let curve = std::mem::take(&mut self.curve);
        let mut pcs = self.engine.pcs();
        if let Some(x) = &exact {
            // With exact counts at hand, sort by true execution weight.
            pcs.sort_by(|p, q| {
                x.load_count(q.pc)
                    .cmp(&x.load_count(p.pc))
                    .then(p.pc.cmp(&q.pc))
            });
        }
        let metric = exact
            .as_ref()
            .map(|x| invariance_error(x, Criteria::default(), &pcs));
        let o = self.engine.overhead();
        // The values are those loaded, not the loads' addresses: a load
        // of a return address loads a place in the code.
        let loaded = self.engine.kind() == ValueKind::Loaded;
        let report = Report {
            algo: self.algo.clone(),
            value_type: value_type_name(self.engine.kind()),
            events,
            loads: exact.as_ref().map(|x| x.class_count(Class::Load)),
            interrupts: o.interrupts,
            samples_transferred: o.samples_transferred,
            samples_dropped: o.samples_dropped,
            bytes: self.engine.bytes(),
            weighted_rms_error: metric.as_ref().map(|m| m.weighted_rms_error),
            scored_pairs: metric.as_ref().map(|m| m.pairs),
            unreported_pairs: metric.as_ref().map(|m| m.unreported),
            exact_bytes: exact.as_ref().map(|x| x.bytes()),
            pcs: pcs
                .iter()
                .map(|p| PcOut {
                    pc: p.pc,
                    weight: p.weight,
                    samples: p.samples,
                    executions: exact.as_ref().map(|x| x.load_count(p.pc)),
                    status: p.status,
                    glacial: p.glacial,
                    values: p
                        .values
                        .iter()
                        .take(self.top)
                        .map(|v| ValueOut {
                            value: v.value,
                            invariance: v.invariance,
                            exact_invariance: exact
                                .as_ref()
                                .map(|x| exact_invariance(x, p.pc, v.value)),
                            points_to: sym.and_then(|s| {
                                if loaded {
                                    s.loaded_pointee(p.pc, v.value)
                                } else {
                                    s.pointee(v.value)
                                }
                            }),
                        })
                        .collect(),
                    place: sym.and_then(|s| s.place(p.pc)),
                    area: crate::areas::of(info, p.pc),
                    disasm: sym.and_then(|s| s.disassemble(p.pc)),
                    source_text: sym.and_then(|s| s.source_text(p.pc)),
                })
                .collect(),
            convergence: curve,
            engine: self.engine.details(),
        };
        let mut text = String::new();
        print_text(&mut text, &report, self.limit);
        Ok(Rendered {
            json: serde_json::to_value(&report)?,
            text,
        })
    }
}

/// The `--value-type` name of `kind`.
fn value_type_name(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Loaded => "value",
        ValueKind::Address => "address",
    }
}

fn print_text(out: &mut String, r: &Report, limit: usize) {
    crate::outln!(
        out,
        "{} {} profile: {} events, {} loads profiled, {} bytes",
        r.algo,
        r.value_type,
        thousands(r.events),
        r.pcs.len(),
        thousands(r.bytes as u64)
    );
    crate::outln!(
        out,
        "overhead: {} interrupts, {} samples transferred, {} samples dropped",
        thousands(r.interrupts),
        thousands(r.samples_transferred),
        thousands(r.samples_dropped)
    );
    if let (Some(e), Some(n), Some(u)) = (r.weighted_rms_error, r.scored_pairs, r.unreported_pairs)
    {
        crate::outln!(out,
            "weighted RMS invariance error {:.4} over {n} (PC, {}) pairs with >= 200 executions and >= 25% invariance ({u} unreported)",
            e,
            r.value_type
        );
    }
    crate::outln!(out);
    let exact = r.weighted_rms_error.is_some();
    crate::outln!(
        out,
        "{:>18}  {:>12}  {:>9}  {:<10}  {} (invariance{})",
        "pc",
        if exact { "executions" } else { "weight" },
        "samples",
        "status",
        if r.value_type == "address" {
            "addresses"
        } else {
            "values"
        },
        if exact { " / exact" } else { "" }
    );
    for p in r.pcs.iter().take(limit) {
        let status = serde_json::to_value(p.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let status = if p.glacial {
            format!("{status},glacial")
        } else {
            status
        };
        let values: Vec<String> = p
            .values
            .iter()
            .map(|v| {
                let value = match &v.points_to {
                    Some(name) => format!("{:#x} <{name}>", v.value),
                    None => format!("{:#x}", v.value),
                };
                match v.exact_invariance {
                    Some(x) => format!("{value} {} / {}", pct(v.invariance), pct(x)),
                    None => format!("{value} {}", pct(v.invariance)),
                }
            })
            .collect();
        crate::outln!(
            out,
            "{:>#18x}  {:>12}  {:>9}  {:<10}  {}",
            p.pc,
            thousands(p.executions.unwrap_or(p.weight)),
            thousands(p.samples),
            status,
            values.join(", ")
        );
        let place = crate::areas::or_mapping(p.place.clone(), p.area.as_deref());
        if place.is_some() || p.disasm.is_some() {
            let text = p.disasm.as_deref().unwrap_or("");
            // Two spaces at least between a long instruction and its place.
            let gap = if text.len() >= 24 { "  " } else { " " };
            crate::outln!(
                out,
                "{:>18}  {:<24}{gap}{}{}",
                "",
                text,
                place.as_deref().unwrap_or(""),
                p.source_text
                    .as_deref()
                    .map(|t| format!("  | {t}"))
                    .unwrap_or_default()
            );
        }
    }
    if r.pcs.len() > limit {
        crate::outln!(
            out,
            "... {} more loads (--limit, or --json for all)",
            r.pcs.len() - limit
        );
    }
}

//! `coprof values --sweep`: the design space of the profiling
//! co-processor (`coprof_engines::coproc::sweep`), of simple sampling
//! (`coprof_engines::coproc::simple_sweep`) or of the DCPI hotlists
//! (`coprof_engines::hotlist::sweep`) over one pass of the input, as a
//! table of every configuration scored against the exact profile, and the
//! cheapest within the error asked for.

use super::values::{check_coproc_options, coproc_config, only, Args};
use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{count, pct, thousands};
use coprof_core::metrics::invariance::Criteria;
use coprof_core::Sink;
use coprof_engines::coproc::simple_sweep as ss;
use coprof_engines::coproc::sweep as cs;
use coprof_engines::hotlist::sweep as hs;
use coprof_engines::hotlist::{HotlistConfig, Variant};
use coprof_engines::value_sweep::{ScoredPoint, ValueSweepResult};
use std::path::PathBuf;

/// The sweep of `a`'s options as a [`Job`].
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    if !(a.max_error >= 0.0 && a.max_error <= 1.0) {
        return Err(bad_input(format!(
            "--max-error must be an error from 0 to 1, got {}",
            a.max_error
        )));
    }
    let lists = [
        (a.sweep_slots.is_some(), "--sweep-slots", "coproc"),
        (
            a.sweep_service_rate.is_some(),
            "--sweep-service-rate",
            "coproc",
        ),
        (a.sweep_buffer.is_some(), "--sweep-buffer", "coproc"),
        (
            a.sweep_hotlist_size.is_some(),
            "--sweep-hotlist-size",
            "hotlist",
        ),
        (a.sweep_variant.is_some(), "--sweep-variant", "hotlist"),
        (
            a.sweep_values_per_pc.is_some(),
            "--sweep-values-per-pc",
            "simple",
        ),
    ];
    for (set, opt, algo) in lists {
        only(a, set, opt, algo)?;
    }
    if a.sweep_period.is_some() && a.algo == "coproc" {
        return Err(bad_input(
            "--sweep-period applies to --algo simple or hotlist: the co-processor sees every load",
        ));
    }
    check_coproc_options(a)?;
    let sweep = match a.algo.as_str() {
        "coproc" => Sweep::Coproc(coproc(a)?),
        "simple" => Sweep::Simple(simple(a)?),
        _ => Sweep::Hotlist(hotlist(a)?),
    };
    a.svg.check()?;
    Ok(Box::new(SweepJob {
        sweep,
        max_error: a.max_error,
        file: a.input.file.clone(),
        svg: a.svg.clone(),
    }))
}

fn coproc(a: &Args) -> anyhow::Result<cs::CoprocSweep> {
    let space = cs::CoprocSpace {
        slots: a.sweep_slots.clone().unwrap_or(cs::DEFAULT_SLOTS.to_vec()),
        service_rates: a
            .sweep_service_rate
            .clone()
            .unwrap_or(cs::DEFAULT_SERVICE_RATES.to_vec()),
        buffers: a
            .sweep_buffer
            .clone()
            .unwrap_or(cs::DEFAULT_BUFFERS.to_vec()),
    };
    let (host, lvp) = coproc_config(a)?;
    cs::CoprocSweep::new(&space, &host, &lvp).map_err(|e| bad_input(format!("--sweep: {e}")))
}

/// The periods of `--sweep-period`, or `default`, each at least 1.
fn periods(a: &Args, default: &[u64]) -> anyhow::Result<Vec<u64>> {
    let periods = a.sweep_period.clone().unwrap_or(default.to_vec());
    if periods.contains(&0) {
        return Err(bad_input(
            "--sweep-period: a period must be at least 1 load, got 0",
        ));
    }
    Ok(periods)
}

fn simple(a: &Args) -> anyhow::Result<ss::SimpleSweep> {
    let space = ss::SimpleSpace {
        periods: periods(a, &ss::DEFAULT_PERIODS)?,
        values_per_pc: a
            .sweep_values_per_pc
            .clone()
            .unwrap_or(ss::DEFAULT_VALUES_PER_PC.to_vec()),
    };
    ss::SimpleSweep::new(&space).map_err(|e| bad_input(format!("--sweep: {e}")))
}

fn hotlist(a: &Args) -> anyhow::Result<hs::HotlistSweep> {
    let variants = match &a.sweep_variant {
        Some(names) => names
            .iter()
            .map(|n| n.parse::<Variant>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad_input(format!("--sweep-variant: {e}")))?,
        None => hs::DEFAULT_VARIANTS.to_vec(),
    };
    let space = hs::HotlistSpace {
        sizes: a
            .sweep_hotlist_size
            .clone()
            .unwrap_or(hs::DEFAULT_SIZES.to_vec()),
        periods: periods(a, &hs::DEFAULT_PERIODS)?,
        variants,
    };
    let base = HotlistConfig {
        seed: a.seed,
        ..HotlistConfig::default()
    };
    hs::HotlistSweep::new(&space, &base).map_err(|e| bad_input(format!("--sweep: {e}")))
}

/// The sweep of one algorithm.
enum Sweep {
    Coproc(cs::CoprocSweep),
    Simple(ss::SimpleSweep),
    Hotlist(hs::HotlistSweep),
}

/// Every configuration of the grid and the exact profile, fed together.
struct SweepJob {
    sweep: Sweep,
    max_error: f64,
    /// The trace read, if the input is one.
    file: Option<PathBuf>,
    svg: crate::output::SvgArgs,
}

impl Job for SweepJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        match &mut self.sweep {
            Sweep::Coproc(s) => s,
            Sweep::Simple(s) => s,
            Sweep::Hotlist(s) => s,
        }
    }

    /// Each configuration apart, so that `coprof values --sweep` feeds
    /// them on as many threads as it has.
    fn sinks(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        match &mut self.sweep {
            Sweep::Coproc(s) => s.parts(),
            Sweep::Simple(s) => s.parts(),
            Sweep::Hotlist(s) => s.parts(),
        }
    }

    fn finish(self: Box<Self>, _info: &InputInfo) -> anyhow::Result<Rendered> {
        let criteria = Criteria::default();
        let mut text = String::new();
        let svg = &self.svg;
        let (mut json, algo) = match &self.sweep {
            Sweep::Coproc(s) => {
                let r = s.result(criteria, self.max_error);
                print_coproc(&mut text, &r);
                let mut json = serde_json::to_value(&r)?;
                let cost = |p: &cs::SweepResultPoint| p.hardware_bytes as f64;
                let plot = || plot("co-processor", &r, "hardware bytes", cost, coproc_options);
                svg.draw(plot, &mut text, &mut json)?;
                (json, "coproc")
            }
            Sweep::Simple(s) => {
                let r = s.result(criteria, self.max_error);
                print_simple(&mut text, &r);
                let mut json = serde_json::to_value(&r)?;
                let cost = |p: &ss::SweepResultPoint| p.samples as f64;
                let plot = || plot("simple sampling", &r, "samples", cost, simple_options);
                svg.draw(plot, &mut text, &mut json)?;
                (json, "simple")
            }
            Sweep::Hotlist(s) => {
                let r = s.result(criteria, self.max_error);
                print_hotlist(&mut text, &r);
                let mut json = serde_json::to_value(&r)?;
                let cost = |p: &hs::SweepResultPoint| p.bytes as f64;
                let plot = || plot("DCPI hotlists", &r, "bytes", cost, hotlist_options);
                svg.draw(plot, &mut text, &mut json)?;
                (json, "hotlist")
            }
        };
        json["algo"] = serde_json::json!(algo);
        json["file"] = serde_json::json!(self.file);
        Ok(Rendered { json, text })
    }
}

/// A value sweep's picture: each configuration by `cost` (the first of
/// what the sweep orders by, named `cost_name`) and its error, the front
/// named by the options that build each alone (`options`, without
/// `--algo`).
fn plot<T: ScoredPoint>(
    what: &str,
    r: &ValueSweepResult<T>,
    cost_name: &str,
    cost: impl Fn(&T) -> f64,
    options: impl Fn(&T) -> String,
) -> coprof_report::SweepPlot {
    let label = |p: &T| {
        let o = options(p);
        match o.strip_prefix("--algo ") {
            Some(rest) => rest
                .split_once(' ')
                .map_or(o.clone(), |(_, r)| r.to_string()),
            None => o,
        }
    };
    coprof_report::SweepPlot {
        title: format!(
            "Value profiling, {what}: {} over {} loads",
            count(r.points.len(), "configuration"),
            thousands(r.loads)
        ),
        cost: cost_name.into(),
        error: "weighted RMS invariance error".into(),
        points: r.points.iter().map(|p| (cost(p), p.error())).collect(),
        front: r.front.clone(),
        labels: r.front.iter().map(|&i| label(&r.points[i])).collect(),
        max_error: Some(r.max_error),
    }
}

/// The lines above every sweep's table: what was swept and how it is
/// scored, and what its cost column counts.
fn print_head<T>(out: &mut String, what: &str, r: &ValueSweepResult<T>, cost: &str) {
    let criteria = Criteria::default();
    crate::outln!(
        out,
        "{what} design-space sweep: {} loads at {} PCs, {}",
        thousands(r.loads),
        thousands(r.load_pcs as u64),
        count(r.points.len(), "configuration")
    );
    crate::outln!(
        out,
        "each scored against the exact profile: weighted RMS invariance error over {} (PC, value) \
         pairs with >= {} executions and >= {} invariance",
        r.scored_pairs,
        criteria.min_executions,
        pct(criteria.min_invariance)
    );
    crate::outln!(out, "{cost}");
    crate::outln!(out);
}

/// The lines below every sweep's table: the cheapest configuration
/// within the error, by the options that build it alone and its cost
/// (`describe` gives both), or why there is none; then the front of the
/// configurations no other beats on both cost and error.
fn print_cheapest<T: ScoredPoint>(
    out: &mut String,
    r: &ValueSweepResult<T>,
    describe: impl Fn(&T) -> (String, String),
) {
    crate::outln!(out);
    if r.scored_pairs == 0 {
        crate::outln!(
            out,
            "no (PC, value) pair qualifies, so the error is not defined and no configuration is named"
        );
        return;
    }
    match &r.cheapest {
        Some(p) => {
            let (options, cost) = describe(p);
            crate::outln!(
                out,
                "cheapest configuration within error {}: {options}, {cost}, error {}",
                pct(r.max_error),
                pct(p.error())
            )
        }
        None => {
            let best = r
                .points
                .iter()
                .min_by(|a, b| a.error().total_cmp(&b.error()));
            if let Some(b) = best {
                crate::outln!(
                    out,
                    "no configuration is within error {} (least: {}, {})",
                    pct(r.max_error),
                    pct(b.error()),
                    describe(b).0
                );
            }
        }
    }
    let heading = "the front, where no other configuration is both as cheap and as accurate, \
                   cheapest first:";
    crate::output::print_front(out, heading, &r.front, |i| {
        let p = &r.points[i];
        let (options, cost) = describe(p);
        format!("  {options}, {cost}, error {}", pct(p.error()))
    });
}

fn print_coproc(out: &mut String, r: &cs::SweepResult) {
    print_head(
        out,
        "co-processor",
        r,
        "hardware: the slots, the sample buffer, the PC mask table and the partition filter",
    );
    crate::outln!(
        out,
        "{:>6} {:>7} {:>7} {:>9} {:>10} {:>12} {:>10} {:>8} {:>6} {:>8} {:>10}",
        "slots",
        "service",
        "buffer",
        "hardware",
        "interrupts",
        "transferred",
        "dropped",
        "complete",
        "loads",
        "error",
        "unreported"
    );
    for p in &r.points {
        crate::outln!(
            out,
            "{:>6} {:>7} {:>7} {:>9} {:>10} {:>12} {:>10} {:>8} {:>6} {:>8} {:>10}",
            p.config.slots,
            p.config.service_rate,
            p.config.buffer_bytes,
            thousands(p.hardware_bytes as u64),
            thousands(p.interrupts),
            thousands(p.samples_transferred),
            thousands(p.samples_dropped),
            if p.complete { "yes" } else { "no" },
            p.loads_reported,
            pct(p.weighted_rms_error),
            p.unreported_pairs
        );
    }
    print_cheapest(out, r, |p| {
        (
            coproc_options(p),
            format!("{} bytes", thousands(p.hardware_bytes as u64)),
        )
    });
}

/// A configuration as the options that build it alone.
fn coproc_options(p: &cs::SweepResultPoint) -> String {
    format!(
        "--slots {} --service-rate {} --buffer-bytes {}",
        p.config.slots, p.config.service_rate, p.config.buffer_bytes
    )
}

fn print_simple(out: &mut String, r: &ss::SweepResult) {
    print_head(
        out,
        "simple sampling",
        r,
        "samples: one interrupt each; bytes: what the per-PC tables hold at the end",
    );
    crate::outln!(
        out,
        "{:>7} {:>6} {:>12} {:>10} {:>6} {:>8} {:>10}",
        "period",
        "values",
        "samples",
        "bytes",
        "loads",
        "error",
        "unreported"
    );
    for p in &r.points {
        crate::outln!(
            out,
            "{:>7} {:>6} {:>12} {:>10} {:>6} {:>8} {:>10}",
            p.config.period,
            p.config.values_per_pc,
            thousands(p.samples),
            thousands(p.bytes as u64),
            p.loads_reported,
            pct(p.weighted_rms_error),
            p.unreported_pairs
        );
    }
    print_cheapest(out, r, |p| {
        let options = simple_options(p);
        let cost = format!(
            "{} samples, {} bytes",
            thousands(p.samples),
            thousands(p.bytes as u64)
        );
        (options, cost)
    });
}

fn print_hotlist(out: &mut String, r: &hs::SweepResult) {
    print_head(
        out,
        "hotlist",
        r,
        "bytes: what the hotlists hold at the end; samples: loads offered to them (DCPI's interrupts)",
    );
    crate::outln!(
        out,
        "{:>5} {:>7} {:>9} {:>10} {:>12} {:>6} {:>8} {:>10}",
        "size",
        "period",
        "variant",
        "bytes",
        "samples",
        "loads",
        "error",
        "unreported"
    );
    for p in &r.points {
        crate::outln!(
            out,
            "{:>5} {:>7} {:>9} {:>10} {:>12} {:>6} {:>8} {:>10}",
            p.config.size,
            p.config.period,
            p.config.variant.name(),
            thousands(p.bytes as u64),
            thousands(p.samples),
            p.loads_reported,
            pct(p.weighted_rms_error),
            p.unreported_pairs
        );
    }
    print_cheapest(out, r, |p| {
        let options = hotlist_options(p);
        (options, format!("{} bytes", thousands(p.bytes as u64)))
    });
}

/// A simple sampler as the options that build it alone.
fn simple_options(p: &ss::SweepResultPoint) -> String {
    format!(
        "--algo simple --period {} --values-per-pc {}",
        p.config.period, p.config.values_per_pc
    )
}

/// A hotlist as the options that build it alone.
fn hotlist_options(p: &hs::SweepResultPoint) -> String {
    format!(
        "--algo hotlist --hotlist-size {} --period {} --variant {}",
        p.config.size,
        p.config.period,
        p.config.variant.name()
    )
}

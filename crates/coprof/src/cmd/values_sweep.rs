//! `coprof values --sweep`: the profiling co-processor's design space over
//! one pass of the input (`coprof_engines::coproc::sweep`), as a table of
//! every configuration scored against the exact profile, and the cheapest
//! within the error asked for.

use super::values::{coproc_config, Args};
use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{count, pct, thousands};
use coprof_core::metrics::invariance::Criteria;
use coprof_core::Sink;
use coprof_engines::coproc::sweep::{CoprocSpace, CoprocSweep, SweepResult, SweepResultPoint};
use std::path::PathBuf;

/// The sweep of `a`'s options as a [`Job`].
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    if a.algo != "coproc" {
        return Err(bad_input(format!(
            "--sweep explores the co-processor's hardware: it needs --algo coproc, not --algo {}",
            a.algo
        )));
    }
    if !(a.max_error >= 0.0 && a.max_error <= 1.0) {
        return Err(bad_input(format!(
            "--max-error must be an error from 0 to 1, got {}",
            a.max_error
        )));
    }
    let space = CoprocSpace {
        slots: a.sweep_slots.clone(),
        service_rates: a.sweep_service_rate.clone(),
        buffers: a.sweep_buffer.clone(),
    };
    let (host, lvp) = coproc_config(a)?;
    let sweep =
        CoprocSweep::new(&space, &host, &lvp).map_err(|e| bad_input(format!("--sweep: {e}")))?;
    Ok(Box::new(SweepJob {
        sweep,
        max_error: a.max_error,
        file: a.input.file.clone(),
    }))
}

/// Every configuration of the grid and the exact profile, fed together.
struct SweepJob {
    sweep: CoprocSweep,
    max_error: f64,
    /// The trace read, if the input is one.
    file: Option<PathBuf>,
}

impl Job for SweepJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.sweep
    }

    /// Each configuration apart, so that `coprof values --sweep` feeds
    /// them on as many threads as it has.
    fn sinks(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        self.sweep.parts()
    }

    fn finish(self: Box<Self>, _info: &InputInfo) -> anyhow::Result<Rendered> {
        let result = self.sweep.result(Criteria::default(), self.max_error);
        let mut json = serde_json::to_value(&result)?;
        json["file"] = serde_json::json!(self.file);
        let mut text = String::new();
        print_text(&mut text, &result);
        Ok(Rendered { json, text })
    }
}

fn print_text(out: &mut String, r: &SweepResult) {
    let criteria = Criteria::default();
    crate::outln!(
        out,
        "co-processor design-space sweep: {} loads at {} PCs, {}",
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
    crate::outln!(
        out,
        "hardware: the slots, the sample buffer, the PC mask table and the partition filter"
    );
    crate::outln!(out);
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
    crate::outln!(out);
    if r.scored_pairs == 0 {
        crate::outln!(
            out,
            "no (PC, value) pair qualifies, so the error is not defined and no configuration is named"
        );
        return;
    }
    match &r.cheapest {
        Some(p) => crate::outln!(
            out,
            "cheapest configuration within error {}: {}, {} bytes, error {}",
            pct(r.max_error),
            describe(p),
            thousands(p.hardware_bytes as u64),
            pct(p.weighted_rms_error)
        ),
        None => {
            let best = r
                .points
                .iter()
                .min_by(|a, b| a.weighted_rms_error.total_cmp(&b.weighted_rms_error));
            if let Some(b) = best {
                crate::outln!(
                    out,
                    "no configuration is within error {} (least: {}, {})",
                    pct(r.max_error),
                    pct(b.weighted_rms_error),
                    describe(b)
                );
            }
        }
    }
}

/// A configuration as the options that build it alone.
fn describe(p: &SweepResultPoint) -> String {
    format!(
        "--slots {} --service-rate {} --buffer-bytes {}",
        p.config.slots, p.config.service_rate, p.config.buffer_bytes
    )
}

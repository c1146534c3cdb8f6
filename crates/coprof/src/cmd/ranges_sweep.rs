//! `coprof ranges --sweep`: RAP's design space over one pass of the input
//! (`coprof_engines::rap::sweep`), as a table of every configuration
//! beside the exact profile, and the smallest that reaches the accuracy
//! asked for.

use super::ranges::Args;
use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{count, pct, thousands};
use coprof_core::Sink;
use coprof_engines::rap::sweep::{RapSweep, SweepPoint, SweepResult, SweepSpace, NODE_BYTES};
use coprof_engines::rap::RapConfig;
use coprof_report::SweepPlot;
use std::path::PathBuf;

/// The sweep of `args`'s options as a [`Job`].
pub fn prepare(args: &Args) -> anyhow::Result<Box<dyn Job>> {
    if !(0.0..=1.0).contains(&args.target) {
        return Err(bad_input(format!(
            "--target must be an accuracy from 0 to 1, got {}",
            args.target
        )));
    }
    let space = SweepSpace {
        epsilons: args.sweep_epsilon.clone(),
        branchings: args.sweep_branching.clone(),
        buffers: args.sweep_buffer.clone(),
    };
    let base = RapConfig {
        bits: args.bits,
        merge_factor: args.merge_factor,
        ..RapConfig::default()
    };
    let sweep = RapSweep::new(args.stream, &space, &base)
        .map_err(|e| bad_input(format!("--sweep: {e}")))?;
    args.svg.check()?;
    Ok(Box::new(SweepJob {
        sweep,
        hot: args.hot,
        target: args.target,
        file: args.input.file.clone(),
        svg: args.svg.clone(),
    }))
}

/// Every configuration of the grid and the exact profile, fed together.
struct SweepJob {
    sweep: RapSweep,
    hot: f64,
    target: f64,
    /// The trace read, if the input is one.
    file: Option<PathBuf>,
    svg: crate::output::SvgArgs,
}

impl Job for SweepJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.sweep
    }

    /// Each configuration apart, so that `coprof ranges --sweep` feeds
    /// them on as many threads as it has.
    fn sinks(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        self.sweep.parts()
    }

    fn finish(mut self: Box<Self>, _info: &InputInfo) -> anyhow::Result<Rendered> {
        let result = self.sweep.result(self.hot, self.target);
        let mut json = serde_json::to_value(&result)?;
        json["file"] = serde_json::json!(self.file);
        json["node_bytes"] = serde_json::json!(NODE_BYTES);
        let mut text = String::new();
        print_text(&mut text, &result);
        let plot = || SweepPlot {
            title: format!(
                "RAP over {}: {} configurations, n = {} events",
                result.stream.name(),
                result.points.len(),
                thousands(result.n)
            ),
            cost: "memory, bytes".into(),
            error: "1 - accuracy (average error of the hot ranges)".into(),
            points: result
                .points
                .iter()
                .map(|p| (p.memory_bytes as f64, 1.0 - p.accuracy))
                .collect(),
            front: result.front.clone(),
            labels: result
                .front
                .iter()
                .map(|&i| describe(&result.points[i]))
                .collect(),
            max_error: Some(1.0 - result.target),
        };
        self.svg.draw(plot, &mut text, &mut json)?;
        Ok(Rendered { json, text })
    }
}

fn print_text(out: &mut String, r: &SweepResult) {
    crate::outln!(
        out,
        "RAP design-space sweep over {}: n = {} events, {} distinct points, {}",
        r.stream.name(),
        thousands(r.n),
        thousands(r.distinct as u64),
        count(r.points.len(), "configuration")
    );
    crate::outln!(
        out,
        "each checked against the exact profile; hot ranges take at least {} of the events",
        pct(r.hot)
    );
    crate::outln!(
        out,
        "combined: events the merging buffer combined, which never reach the tree; memory: \
         {NODE_BYTES} bytes per node at the most live nodes, plus the buffer"
    );
    crate::outln!(out);
    crate::outln!(
        out,
        "{:>8} {:>9} {:>7} {:>9} {:>10} {:>10} {:>11} {:>4} {:>9} {:>9} {:>9}",
        "epsilon",
        "branching",
        "buffer",
        "combined",
        "nodes max",
        "nodes avg",
        "memory",
        "hot",
        "avg err",
        "max err",
        "worst/εn"
    );
    for p in &r.points {
        crate::outln!(
            out,
            "{:>8} {:>9} {:>7} {:>9} {:>10} {:>10} {:>11} {:>4} {:>8.3}% {:>8.3}% {:>9.3}",
            p.epsilon,
            p.branching,
            p.buffer_bytes,
            pct(if r.n == 0 {
                0.0
            } else {
                p.buffer_hits as f64 / r.n as f64
            }),
            thousands(p.nodes_max as u64),
            thousands(p.nodes_avg.round() as u64),
            thousands(p.memory_bytes as u64),
            p.hot_ranges,
            p.avg_error_pct,
            p.max_error_pct,
            p.worst_over_bound
        );
    }
    crate::outln!(out);
    match &r.smallest {
        Some(p) => crate::outln!(
            out,
            "smallest configuration reaching accuracy {}: {}, {} bytes, accuracy {:.4}",
            r.target,
            describe(p),
            thousands(p.memory_bytes as u64),
            p.accuracy
        ),
        None => crate::outln!(
            out,
            "no configuration reaches accuracy {} (best {:.4})",
            r.target,
            r.points.iter().map(|p| p.accuracy).fold(0.0, f64::max)
        ),
    }
    crate::output::print_front(out, crate::output::FRONT_OF_SIZES, &r.front, |i| {
        let p = &r.points[i];
        format!(
            "  {}, {} bytes, accuracy {:.4}",
            describe(p),
            thousands(p.memory_bytes as u64),
            p.accuracy
        )
    });
}

/// A configuration as the options that build it alone.
fn describe(p: &SweepPoint) -> String {
    let buffer = if p.buffer_bytes == 0 {
        "--no-buffer".to_string()
    } else {
        format!("--buffer-bytes {}", p.buffer_bytes)
    };
    format!(
        "--epsilon {} --branching {} {buffer}",
        p.epsilon, p.branching
    )
}

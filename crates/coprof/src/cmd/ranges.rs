//! `coprof ranges`: range-adaptive profiling (Mysore et al., TACO 2008) of a
//! trace: the hot ranges of code, values or addresses, in one or more
//! dimensions, optionally checked against the exact profile.

use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered, WithExact};
use crate::output::{pct, thousands};
use coprof_core::Sink;
use coprof_engines::rap::block_buffer::BLOCK_ENTRY_BYTES;
use coprof_engines::rap::{
    check, check_hot, format_range, BlockBuffer, ExactPoints, HotRange, RangeProfiler, Rap,
    RapConfig, RapSnapshot, Stream, DEFAULT_HOT,
};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Find the hot ranges of code, values or addresses with range-adaptive
/// profiling (RAP).
///
/// RAP counts events in a tree of ranges of the whole 2^64 universe that
/// splits where events concentrate and merges where they do not. Every
/// range's count is a lower bound of the truth, short by at most ε·n, while
/// the tree stays small. A range is hot when it takes at least --hot of the
/// events by itself (its own count plus its non-hot subranges).
///
/// Streams: pc (every instruction's PC), load-value, load-addr, store-addr,
/// zero-load-addr (addresses of loads that returned 0), narrow-pc (PCs of
/// instructions whose result fits in 16 bits).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof gen --workload zipf -o zipf.cpt && coprof ranges zipf.cpt --stream load-value
  coprof ranges loops.cpt --stream pc --epsilon 0.001 --hot 0.05
  coprof ranges mixed.cpt --dims pc,load-addr --branching 16
  coprof ranges zipf.cpt --stream load-addr --exact --json
  coprof ranges run.cpt --dump tree.txt
  coprof ranges --sweep --stream pc --sweep-epsilon 0.1,0.01 -- ./prog")]
pub struct Args {
    #[command(flatten)]
    pub(crate) input: crate::input::InputArgs,
    /// Which profile to build: pc, load-value, load-addr, store-addr, zero-load-addr or narrow-pc.
    #[arg(long, default_value = "pc", value_parser = parse_stream, conflicts_with = "dims")]
    pub(crate) stream: Stream,
    /// Profile points of several dimensions at once (multi-dimensional RAP), one stream per
    /// dimension, comma-separated: e.g. pc,load-addr for code × data address.
    #[arg(long, value_delimiter = ',', value_parser = parse_stream)]
    dims: Option<Vec<Stream>>,
    /// Error bound ε, in (0, 1): every range's count is within ε·n of the truth.
    #[arg(long, default_value_t = coprof_engines::rap::config::DEFAULT_EPSILON)]
    epsilon: f64,
    /// Branching factor b: children per split, a power of two (for n dimensions a power of 2^n;
    /// each dimension is divided by b^(1/n)).
    #[arg(long, default_value_t = coprof_engines::rap::config::DEFAULT_BRANCHING)]
    branching: u32,
    /// Bits of the universe per dimension (64, or 32 for a 32-bit program); points beyond it are
    /// counted apart.
    #[arg(long, default_value_t = coprof_engines::rap::config::DEFAULT_BITS)]
    pub(crate) bits: u32,
    /// Share of the events, in (0, 1], that makes a range hot.
    #[arg(long, default_value_t = DEFAULT_HOT)]
    pub(crate) hot: f64,
    /// Growth factor q of the period between merge batches (> 1).
    #[arg(long, default_value_t = coprof_engines::rap::config::DEFAULT_MERGE_FACTOR)]
    pub(crate) merge_factor: f64,
    /// Send every event straight to the tree, without the merging event buffer.
    #[arg(long)]
    no_buffer: bool,
    /// Capacity of the merging event buffer in bytes.
    #[arg(long, default_value_t = coprof_engines::rap::config::DEFAULT_BUFFER_BYTES)]
    buffer_bytes: usize,
    /// Not in the paper: combine repeated executions of a basic block in a buffer of this many
    /// bytes (16 per entry) before their PCs reach the merging buffer and the tree. For the code
    /// profile (--stream pc) of a live program, whose simulator delivers blocks; much faster on
    /// real programs, within the same ε·n bound (see --exact).
    #[arg(long, value_name = "BYTES")]
    block_buffer: Option<usize>,
    /// Also count the stream exactly (one pass, unbounded memory) and report each hot range's
    /// exact count and error, and the largest error over all ranges.
    #[arg(long)]
    exact: bool,
    /// Write the whole tree as text to this file.
    #[arg(long, value_name = "FILE", value_parser = crate::output::output_file())]
    dump: Option<PathBuf>,
    /// Explore the design space instead of building one profile: run every combination of
    /// --sweep-epsilon, --sweep-branching and --sweep-buffer over the same stream, each checked
    /// against the exact profile, and name the smallest that reaches --target accuracy.
    #[arg(long, conflicts_with_all = ["dims", "epsilon", "branching", "no_buffer", "buffer_bytes", "block_buffer", "exact", "dump"])]
    pub(crate) sweep: bool,
    /// With --sweep: the error bounds ε to try, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep",
          default_values_t = coprof_engines::rap::sweep::DEFAULT_EPSILONS)]
    pub(crate) sweep_epsilon: Vec<f64>,
    /// With --sweep: the branching factors to try, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep",
          default_values_t = coprof_engines::rap::sweep::DEFAULT_BRANCHINGS)]
    pub(crate) sweep_branching: Vec<u32>,
    /// With --sweep: the merging buffer sizes to try in bytes, comma-separated (0: no buffer).
    #[arg(long, value_delimiter = ',', value_name = "LIST", requires = "sweep",
          default_values_t = coprof_engines::rap::sweep::DEFAULT_BUFFERS)]
    pub(crate) sweep_buffer: Vec<usize>,
    /// With --sweep: the accuracy (1 - the average error of the hot ranges) the smallest
    /// reported configuration must reach.
    #[arg(long, requires = "sweep", default_value_t = 0.98)]
    pub(crate) target: f64,
    #[command(flatten)]
    pub(crate) svg: crate::output::SvgArgs,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_stream(s: &str) -> Result<Stream, String> {
    s.parse()
}

/// Why the narrow-PC stream is not found in samples of a native process.
pub const NARROW_PC_NEEDS: &str =
    "the narrow-PC stream needs the value every instruction produces, which samples do not carry";

/// Why ranges of other streams than the PC's are not found in samples
/// that are PCs alone.
pub const LOADS_NEEDED: &str =
    "ranges of a stream other than pc need each sampled load or store with its address or value";

impl Args {
    /// The streams profiled: `--dims`, else `--stream`.
    fn streams(&self) -> Vec<Stream> {
        self.dims.clone().unwrap_or_else(|| vec![self.stream])
    }
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    let json = args.json;
    if args.streams().contains(&Stream::NarrowPc) {
        args.input.refuse_samples(NARROW_PC_NEEDS)?;
    }
    if args.streams().iter().any(|s| *s != Stream::Pc) {
        args.input.refuse_pcs_only(LOADS_NEEDED)?;
    }
    args.input.setup.native = native_sampling(&args);
    crate::job::run_one(&args.input, json, prepare(&args)?)
}

/// Whether a native x86-64 program may be sampled for these streams,
/// and whether each sample is then taken at its next load: for streams
/// of loads only. The narrow-PC stream needs the values every
/// instruction produces, which samples do not carry.
fn native_sampling(args: &Args) -> Option<bool> {
    let dims = args.streams();
    if dims.contains(&Stream::NarrowPc) {
        return None;
    }
    let loads = [Stream::LoadValue, Stream::LoadAddr, Stream::ZeroLoadAddr];
    Some(dims.iter().all(|d| loads.contains(d)))
}

/// The range report of `args`'s options as a [`Job`].
pub fn prepare(args: &Args) -> anyhow::Result<Box<dyn Job>> {
    if !(args.hot > 0.0 && args.hot <= 1.0) {
        return Err(bad_input(format!(
            "--hot must be a share of the events in (0, 1], got {}",
            args.hot
        )));
    }
    if args.sweep {
        return super::ranges_sweep::prepare(args);
    }
    let dims = args.streams();
    if let Some(bytes) = args.block_buffer {
        if dims != [Stream::Pc] {
            return Err(bad_input(format!(
                "--block-buffer combines basic blocks of the code profile: it needs --stream pc, not {}",
                names(&dims)
            )));
        }
        if bytes < BLOCK_ENTRY_BYTES {
            return Err(bad_input(format!(
                "--block-buffer {bytes}: the buffer needs at least one entry of {BLOCK_ENTRY_BYTES} bytes"
            )));
        }
    }
    match dims.len() {
        1 => Ok(Box::new(RangesJob::new(args, [dims[0]])?)),
        2 => Ok(Box::new(RangesJob::new(args, [dims[0], dims[1]])?)),
        3 => Ok(Box::new(RangesJob::new(args, [dims[0], dims[1], dims[2]])?)),
        n => Err(bad_input(format!(
            "--dims takes 1 to 3 streams, got {n} ({})",
            names(&dims)
        ))),
    }
}

fn names(dims: &[Stream]) -> String {
    dims.iter().map(|d| d.name()).collect::<Vec<_>>().join(",")
}

/// The exact side of the report.
#[derive(Serialize)]
struct ExactSummary {
    max_abs_error_over_n: f64,
    max_abs_error: u64,
    max_error_pct: f64,
    avg_error_pct: f64,
    exact_distinct: usize,
    exact_bytes: usize,
}

/// RAP over `D` streams, and the exact points with `--exact`.
struct RangesJob<const D: usize> {
    dims: [Stream; D],
    sink: WithExact<RangeProfiler<D>, ExactPoints<D>>,
    hot: f64,
    dump: Option<PathBuf>,
    file: Option<PathBuf>,
}

impl<const D: usize> RangesJob<D> {
    fn new(args: &Args, dims: [Stream; D]) -> anyhow::Result<RangesJob<D>> {
        let config = RapConfig {
            epsilon: args.epsilon,
            branching: args.branching,
            bits: args.bits,
            merge_factor: args.merge_factor,
            buffer_bytes: (!args.no_buffer).then_some(args.buffer_bytes),
        };
        let rap: Rap<D> = Rap::new(config).map_err(|e| bad_input(e.to_string()))?;
        let mut profiler = RangeProfiler::new(rap, dims);
        if let Some(bytes) = args.block_buffer {
            profiler = profiler.with_block_buffer(bytes);
        }
        Ok(RangesJob {
            dims,
            sink: WithExact {
                engine: profiler,
                exact: args.exact.then(|| ExactPoints::new(dims)),
            },
            hot: args.hot,
            dump: args.dump.clone(),
            file: args.input.file.clone(),
        })
    }
}

impl<const D: usize> Job for RangesJob<D> {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.sink
    }

    fn finish(mut self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        let snap = self.sink.engine.snapshot();
        if let Some(path) = &self.dump {
            let mut text = Vec::new();
            snap.dump(&mut text)?;
            std::fs::write(path, text).map_err(|e| {
                bad_input(format!(
                    "cannot write the tree dump to {}: {e}",
                    path.display()
                ))
            })?;
        }
        let hot = snap.hot_ranges(self.hot);
        let checked = self.sink.exact.as_ref().map(|x| {
            let c = check(&snap, x);
            let (hot, max_pct, avg_pct) = check_hot(hot.clone(), &c);
            let summary = ExactSummary {
                max_abs_error_over_n: c.max_abs_error_over_n,
                max_abs_error: c.max_abs_error,
                max_error_pct: max_pct,
                avg_error_pct: avg_pct,
                exact_distinct: x.distinct(),
                exact_bytes: x.bytes(),
            };
            (hot, summary)
        });
        let places = places(&self.dims, &hot, info);
        let shown = Shown {
            hot_share: self.hot,
            dims: &self.dims,
            snap: &snap,
            hot: &hot,
            checked: checked.as_ref(),
            wheres: &places.wheres,
            where_key: places.key,
            areas: places.areas.as_deref(),
            blocks: self.sink.engine.block_buffer(),
        };
        let mut text = String::new();
        print_text(&mut text, &shown);
        if let Some(b) = shown.blocks {
            print_block_buffer(&mut text, b);
        }
        let json = report_json(self.file.as_ref(), &shown);
        Ok(Rendered { json, text })
    }
}

/// The block buffer's line: how many block executions it combined, or
/// why it had none (a trace file holds events, not blocks).
fn print_block_buffer(out: &mut String, b: &BlockBuffer) {
    if b.executions == 0 {
        crate::outln!(
            out,
            "block buffer: {} entries, unused: the input gives no basic blocks (only a live run does)",
            b.capacity()
        );
    } else {
        crate::outln!(
            out,
            "block buffer: {} entries, {} of {} block executions combined",
            b.capacity(),
            thousands(b.hits()),
            thousands(b.executions)
        );
    }
}

/// Where each hot range is, when the program's symbols are at hand, and
/// the JSON field that says it: the functions its code dimension covers
/// (`functions`), when a dimension is code (pc, narrow-pc); else the data
/// objects its address dimension covers (`objects`), when one is an
/// address (load-addr, store-addr, zero-load-addr). And for a run whose
/// mappings are known (live, or traced by `coprof run`), the areas the
/// same dimension overlaps (`[heap]`, `[stack]`, `[anon]`, a file), which
/// name in the text a range of addresses no object covers, and a range of
/// code no function symbol covers (a JIT's code in `[anon]`, a stripped
/// file's by the file's name).
fn places(dims: &[Stream], hot: &[HotRange], info: &InputInfo) -> Places {
    let code = dims
        .iter()
        .position(|d| matches!(d, Stream::Pc | Stream::NarrowPc));
    let data = dims.iter().position(|d| {
        matches!(
            d,
            Stream::LoadAddr | Stream::StoreAddr | Stream::ZeroLoadAddr
        )
    });
    let key = if code.is_some() {
        "functions"
    } else {
        "objects"
    };
    let areas: Option<Vec<Vec<String>>> =
        code.or(data)
            .zip(crate::areas::known(info))
            .map(|(d, known)| {
                hot.iter()
                    .map(|h| crate::areas::names_in(known, h.lo[d], h.hi[d]))
                    .collect()
            });
    let wheres = hot
        .iter()
        .map(|h| {
            let sym = info.symbols.as_ref()?;
            match (code, data) {
                (Some(d), _) => sym.code_range(h.lo[d], h.hi[d]),
                (None, Some(d)) => sym.data_range(h.lo[d], h.hi[d]),
                (None, None) => None,
            }
        })
        .collect();
    Places { key, wheres, areas }
}

/// What [`places`] found for the hot ranges, in their order.
struct Places {
    /// The JSON field of `wheres`: `functions` or `objects`.
    key: &'static str,
    /// The functions or data objects each hot range covers, when known.
    wheres: Vec<Option<String>>,
    /// The names of the areas each hot range overlaps in the dimension
    /// `wheres` names, when the run's mappings are known.
    areas: Option<Vec<Vec<String>>>,
}

/// A coordinate list as JSON: a number in one dimension, an array in more.
fn coords(v: &[u64]) -> Value {
    if v.len() == 1 {
        json!(v[0])
    } else {
        json!(v)
    }
}

/// What a range report shows, in both of its forms.
#[derive(Clone, Copy)]
struct Shown<'a> {
    hot_share: f64,
    dims: &'a [Stream],
    snap: &'a RapSnapshot,
    hot: &'a [HotRange],
    checked: Option<&'a (Vec<coprof_engines::rap::CheckedHotRange>, ExactSummary)>,
    /// The functions or data objects each hot range covers, when known.
    wheres: &'a [Option<String>],
    /// The JSON field of `wheres`: `functions` or `objects`.
    where_key: &'static str,
    /// The areas each hot range overlaps in the dimension `wheres`
    /// names, when the run's mappings are known.
    areas: Option<&'a [Vec<String>]>,
    /// The block buffer in front of a code profile, if there is one.
    blocks: Option<&'a BlockBuffer>,
}

fn report_json(file: Option<&PathBuf>, shown: &Shown) -> Value {
    let Shown {
        hot_share,
        dims,
        snap,
        hot,
        checked,
        wheres,
        where_key,
        areas,
        blocks,
    } = *shown;
    let hot_ranges: Vec<Value> = hot
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut o = json!({
                "lo": coords(&h.lo),
                "hi": coords(&h.hi),
                "depth": h.depth,
                "count": h.count,
                "share": h.share,
                "own_count": h.own_count,
                "own_share": h.own_share,
            });
            if let Some(w) = &wheres[i] {
                o[where_key] = json!(w);
            }
            if let Some(a) = areas {
                o["areas"] = json!(a[i]);
            }
            if let Some((c, _)) = checked {
                o["exact"] = json!(c[i].exact);
                o["error_pct"] = json!(c[i].error_pct);
            }
            o
        })
        .collect();
    let mut v = json!({
        "file": file,
        "dims": dims.iter().map(|d| d.name()).collect::<Vec<_>>(),
        "n": snap.n,
        "outside": snap.outside,
        "epsilon": snap.epsilon,
        "branching": snap.branching,
        "bits": snap.bits,
        "levels": snap.levels,
        "merge_factor": snap.merge_factor,
        "hot": hot_share,
        "split_threshold": snap.split_threshold,
        "nodes_max": snap.nodes_max,
        "nodes_final": snap.nodes_final,
        "nodes_avg": snap.nodes_avg,
        "bytes": snap.bytes,
        "splits": snap.splits,
        "merges": snap.merges,
        "merge_batches": snap.merge_batches,
        "buffer": {
            "entries": snap.buffer_entries,
            "hits": snap.buffer_hits,
            "evictions": snap.buffer_evictions,
        },
        "hot_ranges": hot_ranges,
    });
    if let Some((_, s)) = checked {
        let extra = serde_json::to_value(s).expect("plain numbers");
        for (k, x) in extra.as_object().expect("a struct").iter() {
            v[k] = x.clone();
        }
    }
    if let Some(b) = blocks {
        v["block_buffer"] = json!({
            "entries": b.capacity(),
            "bytes": b.bytes(),
            "executions": b.executions,
            "hits": b.hits(),
            "evictions": b.evictions(),
        });
    }
    v
}

fn print_text(out: &mut String, shown: &Shown) {
    let Shown {
        hot_share,
        dims,
        snap,
        hot,
        checked,
        wheres,
        where_key,
        areas,
        ..
    } = *shown;
    crate::outln!(
        out,
        "RAP over {} ({}-D, {}-bit universe): n = {} events, epsilon = {}, branching = {}",
        names(dims),
        dims.len(),
        snap.bits,
        thousands(snap.n),
        snap.epsilon,
        snap.branching
    );
    if snap.outside > 0 {
        crate::outln!(
            out,
            "  {} events fell outside the {}-bit universe and were not counted",
            thousands(snap.outside),
            snap.bits
        );
    }
    crate::outln!(
        out,
        "tree: {} nodes at the end, {} at most, {} on average; {} bytes; split threshold {:.1}",
        thousands(snap.nodes_final as u64),
        thousands(snap.nodes_max as u64),
        thousands(snap.nodes_avg.round() as u64),
        thousands(snap.bytes as u64),
        snap.split_threshold
    );
    if snap.buffer_entries > 0 {
        crate::outln!(
            out,
            "merging buffer: {} entries, {} of {} events combined",
            snap.buffer_entries,
            thousands(snap.buffer_hits),
            thousands(snap.n)
        );
    }
    crate::outln!(out);
    if hot.is_empty() {
        crate::outln!(
            out,
            "no range holds {} of the events by itself",
            pct(hot_share)
        );
        return;
    }
    crate::outln!(
        out,
        "hot ranges (at least {} of the events each):",
        pct(hot_share)
    );
    // Indent each hot range under the hot ranges that contain it.
    let nesting: Vec<usize> = hot
        .iter()
        .enumerate()
        .map(|(i, h)| {
            hot[..i]
                .iter()
                .filter(|o| {
                    o.lo.iter().zip(&h.lo).all(|(a, b)| a <= b)
                        && o.hi.iter().zip(&h.hi).all(|(a, b)| a >= b)
                })
                .count()
        })
        .collect();
    let labels: Vec<String> = hot
        .iter()
        .zip(&nesting)
        .map(|(h, &d)| {
            format!(
                "{:indent$}{}",
                "",
                format_range(&h.lo, &h.hi),
                indent = 2 * d
            )
        })
        .collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut header = format!("  {:width$}  {:>9}  {:>10}", "range", "own", "cumulative");
    if checked.is_some() {
        header.push_str(&format!(
            "  {:>12}  {:>12}  {:>8}",
            "estimate", "exact", "error"
        ));
    }
    crate::outln!(out, "{header}");
    for (i, h) in hot.iter().enumerate() {
        let range = &labels[i];
        let pad = width - range.chars().count();
        let mut line = format!(
            "  {range}{:pad$}  {:>9}  {:>10}",
            "",
            pct(h.own_share),
            pct(h.share)
        );
        if let Some((c, _)) = checked {
            line.push_str(&format!(
                "  {:>12}  {:>12}  {:>7.3}%",
                thousands(h.count),
                thousands(c[i].exact),
                c[i].error_pct
            ));
        }
        let areas = areas.map(|a| &a[i][..]);
        let label = if where_key == "objects" {
            crate::areas::data_label(wheres[i].as_deref(), areas)
        } else {
            wheres[i].clone().or_else(|| crate::areas::label(areas?))
        };
        if let Some(w) = label {
            line.push_str(&format!("  {w}"));
        }
        crate::outln!(out, "{line}");
    }
    if let Some((_, s)) = checked {
        crate::outln!(out);
        crate::outln!(
            out,
            "error over hot ranges: max {:.3}%, average {:.3}%",
            s.max_error_pct,
            s.avg_error_pct
        );
        crate::outln!(
            out,
            "largest error over all {} ranges: {} events = {:.5}·n (bound: epsilon·n = {:.0})",
            thousands(snap.nodes.len() as u64),
            thousands(s.max_abs_error),
            s.max_abs_error_over_n,
            snap.epsilon * snap.n as f64
        );
        crate::outln!(
            out,
            "exact profile: {} distinct points, {} bytes",
            thousands(s.exact_distinct as u64),
            thousands(s.exact_bytes as u64)
        );
    }
}

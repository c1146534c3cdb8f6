//! `coprof loops`: the frequent loop detector of Gordon-Ross & Vahid (CASES
//! 2003) over a trace: the hottest loops, their estimated shares, the
//! hardware's activity, and optionally the exact figures, the paper's
//! accuracy (1 − SOD) and its design-space sweep (Fig. 3).

use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered, WithExact};
use crate::output::{pct, thousands};
use crate::symbols::{Listed, Symbols};
use coprof_core::exact::DEFAULT_SBB_DISTANCE;
use coprof_core::{ExactCounts, Sink};
use coprof_engines::loops::{
    compare, sweep, ComparedLoop, DetectedLoop, HardwareCost, LoopConfig, LoopDetector,
    LoopProfile, SbbStream, SweepResult, SweepSpace,
};
use coprof_report::SweepPlot;
use serde::Serialize;

/// Find the hottest loops with the frequent loop cache.
///
/// A loop is recognised by its taken short backward branch (sbb): a taken
/// branch or jump whose target lies at most --max-distance bytes below it.
/// A small set-associative cache counts sbbs per loop in saturating
/// counters; when one saturates, all are halved; a miss in a full set
/// replaces the least frequent loop. The defaults are the paper's best
/// configuration: 32 entries, 2 ways, 24-bit counters.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  coprof gen --workload loops --events 5000000 -o loops.cpt
  coprof loops loops.cpt
  coprof loops loops.cpt --exact
  coprof loops loops.cpt --entries 16 --ways 1 --width 8 --coalesce --json
  coprof loops loops.cpt --sweep --target 0.95

share is the loop's counter over the sum of all counters (share of loop
iterations); exec share is iterations x body length in instructions over
all retired instructions, body length being (branch PC - target) / 4 + 1
(exact for 4-byte instructions only; --body-length code counts the
instructions in the program's code instead). With --exact, accuracy is 1 - SOD,
SOD = sum over the ten most frequent loops of |exact share - share|^(1/2) / 10.")]
pub struct Args {
    #[command(flatten)]
    input: crate::input::InputArgs,
    /// Entries in the loop cache (a power of two: 16, 32, 64, ...).
    #[arg(long, default_value_t = 32)]
    entries: usize,
    /// Ways per set: 1 (direct mapped), 2, 4, 8, ... or `full` (fully associative).
    #[arg(long, default_value = "2", value_parser = parse_ways)]
    ways: Ways,
    /// Width of each frequency counter in bits (4 to 32).
    #[arg(long, default_value_t = 24)]
    width: u32,
    /// Add up consecutive sbbs of one loop in the coalescing register before
    /// they reach the cache (fewer cache updates, same counts).
    #[arg(long)]
    coalesce: bool,
    /// Tally only every k-th short backward branch.
    #[arg(long, default_value_t = 1)]
    sample_interval: u64,
    /// Largest distance in bytes from a branch back to its target for it to
    /// count as a loop's back edge.
    #[arg(long, default_value_t = DEFAULT_SBB_DISTANCE)]
    max_distance: u64,
    /// How a loop's body length in instructions is found, for its exec
    /// share: `paper`, (branch PC - target) / 4 + 1, what the loop cache
    /// can know from addresses (the paper's instructions are all 4 bytes);
    /// `code`, the instructions counted in the program's code from the
    /// target to the branch, right with RISC-V's 2-byte compressed
    /// instructions too (needs the program's ELF; a loop whose code cannot
    /// be read keeps the paper's length, with a note).
    #[arg(long, value_enum, default_value_t = BodyLength::Paper)]
    body_length: BodyLength,
    /// Number of loops to report.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Also count exactly, and report exact shares and the accuracy (1 - SOD).
    #[arg(long)]
    exact: bool,
    /// Print the bodies of the N most frequent loops as annotated listings:
    /// each instruction under its source line, and with --exact how many
    /// times it ran, as `perf annotate` and DCPI's `dcpilist` show code
    /// (needs the program's ELF).
    #[arg(long, value_name = "N", default_value_t = 0)]
    listing: usize,
    /// Evaluate every configuration of sizes {16,32,64} x ways {1,2,4,8} x
    /// widths {4..31}, with and without coalescing, in one pass.
    #[arg(long, conflicts_with_all = ["entries", "ways", "width", "coalesce", "exact", "top", "body_length", "listing"])]
    sweep: bool,
    /// With --sweep: the accuracy the smallest reported configuration must reach.
    #[arg(long, default_value_t = 0.9, requires = "sweep")]
    target: f64,
    #[command(flatten)]
    svg: crate::output::SvgArgs,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Where a loop's body length in instructions comes from.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BodyLength {
    /// (branch PC − target) / 4 + 1, as the paper's hardware can know it
    /// (Gordon-Ross & Vahid, CASES 2003: 4-byte instructions).
    Paper,
    /// The instructions between the target and the branch, counted in the
    /// program's code.
    Code,
}

/// The associativity as typed: a number of ways, or fully associative.
#[derive(Clone, Copy, Debug)]
enum Ways {
    N(usize),
    Full,
}

fn parse_ways(s: &str) -> Result<Ways, String> {
    if s.eq_ignore_ascii_case("full") {
        return Ok(Ways::Full);
    }
    s.parse::<usize>()
        .map(Ways::N)
        .map_err(|_| format!("expected a number of ways or 'full', got '{s}'"))
}

/// The report's JSON form.
#[derive(Serialize)]
pub struct Report {
    config: LoopConfig,
    /// Whether the input held every retired instruction; when not, the
    /// execution shares are unknown (null).
    every_instruction: bool,
    /// The classes a trace recorded (empty: every class).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    recorded_classes: Vec<String>,
    /// Events delivered to the report (a live run gives the instructions
    /// as runs of blocks, and with --exact the loads and calls as events).
    events: u64,
    /// Instructions the detector counted (every event of a trace of
    /// every class; every retired instruction of a live run).
    instructions: u64,
    sbbs: u64,
    tallied: u64,
    loops: Vec<Row>,
    #[serde(skip_serializing_if = "Option::is_none")]
    accuracy: Option<f64>,
    cache_updates: u64,
    halvings: u64,
    coalesced: u64,
    updates_saved: f64,
    cache_reads: u64,
    cache_writes: u64,
    misses: u64,
    replacements: u64,
    compressed_seen: bool,
    /// Where the body lengths (and so the exec shares) come from.
    body_length: BodyLength,
    /// With `--body-length code`: the loops shown whose length was
    /// counted in the code (the others keep the paper's).
    #[serde(skip_serializing_if = "Option::is_none")]
    bodies_counted: Option<usize>,
    /// Loops asked to be listed (`--listing`), and of those how many
    /// could be.
    #[serde(skip)]
    listings: (usize, usize),
    /// Whether the program's ELF was at hand, for the note when bodies
    /// could not be counted.
    #[serde(skip)]
    has_binary: bool,
    bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_bytes: Option<usize>,
}

/// One loop of the report, with its place in the source when the
/// program's symbols are at hand.
#[derive(Serialize)]
struct Row {
    #[serde(flatten)]
    found: Found,
    /// The function the loop lies in.
    #[serde(skip_serializing_if = "Option::is_none")]
    function: Option<String>,
    /// The loop body as source lines (`crc32.c:20-24`).
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    /// The mapping the loop's branch lies in (`[anon]` for generated
    /// code, else its file's path), when the run's mappings are known:
    /// what names a loop no symbol covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    area: Option<String>,
    /// The body's instructions beside their source lines (`--listing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    listing: Option<Vec<Listed>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Found {
    Estimated(DetectedLoop),
    Compared(ComparedLoop),
}

impl Found {
    fn detected(&self) -> &DetectedLoop {
        match self {
            Found::Estimated(l) => l,
            Found::Compared(c) => &c.detected,
        }
    }

    fn detected_mut(&mut self) -> &mut DetectedLoop {
        match self {
            Found::Estimated(l) => l,
            Found::Compared(c) => &mut c.detected,
        }
    }
}

/// Why loops are not found in samples of a native process.
pub const NEEDS_EVERY_INSTRUCTION: &str = "the loop cache counts every backward branch";

pub fn run(a: Args) -> anyhow::Result<()> {
    a.input.refuse_samples(NEEDS_EVERY_INSTRUCTION)?;
    let config = config(&a)?;
    if a.sweep {
        return run_sweep(&a, &config);
    }
    crate::job::run_one(&a.input, a.json, Box::new(job(&a, config)?))
}

/// The loop cache of `a`'s options, checked.
fn config(a: &Args) -> anyhow::Result<LoopConfig> {
    let config = LoopConfig {
        entries: a.entries,
        ways: match a.ways {
            Ways::N(n) => n,
            Ways::Full => a.entries,
        },
        width: a.width,
        coalesce: a.coalesce,
        sample_interval: a.sample_interval,
        max_distance: a.max_distance,
        ..LoopConfig::default()
    };
    config
        .validate()
        .map_err(|e| bad_input(format!("invalid loop cache: {e}")))?;
    if a.top == 0 {
        return Err(bad_input("--top must be at least 1"));
    }
    Ok(config)
}

/// The loop report of `a`'s options as a [`Job`].
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    let config = config(a)?;
    if a.sweep {
        return Ok(Box::new(sweep_job(a, &config)?));
    }
    Ok(Box::new(job(a, config)?))
}

fn check_target(target: f64) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&target) {
        return Err(bad_input(format!(
            "--target must be an accuracy from 0 to 1, got {target}"
        )));
    }
    Ok(())
}

fn job(a: &Args, config: LoopConfig) -> anyhow::Result<LoopsJob> {
    Ok(LoopsJob {
        sink: WithExact {
            engine: LoopDetector::new(config).map_err(|e| bad_input(e.to_string()))?,
            exact: a
                .exact
                .then(|| ExactCounts::with_sbb_distance(config.max_distance)),
        },
        top: a.top,
        body_length: a.body_length,
        listing: a.listing,
    })
}

/// The frequent loop cache, and the exact counts with `--exact`.
pub struct LoopsJob {
    sink: WithExact<LoopDetector, ExactCounts>,
    top: usize,
    body_length: BodyLength,
    /// Loops to list (`--listing`).
    listing: usize,
}

impl Job for LoopsJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.sink
    }

    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        let profile = self.sink.engine.snapshot();
        // Execution shares divide by the instructions retired, which only a
        // stream of every instruction gives (a trace recorded with
        // `--classes` holds some of them).
        let every_instruction = info.meta.classes.is_empty()
            || info.meta.classes.len() >= coprof_core::Class::ALL.len();
        let (mut found, mut accuracy): (Vec<Found>, Option<f64>) = match &self.sink.exact {
            Some(exact) => {
                let c = compare(&profile, exact, self.top);
                (
                    c.loops.into_iter().map(Found::Compared).collect(),
                    Some(c.accuracy),
                )
            }
            None => (
                profile
                    .loops
                    .iter()
                    .take(self.top)
                    .cloned()
                    .map(Found::Estimated)
                    .collect(),
                None,
            ),
        };
        if profile.sbbs == 0 {
            // Nothing to rank: an accuracy of 1 would only say that nothing
            // was compared with nothing.
            accuracy = None;
        }
        if !every_instruction {
            for row in &mut found {
                match row {
                    Found::Estimated(l) => l.exec_share = f64::NAN,
                    Found::Compared(c) => {
                        c.detected.exec_share = f64::NAN;
                        c.exact_exec_share = f64::NAN;
                    }
                }
            }
        }
        let bodies_counted = (self.body_length == BodyLength::Code)
            .then(|| count_bodies(&mut found, info.symbols.as_ref()));
        let exact = self.sink.exact.as_ref();
        let loops: Vec<Row> = found
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let (lo, hi) = (f.detected().body_lo, f.detected().pc);
                let sym = info.symbols.as_ref();
                Row {
                    function: sym.and_then(|s| s.range_function(lo, hi)),
                    source: sym.and_then(|s| s.span(lo, hi)),
                    area: crate::areas::of(info, hi),
                    listing: (i < self.listing)
                        .then(|| listing(sym?, lo, hi, exact))
                        .flatten(),
                    found: f,
                }
            })
            .collect();
        let asked = self.listing.min(loops.len());
        let listings = (asked, loops.iter().filter(|l| l.listing.is_some()).count());
        let c: HardwareCost = profile.cost;
        let report = Report {
            every_instruction,
            recorded_classes: info.meta.classes.clone(),
            config: *self.sink.engine.config(),
            events: info.events,
            instructions: profile.instructions,
            sbbs: profile.sbbs,
            tallied: profile.tallied,
            loops,
            accuracy,
            cache_updates: c.cache_updates,
            halvings: c.halvings,
            coalesced: c.coalesced,
            updates_saved: c.updates_saved,
            cache_reads: c.cache_reads,
            cache_writes: c.cache_writes,
            misses: c.misses,
            replacements: c.replacements,
            compressed_seen: profile.compressed_seen,
            body_length: self.body_length,
            bodies_counted,
            listings,
            has_binary: info.symbols.is_some(),
            bytes: profile.bytes,
            exact_bytes: self.sink.exact.as_ref().map(|x| x.bytes()),
        };
        let mut text = String::new();
        print_text(&mut text, &report, &profile);
        Ok(Rendered {
            json: serde_json::to_value(&report)?,
            text,
        })
    }
}

/// The annotated listing of a loop body `[lo, hi]`, with each
/// instruction's exact count when counted.
fn listing(
    symbols: &Symbols,
    lo: u64,
    hi: u64,
    exact: Option<&ExactCounts>,
) -> Option<Vec<Listed>> {
    let mut rows = symbols.listing(lo, hi)?;
    if let Some(exact) = exact {
        for r in &mut rows {
            r.count = Some(exact.per_pc.get(&r.pc).copied().unwrap_or(0));
        }
    }
    Some(rows)
}

/// A listing as text: each source line once, above the instructions that
/// came from it, each with its address, assembly and count.
fn print_listing(out: &mut String, rows: &[Listed]) {
    let mut last = None;
    for r in rows {
        let key = (&r.file, r.line, &r.function);
        if last != Some(key) {
            last = Some(key);
            let mut head = match (&r.file, r.line) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                _ => "(no line)".to_string(),
            };
            if let Some(text) = &r.source {
                head = format!("{head}  {text}");
            }
            if let Some(f) = &r.function {
                head = format!("{head}  [{f}]");
            }
            crate::outln!(out, "  {head}");
        }
        match r.count {
            Some(n) => crate::outln!(
                out,
                "    {:>12x}:  {:<32}  {:>14}",
                r.pc,
                r.text,
                thousands(n)
            ),
            None => crate::outln!(out, "    {:>12x}:  {}", r.pc, r.text),
        }
    }
}

/// `--body-length code`: each loop's body length counted in the program's
/// code, its exec share scaled to match (iterations × length over the same
/// instructions); returns how many loops got one. A loop whose code cannot
/// be read keeps the paper's length.
fn count_bodies(found: &mut [Found], symbols: Option<&Symbols>) -> usize {
    let Some(symbols) = symbols else { return 0 };
    let mut counted = 0;
    for f in found {
        let l = f.detected_mut();
        if let Some(n) = symbols.instructions_in(l.body_lo, l.body_hi) {
            l.exec_share *= n as f64 / l.body_instructions.max(1) as f64;
            l.body_instructions = n;
            counted += 1;
        }
    }
    counted
}

fn describe(c: &LoopConfig) -> String {
    let ways = if c.fully_associative() {
        "fully associative".to_string()
    } else if c.ways == 1 {
        "direct mapped".to_string()
    } else {
        format!("{}-way", c.ways)
    };
    let sampling = if c.sample_interval == 1 {
        "every sbb".to_string()
    } else {
        format!("1 in {} sbbs tallied", c.sample_interval)
    };
    format!(
        "{} entries, {ways}, {}-bit counters, coalescing {}, {sampling}",
        c.entries,
        c.width,
        if c.coalesce { "on" } else { "off" }
    )
}

fn print_text(out: &mut String, r: &Report, p: &LoopProfile) {
    crate::outln!(out, "frequent loop cache: {}", describe(&r.config));
    crate::outln!(
        out,
        "{}, {} taken short backward branches, {} tallied, {} loops resident",
        if r.every_instruction {
            format!("{} instructions", thousands(r.instructions))
        } else {
            format!("{} events", thousands(r.events))
        },
        thousands(r.sbbs),
        thousands(r.tallied),
        p.loops.len()
    );
    crate::outln!(out);
    let exact = matches!(r.loops.first().map(|l| &l.found), Some(Found::Compared(_)));
    let symbols = r
        .loops
        .iter()
        .any(|l| l.function.is_some() || l.source.is_some() || l.area.is_some());
    crate::out!(
        out,
        "{:>4}  {:>12}  {:>27}  {:>6}  {:>12}  {:>7}  {:>9}",
        "rank",
        "sbb pc",
        "body",
        "instrs",
        "iterations",
        "share",
        "exec"
    );
    if exact {
        crate::out!(
            out,
            "  {:>12}  {:>7}  {:>9}",
            "exact iters",
            "exact",
            "exact exec"
        );
    }
    if symbols {
        crate::out!(out, "  where");
    }
    crate::outln!(out);
    for row in &r.loops {
        let (l, x) = match &row.found {
            Found::Estimated(l) => (l, None),
            Found::Compared(c) => (&c.detected, Some(c)),
        };
        crate::out!(
            out,
            "{:>4}  {:>12}  {:>27}  {:>6}  {:>12}  {:>7}  {:>9}",
            l.rank,
            format!("{:#x}", l.pc),
            format!("{:#x}..{:#x}", l.body_lo, l.body_hi),
            l.body_instructions,
            thousands(l.iterations),
            pct(l.share),
            pct(l.exec_share)
        );
        if let Some(x) = x {
            crate::out!(
                out,
                "  {:>12}  {:>7}  {:>9}",
                thousands(x.exact_iterations),
                pct(x.exact_share),
                pct(x.exact_exec_share)
            );
        }
        if symbols {
            let named = match (&row.function, &row.source) {
                (Some(f), Some(s)) => Some(crate::symbols::function_and_span(f, s)),
                (None, Some(s)) => Some(s.clone()),
                (Some(f), None) => Some(f.clone()),
                (None, None) => None,
            };
            let place = crate::areas::or_mapping(named, row.area.as_deref());
            crate::out!(out, "  {}", place.unwrap_or_default());
        }
        crate::outln!(out);
    }
    if r.loops.is_empty() {
        crate::outln!(out, "(no taken short backward branches in the input)");
    }
    crate::outln!(out);
    for row in r.loops.iter().filter(|l| l.listing.is_some()) {
        let l = row.found.detected();
        crate::outln!(
            out,
            "loop {} at {:#x}: {} iterations{}",
            l.rank,
            l.pc,
            thousands(l.iterations),
            if matches!(row.found, Found::Compared(_)) {
                "; each instruction with the times it ran"
            } else {
                ""
            }
        );
        print_listing(out, row.listing.as_deref().unwrap_or_default());
        crate::outln!(out);
    }
    if let Some(acc) = r.accuracy {
        crate::outln!(
            out,
            "accuracy (1 - SOD over the ten most frequent loops): {acc:.4}"
        );
    }
    crate::outln!(out,
        "cache updates {}, halvings {}, misses {}, replacements {}, coalesced {} ({} of updates saved)",
        thousands(r.cache_updates),
        thousands(r.halvings),
        thousands(r.misses),
        thousands(r.replacements),
        thousands(r.coalesced),
        pct(r.updates_saved)
    );
    crate::outln!(out, "detector memory {} bytes", thousands(r.bytes as u64));
    if r.sbbs == 0 {
        crate::outln!(
            out,
            "note: no taken short backward branches in the input{}",
            if r.recorded_classes.is_empty() {
                String::new()
            } else {
                format!(
                    " (the trace recorded only {}: record branches and jumps to find loops)",
                    r.recorded_classes.join(",")
                )
            }
        );
    }
    if !r.every_instruction {
        crate::outln!(
            out,
            "note: the trace recorded only some classes ({}), so the share of execution is unknown (-)",
            r.recorded_classes.join(",")
        );
    }
    match r.bodies_counted {
        None if r.compressed_seen => crate::outln!(
            out,
            "note: the trace has compressed (2-byte) instructions, which body lengths of \
             (branch PC - target) / 4 + 1 undercount; --body-length code counts them in the \
             program's code"
        ),
        Some(n) if n < r.loops.len() => crate::outln!(
            out,
            "note: {} of the {} loops shown keep the paper's body length (branch PC - target) \
             / 4 + 1: their code could not be read{}",
            r.loops.len() - n,
            r.loops.len(),
            if r.has_binary {
                ""
            } else {
                " (no program binary: name it with --binary)"
            }
        ),
        Some(_) => crate::outln!(out, "body lengths counted in the program's code"),
        None => {}
    }
    let (asked, listed) = r.listings;
    if listed < asked {
        crate::outln!(
            out,
            "note: {} of the {asked} loops asked for by --listing could not be listed: {}",
            asked - listed,
            if r.has_binary {
                "their code could not be read"
            } else {
                "the program's code is not at hand (--no-symbols, or a trace whose program \
                 is gone: name it with --binary)"
            }
        );
    }
}

fn run_sweep(a: &Args, base: &LoopConfig) -> anyhow::Result<()> {
    crate::job::run_one(&a.input, a.json, Box::new(sweep_job(a, base)?))
}

fn sweep_job(a: &Args, base: &LoopConfig) -> anyhow::Result<SweepJob> {
    check_target(a.target)?;
    a.svg.check()?;
    Ok(SweepJob {
        stream: SbbStream::new(base.max_distance),
        base: *base,
        target: a.target,
        svg: a.svg.clone(),
    })
}

/// The design-space sweep: the sbb stream, recorded in runs, and the
/// configurations evaluated over it afterwards.
pub struct SweepJob {
    stream: SbbStream,
    base: LoopConfig,
    target: f64,
    svg: crate::output::SvgArgs,
}

impl Job for SweepJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.stream
    }

    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        let stream = &self.stream;
        let result = sweep(stream, &SweepSpace::default(), &self.base, self.target)
            .map_err(|e| bad_input(e.to_string()))?;
        #[derive(Serialize)]
        struct SweepReport<'a> {
            events: u64,
            loops: usize,
            runs: usize,
            #[serde(flatten)]
            result: &'a SweepResult,
        }
        let mut json = serde_json::to_value(SweepReport {
            events: info.events,
            loops: stream.loops(),
            runs: stream.runs(),
            result: &result,
        })?;
        let mut out = String::new();
        sweep_text(&mut out, stream, &result, self.target);
        let plot = || SweepPlot {
            title: format!(
                "Frequent loop cache: {} configurations over {} taken short backward branches",
                result.points.len(),
                thousands(stream.sbbs())
            ),
            cost: "hardware bits".into(),
            error: "1 - accuracy (SOD)".into(),
            points: result
                .points
                .iter()
                .map(|p| (p.size_bits as f64, 1.0 - p.accuracy))
                .collect(),
            front: result.front.clone(),
            labels: result
                .front
                .iter()
                .map(|&i| result.points[i].config.label())
                .collect(),
            max_error: Some(1.0 - self.target),
        };
        self.svg.draw(plot, &mut out, &mut json)?;
        Ok(Rendered { json, text: out })
    }
}

fn sweep_text(out: &mut String, stream: &SbbStream, result: &SweepResult, target: f64) {
    crate::outln!(
        out,
        "design-space sweep over {} taken short backward branches of {} loops ({} configurations)",
        thousands(stream.sbbs()),
        stream.loops(),
        result.points.len()
    );
    crate::outln!(
        out,
        "accuracy (1 - SOD) in percent, by counter width in bits:"
    );
    crate::outln!(out);
    let space = SweepSpace::default();
    crate::out!(out, "{:<18}", "entries ways coal");
    for w in &space.widths {
        crate::out!(out, "{w:>4}");
    }
    crate::outln!(out);
    for row in result.points.chunks(space.widths.len()) {
        let c = &row[0].config;
        crate::out!(
            out,
            "{:<18}",
            format!(
                "{:>7} {:>4} {:>4}",
                c.entries,
                c.ways,
                if c.coalesce { "on" } else { "off" }
            )
        );
        for p in row {
            crate::out!(out, "{:>4.0}", (p.accuracy * 100.0).floor());
        }
        crate::outln!(out);
    }
    crate::outln!(out);
    match &result.smallest {
        Some(p) => crate::outln!(
            out,
            "smallest configuration reaching accuracy {}: {} ({}), accuracy {:.4}, {} bits",
            target,
            p.config.label(),
            describe(&p.config),
            p.accuracy,
            p.size_bits
        ),
        None => crate::outln!(
            out,
            "no configuration reaches accuracy {} (best {:.4})",
            target,
            result.points.iter().map(|p| p.accuracy).fold(0.0, f64::max)
        ),
    }
    let heading = crate::output::FRONT_OF_SIZES;
    crate::output::print_front(out, heading, &result.front, |i| {
        let p = &result.points[i];
        format!(
            "  {} ({}), accuracy {:.4}, {} bits",
            p.config.label(),
            describe(&p.config),
            p.accuracy,
            p.size_bits
        )
    });
    crate::outln!(
        out,
        "(percentages are rounded down; --json lists every configuration exactly)"
    );
}

//! `coprof export`: the exact profile of a run (events per PC, each with
//! its function, file, line and inlined frames, and per calling context
//! when the run's calls are followed) in the formats other tools read:
//! pprof's and callgrind's (coprof-report).

use crate::error::bad_input;
use crate::input::{InputArgs, InputInfo};
use crate::job::{Job, Rendered};
use crate::output::{pct, thousands};
use crate::sampled::{ProfileKind, SampleEval};
use coprof_brr::{AnySampler, SamplerSpec};
use coprof_core::{CallTree, ClassSet, PcCounts, Sink};
use coprof_report::{CallContext, ContextCost, Cost, Object, PcProfile};
use coprof_symbols::Location;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use thread_counts::ThreadCounts;

mod thread_counts;

/// Write the exact profile of a run for pprof or callgrind's tools.
///
/// Counts the events of every PC exactly (instructions retired for an RV64
/// program run in the simulator; samples for a native program or a trace
/// of samples), names each PC by function, source file and line with its
/// inlined frames, and writes the profile in a format other tools read:
/// pprof's (`go tool pprof`, speedscope) or callgrind's (`callgrind_annotate`,
/// KCachegrind). The calls and returns of a run that retires every
/// instruction are followed, so that every count is also kept per calling
/// context: pprof's samples carry their call stacks and a callgrind file
/// its call arcs. A native program's samples, live, carry their stacks,
/// unwound from the CFI in each file's `.eh_frame` (see `docs/export.md`);
/// from a trace, which holds none, its profile is flat.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof export -o crc32.pb.gz -- workloads/build/crc32
  go tool pprof -top crc32.pb.gz
  coprof export -o callgrind.out.crc32 -- workloads/build/crc32
  callgrind_annotate callgrind.out.crc32
  coprof record -o gzip.cpt -- gzip -9 -c big.txt > big.txt.gz
  coprof export -o gzip.pb.gz gzip.cpt
  coprof export --classes load -o loads.pb.gz -- ./prog
  coprof export --sampler brr:9 -o callgrind.out.brr -- ./prog")]
pub struct Args {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// The file to write.
    #[arg(long, short, value_name = "FILE", value_parser = crate::output::output_file())]
    output: PathBuf,
    /// Its format [default: from its name: pprof for `*.pb.gz`, `*.pb`
    /// or `*.pprof`, callgrind for `callgrind.out*` or `*.callgrind`].
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// The classes of events counted (comma-separated, or all): with
    /// `load`, loads per PC [default: all].
    #[arg(long, value_parser = crate::cmd::gen::parse_classes)]
    classes: Option<ClassSet>,
    /// Also sample the events with this sampler (brr:F, counter:N,
    /// geometric:N or periodic:N±J, as `coprof sample` takes them) and
    /// write each PC's samples beside its exact count: the estimate and
    /// the truth in one file, line by line, with their overlap (Lee &
    /// Zilles, CGO 2008, §4.1) in the summary.
    #[arg(long, value_name = "SAMPLER")]
    sampler: Option<String>,
    /// Seed of a random sampler.
    #[arg(long, default_value_t = 1, requires = "sampler")]
    seed: u64,
    /// Count per PC only, without following calls: no call stacks in
    /// pprof's samples, no call arcs in a callgrind file (a flat profile
    /// is all a sampled native program or `--sampler` gives).
    #[arg(long)]
    flat: bool,
    /// Keep each thread's costs apart, as callgrind's
    /// `--separate-threads=yes` does: every pprof sample carries a
    /// `thread` label with the thread's id and a `thread_name` label
    /// with its name (`pprof -tags`, `-tagfocus`, `-tagroot=thread`), and a callgrind profile is a file per thread,
    /// -o's name with `-TID` appended. Needs a source that says which
    /// thread runs: the simulator, a sampled native program, or their
    /// traces.
    #[arg(long, conflicts_with = "sampler")]
    separate_threads: bool,
    /// Functions listed in the summary, the costliest first.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// A format other tools read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// pprof's profile.proto, gzipped (`go tool pprof`).
    Pprof,
    /// callgrind's text format (`callgrind_annotate`, KCachegrind).
    Callgrind,
}

impl Format {
    /// The format a file's name says, as the tools name their files.
    fn of(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy();
        if [".pb.gz", ".pb", ".pprof"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            Some(Format::Pprof)
        } else if name.starts_with("callgrind.out") || name.ends_with(".callgrind") {
            Some(Format::Callgrind)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Pprof => "pprof",
            Format::Callgrind => "callgrind",
        }
    }

    /// How to read a file of this format.
    fn reader(self, path: &Path) -> String {
        match self {
            Format::Pprof => format!("go tool pprof -top {}", path.display()),
            Format::Callgrind => format!("callgrind_annotate {}", path.display()),
        }
    }
}

pub fn run(mut a: Args) -> anyhow::Result<()> {
    // A native program is sampled where it was interrupted, as `coprof
    // record` samples it: a profile of where its time goes.
    a.input.setup.native = Some(false);
    crate::job::run_one(&a.input, a.json, prepare(&a)?)
}

/// The export of `a`'s options as a [`Job`]: what it writes is checked
/// before the run, so that a bad name does not wait for the program.
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    let format = match (a.format, Format::of(&a.output)) {
        (Some(f), _) | (None, Some(f)) => f,
        (None, None) => {
            return Err(bad_input(format!(
                "-o {}: give --format pprof or callgrind, or a name that says which \
                 (`*.pb.gz`, `callgrind.out.*`)",
                a.output.display()
            )))
        }
    };
    // Absolute, since the program may change directory before the file
    // is written.
    let path = std::path::absolute(&a.output)
        .map_err(|e| bad_input(format!("-o {}: {e}", a.output.display())))?;
    crate::output::writable_dir("-o", &a.output, "the profile")?;
    let classes = a.classes.unwrap_or(ClassSet::ALL);
    if classes == ClassSet::NONE {
        return Err(bad_input("--classes: give at least one class"));
    }
    let samples = samples(&a.input)?;
    let cost = cost_of(classes, samples);
    // A native program's samples carry their stacks live, and in a trace
    // `coprof record --call-graph` wrote; another trace's carry none.
    let flat = a.flat || (samples && a.input.file.is_some() && !a.input.describe()?.stacks);
    let counting = match &a.sampler {
        None if flat && a.separate_threads => Counting::Threads(ThreadCounts::new(classes)),
        None if flat => Counting::Exact(PcCounts::new(classes)),
        None => {
            let mut tree = CallTree::new(classes);
            if samples {
                tree = tree.of_samples();
            }
            if a.separate_threads {
                tree = tree.separate_threads();
            }
            Counting::Calls(Box::new(tree))
        }
        Some(s) => {
            if samples {
                return Err(bad_input(format!(
                    "--sampler: {} holds samples, not every event: {}",
                    a.input.name(),
                    super::sample::NEEDS_EVERY_INSTRUCTION
                )));
            }
            let (spec, sampler) = super::sample::parse_sampler(s, a.seed)?;
            let eval = SampleEval::new(sampler, classes, ProfileKind::Pc);
            Counting::Sampled(Box::new(eval), spec)
        }
    };
    Ok(Box::new(Export {
        counting,
        cost,
        format,
        output: a.output.clone(),
        path,
        top: a.top,
        separate_threads: a.separate_threads,
    }))
}

/// Whether the input's events are samples rather than every event: a
/// native process's, or a trace `coprof sample -o` wrote.
fn samples(input: &InputArgs) -> anyhow::Result<bool> {
    if input.holds_samples()? {
        return Ok(true);
    }
    Ok(input.file.is_some() && input.describe()?.source == "sample")
}

/// What a PC's count is: instructions retired, samples, or events of some
/// classes.
fn cost_of(classes: ClassSet, samples: bool) -> Cost {
    let all = classes == ClassSet::ALL;
    match (samples, all) {
        (true, true) => Cost::samples(),
        (true, false) => Cost::new(
            "Samples",
            "samples",
            &format!("Samples of classes {classes}"),
        ),
        (false, true) => Cost::instructions(),
        (false, false) => {
            let name = classes.to_string();
            Cost::new(
                &name.replace(',', "_"),
                &name,
                &format!("Events of classes {name}"),
            )
        }
    }
}

/// Each PC with its count summed over the keys it is counted under
/// (contexts, threads), as [`Counting::rows`] has them before sorting.
fn per_pc<K>(counts: &rustc_hash::FxHashMap<(K, u64), u64>) -> Vec<(u64, u64, Option<u64>)> {
    let mut per_pc: HashMap<u64, u64> = HashMap::new();
    for (&(_, pc), &n) in counts {
        *per_pc.entry(pc).or_insert(0) += n;
    }
    per_pc.into_iter().map(|(pc, n)| (pc, n, None)).collect()
}

/// What is counted per PC.
enum Counting {
    /// Every event, exactly.
    Exact(PcCounts),
    /// Every event exactly, per calling context.
    Calls(Box<CallTree>),
    /// Events per thread, flat (--separate-threads with samples or
    /// --flat).
    Threads(ThreadCounts),
    /// Every event exactly, and beside it the events a sampler took.
    Sampled(Box<SampleEval<AnySampler>>, SamplerSpec),
}

impl Counting {
    /// Each PC with its exact count and, with a sampler, its samples, by
    /// address.
    fn rows(&self) -> Vec<(u64, u64, Option<u64>)> {
        let mut rows: Vec<(u64, u64, Option<u64>)> = match self {
            Counting::Exact(c) => c.counts().iter().map(|(&pc, &n)| (pc, n, None)).collect(),
            Counting::Calls(t) => per_pc(t.counts()),
            Counting::Threads(t) => per_pc(t.counts()),
            Counting::Sampled(e, _) => e
                .full
                .iter()
                .map(|(&pc, &n)| (pc, n, Some(e.sampled.get(&pc).copied().unwrap_or(0))))
                .collect(),
        };
        rows.sort_unstable();
        rows
    }

    /// The threads kept apart, when they were (--separate-threads).
    fn threads(&self) -> Option<usize> {
        match self {
            Counting::Calls(t) => Some(t.contexts().iter().filter(|c| c.thread.is_some()).count()),
            Counting::Threads(t) => Some(t.threads()),
            _ => None,
        }
    }

    /// The calls followed, when there were some: a stream without calls
    /// gives a flat profile.
    fn as_calls(&self) -> Option<&CallTree> {
        match self {
            Counting::Calls(t) if t.contexts().len() > 1 => Some(t),
            _ => None,
        }
    }

    /// The sampler's column, when there is one: what it counts.
    fn sampled_cost(&self) -> Option<Cost> {
        let Counting::Sampled(_, spec) = self else {
            return None;
        };
        Some(Cost::new(
            "Sampled",
            "sampled",
            &format!("Samples {spec} took, each about its mean interval of events"),
        ))
    }
}

struct Export {
    counting: Counting,
    cost: Cost,
    format: Format,
    /// The file as given, and as written.
    output: PathBuf,
    path: PathBuf,
    top: usize,
    /// Each thread's costs kept apart (--separate-threads).
    separate_threads: bool,
}

/// A sampler's estimate beside the exact profile.
#[derive(Serialize)]
struct SamplerSummary {
    sampler: String,
    samples: u64,
    /// Σ min(exact share, sampled share) over the PCs (Lee & Zilles §4.1).
    overlap: f64,
}

/// The calls a profile followed.
#[derive(Serialize)]
struct CallsSummary {
    /// Calls made.
    calls: u64,
    /// Calling contexts: call sites reached by distinct chains of calls.
    contexts: usize,
    /// Returns that went to no open call (signal handlers' returns,
    /// for one).
    unmatched_returns: u64,
    /// For a native program's samples, whose calls are not followed but
    /// unwound from each sample's stack: the samples with a stack, and,
    /// sampled live, those whose stacks reached their thread's first
    /// frame (the others start where the unwinding stopped).
    #[serde(skip_serializing_if = "Option::is_none")]
    stacks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    whole_stacks: Option<u64>,
}

/// One thread's cost, with its threads kept apart.
#[derive(Serialize)]
struct ThreadCost {
    thread: u64,
    /// Its name (`comm`), as the input records it.
    name: String,
    /// Its count, and its share of the whole.
    total: u64,
    share: f64,
    /// Its callgrind file, when a callgrind profile is a file per thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<PathBuf>,
}

/// One function's cost in the summary.
#[derive(Serialize)]
struct FunctionCost {
    function: String,
    /// The file its code is in (the program's or a library's path).
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<String>,
    count: u64,
    share: f64,
    /// With calls followed: the count of everything run while it ran or
    /// was on the stack, and its share (pprof's cumulative column).
    #[serde(skip_serializing_if = "Option::is_none")]
    inclusive: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inclusive_share: Option<f64>,
}

#[derive(Serialize)]
struct Summary {
    output: PathBuf,
    format: Format,
    /// pprof's sample type (callgrind's event is `event`).
    sample_type: String,
    event: String,
    description: String,
    total: u64,
    /// For a native process's samples: the CPU time each stands for, in
    /// nanoseconds (the profile's second value, pprof's `cpu`, is the
    /// count times this).
    #[serde(skip_serializing_if = "Option::is_none")]
    period_ns: Option<u64>,
    /// With --sampler: the sampler, the samples it took (the profile's
    /// second value), and their overlap with the exact profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    sampler: Option<SamplerSummary>,
    /// The calls followed, when they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    calls: Option<CallsSummary>,
    /// With --separate-threads: the threads whose costs were kept apart
    /// (0 when the input does not say which thread runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<usize>,
    /// With --separate-threads, each thread's cost, and a callgrind
    /// profile's file per thread (`output` is not written then).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    per_thread: Vec<ThreadCost>,
    pcs: usize,
    functions: usize,
    objects: Vec<String>,
    top: Vec<FunctionCost>,
}

impl Job for Export {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        match &mut self.counting {
            Counting::Exact(c) => c,
            Counting::Calls(t) => t.as_mut(),
            Counting::Threads(t) => t,
            Counting::Sampled(e, _) => e.as_mut(),
        }
    }

    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        // What each sample of a native process stands for, when the counts
        // are its samples.
        let period = period_ns(info).filter(|_| self.cost.sample_type == "samples");
        let mut profile = pc_profile(&self.counting, self.cost.clone(), period, info);
        profile.thread_names = (profile.threads().into_iter())
            .map(|tid| (tid, info.meta.thread_name(tid)))
            .collect();
        let mut per_thread = per_thread(&profile);
        if self.format == Format::Callgrind && !per_thread.is_empty() {
            write_parts(&profile, &mut per_thread, &self.output, &self.path)?;
        } else {
            write(&profile, self.format, &self.path)?;
        }
        let mut summary = summarize(&profile, &self, period);
        if let Some(calls) = &mut summary.calls {
            // A live run's count, else a trace's.
            let whole = (info.sampled.as_ref().map(|r| r.whole_stacks)).or(info.meta.whole_stacks);
            calls.whole_stacks = calls.stacks.and(whole);
        }
        summary.per_thread = per_thread;
        let text = text(&summary, self.format);
        Ok(Rendered {
            json: serde_json::to_value(&summary)?,
            text,
        })
    }
}

/// The counts as a profile: each PC with the file it lies in (by the
/// program's symbols, else by the mapping the run recorded) and its
/// location; with the samples' `period`, the CPU time they stand for.
fn pc_profile(counting: &Counting, cost: Cost, period: Option<u64>, info: &InputInfo) -> PcProfile {
    let mut command = vec![info.meta.program.clone()];
    command.extend(info.meta.args.iter().cloned());
    let mut costs = vec![cost];
    if period.is_some() {
        costs.push(Cost {
            event: "CPU_ns".into(),
            sample_type: "cpu".into(),
            unit: "nanoseconds".into(),
            description: "CPU time, the samples times their mean period".into(),
        });
    }
    costs.extend(counting.sampled_cost());
    let mut p = PcProfile::new(costs, command);
    let mut objects: HashMap<(String, u64, u64), usize> = HashMap::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut push = |p: &mut PcProfile, pc: u64, values: Vec<u64>| {
        let (object, location) = locate(info, pc);
        let object = object.map(|o| {
            *objects
                .entry((o.path.clone(), o.start, o.end))
                .or_insert_with(|| {
                    p.objects.push(o);
                    p.objects.len() - 1
                })
        });
        p.push(pc, values, object, location)
    };
    let values = |n: u64, sampled: Option<u64>| match (period, sampled) {
        (Some(ns), _) => vec![n, n * ns],
        (None, Some(s)) => vec![n, s],
        (None, None) => vec![n],
    };
    for (pc, n, sampled) in counting.rows() {
        let i = push(&mut p, pc, values(n, sampled));
        index.insert(pc, i);
    }
    if let Counting::Threads(t) = counting {
        // Each thread's samples of a PC, at no call: a flat profile per
        // thread.
        let mut counts: Vec<_> = t.counts().iter().collect();
        counts.sort_unstable();
        for (&(thread, pc), &n) in counts {
            p.push_context_cost(ContextCost {
                context: None,
                pc: index[&pc],
                values: values(n, None),
                thread,
            });
        }
    }
    if let Some(tree) = counting.as_calls() {
        // Call sites and callees that counted nothing (with `--classes`)
        // still name the stacks' frames and the arcs' ends.
        let mut ends: Vec<u64> = tree.contexts()[1..]
            .iter()
            .filter(|c| c.thread.is_none())
            .flat_map(|c| [c.call_site, c.target])
            .filter(|pc| !index.contains_key(pc))
            .collect();
        ends.sort_unstable();
        ends.dedup();
        for pc in ends {
            let i = push(&mut p, pc, values(0, None));
            index.insert(pc, i);
        }
        add_calls(&mut p, tree, &index, &|n| values(n, None));
    }
    p
}

/// The calling contexts of `tree` and its counts in each, into `p`, whose
/// PCs `index` finds, each count's `values` as the profile's costs give
/// them. A thread's root context (with threads kept apart) is not a
/// call: the calls under it are made with none open, and its thread
/// labels every count below it.
fn add_calls(
    p: &mut PcProfile,
    tree: &CallTree,
    index: &HashMap<u64, usize>,
    values: &dyn Fn(u64) -> Vec<u64>,
) {
    let contexts = tree.contexts();
    // Each tree context's call in `p` (none for the root and threads'
    // roots), and its thread.
    let mut call = vec![None; contexts.len()];
    let mut thread = vec![None; contexts.len()];
    for (id, c) in contexts.iter().enumerate().skip(1) {
        let parent = c.parent as usize;
        if c.thread.is_some() {
            thread[id] = c.thread;
            continue;
        }
        thread[id] = thread[parent];
        call[id] = Some(p.push_call(CallContext {
            parent: call[parent],
            call_site: index[&c.call_site],
            callee: index[&c.target],
            calls: c.calls,
            thread: thread[id],
        }));
    }
    let mut counts: Vec<(&(u32, u64), &u64)> = tree.counts().iter().collect();
    counts.sort_unstable();
    for (&(id, pc), &n) in counts {
        p.push_context_cost(ContextCost {
            context: call[id as usize],
            pc: index[&pc],
            values: values(n),
            thread: thread[id as usize],
        });
    }
}

/// The mean period of a native process's samples, in nanoseconds of a
/// thread's CPU time, as its sampling recorded it: what each sample
/// stands for.
fn period_ns(info: &InputInfo) -> Option<u64> {
    info.meta.extra.get("sampling")?.get("period_ns")?.as_u64()
}

/// The file `pc` lies in and its location there: by the files' symbols
/// (or a JIT's perf map), else by the memory it lies in.
fn locate(info: &InputInfo, pc: u64) -> (Option<Object>, Location) {
    if let Some((object, location)) = info.symbols.as_ref().and_then(|s| s.located(pc)) {
        return (Some(object), location);
    }
    let area = crate::areas::area_of(info, pc).map(|a| Object {
        path: a.name.clone(),
        start: a.start,
        end: a.end,
        build_id: None,
    });
    (area, Location::address(pc))
}

/// Each thread's first cost and share of the whole, by thread, with its
/// name, when the profile keeps its threads apart.
fn per_thread(p: &PcProfile) -> Vec<ThreadCost> {
    let mut totals: std::collections::BTreeMap<u64, u64> = Default::default();
    for c in &p.context_costs {
        if let Some(tid) = c.thread {
            *totals.entry(tid).or_insert(0) += c.values[0];
        }
    }
    let whole = p.totals()[0].max(1) as f64;
    (totals.into_iter())
        .map(|(thread, total)| ThreadCost {
            thread,
            name: p.thread_names[&thread].clone(),
            total,
            share: total as f64 / whole,
            output: None,
        })
        .collect()
}

/// Writes each thread's part of `p` to a callgrind file of its own, as
/// callgrind names its files with `--separate-threads=yes`: `path` with
/// `-TID` appended (`output` is the path as given), into `threads`.
fn write_parts(
    p: &PcProfile,
    threads: &mut [ThreadCost],
    output: &Path,
    path: &Path,
) -> anyhow::Result<()> {
    let with_tid = |path: &Path, tid: u64| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!("-{tid}"));
        PathBuf::from(name)
    };
    for t in threads {
        write(
            &p.of_thread(t.thread),
            Format::Callgrind,
            &with_tid(path, t.thread),
        )?;
        t.output = Some(with_tid(output, t.thread));
    }
    Ok(())
}

/// Writes `p` to `path` in `format` ([`crate::output::put_file`]).
fn write(p: &PcProfile, format: Format, path: &Path) -> anyhow::Result<()> {
    let creator = format!("coprof {}", env!("CARGO_PKG_VERSION"));
    crate::output::put_file(path, |mut out| match format {
        Format::Pprof => coprof_report::pprof::write(&mut out, p, &[creator]),
        Format::Callgrind => coprof_report::callgrind::write(&mut out, p, &creator),
    })
}

fn summarize(p: &PcProfile, e: &Export, period: Option<u64>) -> Summary {
    let total = p.totals()[0];
    let mut top = p.functions();
    let functions = top.iter().filter(|f| f.own[0] > 0).count();
    let first = |v: &Option<Vec<u64>>| v.as_ref().map_or(0, |v| v[0]);
    top.sort_by(|a, b| {
        (b.own[0], first(&b.inclusive))
            .cmp(&(a.own[0], first(&a.inclusive)))
            .then_with(|| (&a.function, a.object).cmp(&(&b.function, b.object)))
    });
    top.truncate(e.top);
    let share = |n: u64| n as f64 / total.max(1) as f64;
    // A function's cost with its callees, when calls were followed (a
    // profile of samples per thread has costs per thread, not per call).
    let calls = matches!(e.counting, Counting::Calls(_));
    Summary {
        output: e.output.clone(),
        format: e.format,
        sample_type: e.cost.sample_type.clone(),
        event: e.cost.event.clone(),
        description: e.cost.description.clone(),
        total,
        period_ns: period,
        sampler: match &e.counting {
            Counting::Sampled(eval, spec) => Some(SamplerSummary {
                sampler: spec.to_string(),
                samples: eval.samples,
                overlap: eval.overlap(),
            }),
            _ => None,
        },
        calls: match &e.counting {
            Counting::Calls(tree) => Some(CallsSummary {
                calls: tree.contexts().iter().map(|c| c.calls).sum(),
                contexts: tree.contexts().len() - 1 - e.counting.threads().unwrap_or(0),
                unmatched_returns: tree.unmatched_returns(),
                stacks: Some(tree.stacks()).filter(|&n| n > 0),
                whole_stacks: None,
            }),
            _ => None,
        },
        threads: e.counting.threads().filter(|_| e.separate_threads),
        per_thread: Vec::new(),
        pcs: p
            .pcs
            .iter()
            .filter(|pc| pc.values.iter().any(|&v| v > 0))
            .count(),
        functions,
        objects: p.objects.iter().map(|o| o.path.clone()).collect(),
        top: top
            .into_iter()
            .map(|f| FunctionCost {
                object: f.object.map(|o| p.objects[o].path.clone()),
                count: f.own[0],
                share: share(f.own[0]),
                inclusive: f.inclusive.as_ref().filter(|_| calls).map(|i| i[0]),
                inclusive_share: f.inclusive.as_ref().filter(|_| calls).map(|i| share(i[0])),
                function: f.function,
            })
            .collect(),
    }
}

fn text(s: &Summary, format: Format) -> String {
    let what = format!(
        "{} profile of {} {} at {} PCs in {} functions",
        format.name(),
        thousands(s.total),
        s.sample_type,
        thousands(s.pcs as u64),
        thousands(s.functions as u64),
    );
    // Each thread's line, named by its file when it has one.
    let thread_lines = |t: &mut String| {
        for c in &s.per_thread {
            let name = match &c.output {
                Some(file) => file.display().to_string(),
                None => format!("thread {}", c.thread),
            };
            let name = format!("{name} ({})", c.name);
            t.push_str(&format!(
                "  {name}  {} {} ({})\n",
                thousands(c.total),
                s.sample_type,
                pct(c.share)
            ));
        }
    };
    let files = s.per_thread.iter().any(|c| c.output.is_some());
    let mut t = if files {
        let mut t = format!("wrote a {what}, a file per thread:\n");
        thread_lines(&mut t);
        t
    } else {
        format!("wrote {}: {what}\n", s.output.display())
    };
    if let Some(ns) = s.period_ns {
        t.push_str(&format!(
            "each sample stands for {} µs of a thread's CPU time, its mean period: {:.2} s in all \
             (pprof's cpu)\n",
            ns / 1000,
            (s.total * ns) as f64 / 1e9
        ));
    }
    if let Some(x) = &s.sampler {
        t.push_str(&format!(
            "beside them, the {} samples {} took: {} overlap with the exact profile\n",
            thousands(x.samples),
            x.sampler,
            pct(x.overlap)
        ));
    }
    let stacks = (s.calls.as_ref()).and_then(|c| Some((c.stacks?, c.whole_stacks, c.contexts)));
    if let Some((unwound, whole, contexts)) = stacks {
        t.push_str(&format!(
            "with each sample's stack, in {} calling contexts",
            thousands(contexts as u64),
        ));
        match whole {
            Some(whole) => t.push_str(&format!(
                ": {} of {} stacks to their thread's first frame ({}), the others from where \
                 the unwinding stopped\n",
                thousands(whole),
                thousands(unwound),
                pct(whole as f64 / unwound.max(1) as f64),
            )),
            None => t.push_str(&format!(" ({} stacks)\n", thousands(unwound))),
        }
    } else if s.calls.as_ref().is_some_and(|c| c.calls == 0) {
        t.push_str("no call in the stream: the profile is flat\n");
    } else if let Some(c) = &s.calls {
        t.push_str(&format!(
            "with its {} calls followed, in {} calling contexts{}\n",
            thousands(c.calls),
            thousands(c.contexts as u64),
            match c.unmatched_returns {
                0 => String::new(),
                n => format!(" ({} returns to no open call)", thousands(n)),
            }
        ));
    }
    match s.threads {
        Some(0) => t.push_str("its threads together: the input does not say which thread runs\n"),
        Some(n) if files => t.push_str(&format!("each of its {n} threads apart\n")),
        Some(n) => {
            t.push_str(&format!("each of its {n} threads apart:\n"));
            thread_lines(&mut t);
        }
        None => {}
    }
    let with_callees = s
        .calls
        .as_ref()
        .is_some_and(|c| c.calls > 0 || c.contexts > 0);
    if !s.top.is_empty() {
        t.push_str(&format!("\n{:>15}  {:>7}  ", s.sample_type, "share"));
        if with_callees {
            t.push_str(&format!("{:>7}  ", "with callees"));
        }
        t.push_str("function\n");
        // The file a function is in is said when there are several, but
        // for code no symbol names, whose name is its file's already.
        let several = s.objects.len() > 1;
        for f in &s.top {
            let object = f
                .object
                .as_deref()
                .filter(|_| several && !f.function.starts_with('['))
                .map(|o| format!(" in {}", crate::areas::short(o)))
                .unwrap_or_default();
            t.push_str(&format!(
                "{:>15}  {:>7}  ",
                thousands(f.count),
                pct(f.share)
            ));
            if let Some(share) = f.inclusive_share.filter(|_| with_callees) {
                t.push_str(&format!("{:>12}  ", pct(share)));
            }
            t.push_str(&format!("{}{object}\n", f.function));
        }
    }
    match s.per_thread.first().and_then(|c| c.output.as_ref()) {
        Some(first) => t.push_str(&format!("\nread each with: {}\n", format.reader(first))),
        None => t.push_str(&format!("\nread it with: {}\n", format.reader(&s.output))),
    }
    t
}

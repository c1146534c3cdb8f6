//! `coprof sample`: apply a sampler (branch-on-random, counter, geometric,
//! DCPI periodic) to a trace, and write the sampled stream or measure its
//! accuracy with the overlap metric (Lee & Zilles, CGO 2008, §4.1).

use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{pct, thousands};
use crate::sampled::{ProfileKind, SampleEval, SampledSink};
use coprof_brr::{Sampler, SamplerSpec};
use coprof_core::{ClassSet, Sink};
use serde::Serialize;
use std::path::PathBuf;

/// Sample a trace's events with a software sampler.
///
/// The sampler decides once per event of the selected classes. Write the
/// sampled events as a trace (-o), or compare the profile they give with
/// the profile of every event (--eval), using the overlap accuracy
/// Σ_i min(f_full(i), f_sampled(i)).
///
/// Samplers: brr:F takes each event with probability (1/2)^(F+1), F in
/// 0..=15 (branch-on-random, a 20-bit LFSR; brr:F,spread chooses the
/// register bits so that no two outcomes share more than a few, see
/// docs/sampling.md; brr:F,adjacent the correlated adjacent bits); counter:N takes every N-th
/// event (Arnold–Ryder); geometric:N takes each event with probability 1/N
/// by counting down geometric intervals; periodic:N±J is DCPI's interrupt
/// every N events with a random jitter of up to J either way (periodic
/// alone is 65536±4096; periodic:N is N±N/16; ±0 turns jitter off; +- may
/// be typed for ±).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof gen --workload methods -n 4000000 -o methods.cpt
  coprof sample methods.cpt --sampler counter:1024 --eval
  coprof sample methods.cpt --sampler brr:9 --eval --json
  coprof sample mixed.cpt --sampler periodic:65536+-4096 --classes load -o loads.cpt
  coprof sample --sweep --profile pc -- ./prog
  coprof sample --sweep --sweep-methods brr,counter --sweep-intervals 2,16,1024 methods.cpt")]
pub struct Args {
    #[command(flatten)]
    pub(crate) input: crate::input::InputArgs,
    /// The sampler: brr:F[,spread|,adjacent], counter:N, geometric:N or
    /// periodic:N[±J].
    #[arg(
        long,
        short,
        required_unless_present = "sweep",
        conflicts_with = "sweep"
    )]
    sampler: Option<String>,
    /// Classes the sampler counts and samples (comma-separated, or all;
    /// default: call for --profile method, all otherwise).
    #[arg(long, value_parser = crate::cmd::gen::parse_classes)]
    pub(crate) classes: Option<ClassSet>,
    /// Seed of the random samplers (the same seed gives the same samples).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Write the sampled events to this trace file, or `-` for standard
    /// output (streamed; the summary then goes to standard error).
    #[arg(
        long,
        short,
        conflicts_with_all = ["eval", "sweep"],
        required_unless_present_any = ["eval", "sweep"],
        value_parser = crate::output::trace_file()
    )]
    output: Option<PathBuf>,
    /// Compare the sampled profile with the full one instead of writing.
    #[arg(long)]
    eval: bool,
    /// Compare many samplers with the full profile in one pass: each method
    /// of --sweep-methods at each mean interval of --sweep-intervals, with
    /// the most accurate at each interval (design-space exploration).
    #[arg(long, conflicts_with = "eval")]
    pub(crate) sweep: bool,
    /// With --sweep: the sampling methods to try, comma-separated
    /// [default: brr,counter,geometric,periodic].
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub(crate) sweep_methods: Vec<super::sample_sweep::Method>,
    /// With --sweep: the mean intervals to try (events per sample),
    /// comma-separated; powers of two for brr [default:
    /// 16,64,256,1024,4096].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub(crate) sweep_intervals: Vec<u64>,
    #[command(flatten)]
    pub(crate) svg: crate::output::SvgArgs,
    /// The profile compared by --eval or --sweep: method (calls per
    /// target) or pc (events per PC).
    #[arg(long, value_enum, default_value = "method", conflicts_with = "output")]
    pub(crate) profile: ProfileKind,
    /// Entries listed by --eval (largest in the full profile first).
    #[arg(
        long,
        default_value_t = 10,
        requires = "eval",
        conflicts_with = "sweep"
    )]
    top: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct WriteReport {
    sampler: String,
    classes: String,
    output: PathBuf,
    events: u64,
    samples: u64,
    mean_interval: f64,
    file_bytes: u64,
}

#[derive(Serialize)]
struct Entry {
    key: String,
    full: u64,
    full_share: f64,
    sampled: u64,
    sampled_share: f64,
    /// Where the key is, with the program's symbols: `function (file:line)`
    /// of the PC, or of the called function's entry in a method profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    place: Option<String>,
    /// The mapping the key lies in (`[anon]` for generated code, else
    /// its file's path), when the run's mappings are known: what names a
    /// key no symbol covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    area: Option<String>,
}

#[derive(Serialize)]
struct EvalReport {
    sampler: String,
    profile: ProfileKind,
    classes: String,
    events: u64,
    samples: u64,
    mean_interval: f64,
    overlap: f64,
    keys_full: usize,
    keys_sampled: usize,
    missed_share: f64,
    sampler_bytes: usize,
    top: Vec<Entry>,
}

/// The sweep's lists are options of --sweep alone. (clap's `requires`
/// cannot say so: it lets an option through whose requirement conflicts
/// with an option given, as --sweep does with --sampler.)
fn refuse_sweep_lists(a: &Args) -> anyhow::Result<()> {
    for (given, name) in [
        (!a.sweep_methods.is_empty(), "--sweep-methods"),
        (!a.sweep_intervals.is_empty(), "--sweep-intervals"),
        (a.svg.svg.is_some(), "--svg"),
    ] {
        if given {
            return Err(bad_input(format!("{name} is an option of --sweep")));
        }
    }
    Ok(())
}

/// The sampler `--sampler` names, built with `--seed`.
fn sampler_of(a: &Args) -> anyhow::Result<(SamplerSpec, coprof_brr::AnySampler)> {
    let s = a
        .sampler
        .as_deref()
        .expect("clap requires --sampler without --sweep");
    parse_sampler(s, a.seed)
}

/// The sampler `--sampler s` names, built with `seed`.
pub fn parse_sampler(s: &str, seed: u64) -> anyhow::Result<(SamplerSpec, coprof_brr::AnySampler)> {
    let spec = s
        .parse::<SamplerSpec>()
        .map_err(|e| bad_input(format!("--sampler '{s}': {e}")))?;
    let sampler = spec
        .build(seed)
        .map_err(|e| bad_input(format!("--sampler '{s}': {e}")))?;
    Ok((spec, sampler))
}

/// Why a sampler is not run over samples of a native process.
pub const NEEDS_EVERY_INSTRUCTION: &str = "a sampler picks from every event of the stream";

pub fn run(a: Args) -> anyhow::Result<()> {
    a.input.refuse_samples(NEEDS_EVERY_INSTRUCTION)?;
    if a.sweep {
        return crate::job::run_one(&a.input, a.json, super::sample_sweep::prepare(&a)?);
    }
    let (spec, sampler) = sampler_of(&a)?;
    refuse_sweep_lists(&a)?;
    if a.eval {
        eval(&a, spec, sampler)
    } else {
        write(&a, spec, sampler)
    }
}

fn write(a: &Args, spec: SamplerSpec, sampler: coprof_brr::AnySampler) -> anyhow::Result<()> {
    let out = a.output.as_ref().expect("clap requires -o without --eval");
    let classes = a.classes.unwrap_or(ClassSet::ALL);
    let mut meta = a.input.describe()?;
    meta.source = "sample".into();
    meta.args.push(format!("--sampler={spec}"));
    meta.extra.insert("sampler".into(), spec.to_string().into());
    meta.extra
        .insert("sampled_from".into(), a.input.name().into());
    meta.extra
        .insert("mean_interval".into(), spec.mean_interval().into());
    let mut w = crate::output::trace_writer(out, meta, classes)?;
    let _unread = crate::output::end_with_reader(out)?;
    let (seen, samples, info) = {
        let mut s = SampledSink::new(sampler, classes, &mut w);
        let info = a.input.run_sinks(vec![&mut s])?;
        (s.seen(), s.samples(), info)
    };
    // Where the input's code was, known once it has run: a live run's,
    // or a streamed trace's, which names them after its events.
    if !info.meta.modules.is_empty() {
        w.set_modules(info.meta.modules, info.meta.sysroot);
    }
    w.set_areas(info.meta.areas);
    w.set_thread_names(info.meta.thread_names);
    let summary = w.commit()?;
    let r = WriteReport {
        sampler: spec.to_string(),
        classes: classes.to_string(),
        output: out.clone(),
        events: seen,
        samples,
        mean_interval: spec.mean_interval(),
        file_bytes: summary.file_bytes,
    };
    let text = if a.json {
        serde_json::to_string_pretty(&r)?
    } else {
        format!(
            "sampled {} of {} events ({}) with {} into {} ({} bytes)",
            thousands(samples),
            thousands(seen),
            classes,
            spec,
            crate::output::trace_name(out),
            thousands(summary.file_bytes)
        )
    };
    crate::output::print_summary(out, &text);
    Ok(())
}

fn eval(a: &Args, spec: SamplerSpec, sampler: coprof_brr::AnySampler) -> anyhow::Result<()> {
    crate::job::run_one(&a.input, a.json, Box::new(eval_job(a, spec, sampler)))
}

/// `sample --eval` or `sample --sweep` with `a`'s options as a [`Job`].
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    if a.sweep {
        return super::sample_sweep::prepare(a);
    }
    if !a.eval {
        return Err(bad_input(
            "writing a sampled trace (-o) is not a report; use --eval in a profile",
        ));
    }
    let (spec, sampler) = sampler_of(a)?;
    refuse_sweep_lists(a)?;
    Ok(Box::new(eval_job(a, spec, sampler)))
}

fn eval_job(a: &Args, spec: SamplerSpec, sampler: coprof_brr::AnySampler) -> EvalJob {
    let classes = a.classes.unwrap_or(a.profile.default_classes());
    EvalJob {
        eval: SampleEval::new(sampler, classes, a.profile),
        spec,
        classes,
        kind: a.profile,
        top: a.top,
        name: a.input.name(),
    }
}

/// The error of an input with no event for the profile asked for.
pub(crate) fn no_events(input: &str, kind: ProfileKind, classes: ClassSet) -> anyhow::Error {
    bad_input(format!(
        "{input}: no events for a {} profile among the classes {classes} (the method profile \
         counts call events)",
        kind.name()
    ))
}

/// The full and the sampled profile, side by side.
pub struct EvalJob {
    eval: SampleEval<coprof_brr::AnySampler>,
    spec: SamplerSpec,
    classes: ClassSet,
    kind: ProfileKind,
    top: usize,
    name: String,
}

impl Job for EvalJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        &mut self.eval
    }

    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered> {
        let e = &self.eval;
        if e.full.is_empty() {
            return Err(no_events(&self.name, self.kind, self.classes));
        }
        let full_total: u64 = e.full.values().sum();
        let sampled_total: u64 = e.sampled.values().sum();
        let mut keys: Vec<(&u64, &u64)> = e.full.iter().collect();
        keys.sort_unstable_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        let share = |c: u64, t: u64| if t == 0 { 0.0 } else { c as f64 / t as f64 };
        let top = keys
            .iter()
            .take(self.top)
            .map(|(&k, &c)| {
                let s = e.sampled.get(&k).copied().unwrap_or(0);
                Entry {
                    key: format!("{k:#x}"),
                    full: c,
                    full_share: share(c, full_total),
                    sampled: s,
                    sampled_share: share(s, sampled_total),
                    place: info.symbols.as_ref().and_then(|sym| sym.place(k)),
                    area: crate::areas::of(info, k),
                }
            })
            .collect();
        let r = EvalReport {
            sampler: self.spec.to_string(),
            profile: self.kind,
            classes: self.classes.to_string(),
            events: e.seen,
            samples: e.samples,
            mean_interval: self.spec.mean_interval(),
            overlap: e.overlap(),
            keys_full: e.full.len(),
            keys_sampled: e.sampled.len(),
            missed_share: e.missed_share(),
            sampler_bytes: e.sampler().bytes(),
            top,
        };
        let mut out = String::new();
        crate::outln!(
            out,
            "sampler   {} (mean interval {})",
            r.sampler,
            r.mean_interval
        );
        crate::outln!(
            out,
            "profile   {} over classes {}",
            self.kind.name(),
            r.classes
        );
        crate::outln!(out, "events    {}", thousands(r.events));
        crate::outln!(out, "samples   {}", thousands(r.samples));
        crate::outln!(out, "overlap   {}", pct(r.overlap));
        crate::outln!(
            out,
            "keys      {} in the full profile, {} sampled; {} of the profile never sampled",
            thousands(r.keys_full as u64),
            thousands(r.keys_sampled as u64),
            pct(r.missed_share)
        );
        crate::outln!(out);
        let places = r.top.iter().any(|t| t.place.is_some() || t.area.is_some());
        crate::out!(
            out,
            "{:>18}  {:>14} {:>8}  {:>10} {:>8}",
            "key",
            "full",
            "share",
            "sampled",
            "share"
        );
        if places {
            crate::out!(out, "  where");
        }
        crate::outln!(out);
        for t in &r.top {
            crate::out!(
                out,
                "{:>18}  {:>14} {:>8}  {:>10} {:>8}",
                t.key,
                thousands(t.full),
                pct(t.full_share),
                thousands(t.sampled),
                pct(t.sampled_share)
            );
            if places {
                let place = crate::areas::or_mapping(t.place.clone(), t.area.as_deref());
                crate::out!(out, "  {}", place.unwrap_or_default());
            }
            crate::outln!(out);
        }
        Ok(Rendered {
            json: serde_json::to_value(&r)?,
            text: out,
        })
    }
}

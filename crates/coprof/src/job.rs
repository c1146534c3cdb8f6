//! A report computed in one pass over the input.
//!
//! Every report command (`loops`, `ranges`, `values`, `sample --eval`)
//! builds a [`Job`] from its options: the engines, attached to the input
//! as one sink, and what turns their state into the report afterwards.
//! `coprof loops FILE` runs one job; `coprof profile -- PROG` runs every
//! job in the same pass of the program, so that its reports are exactly
//! those of the single commands with the same options.

use crate::input::{InputArgs, InputInfo};
use crate::output::print_json;
use coprof_core::{Blocks, ClassSet, Event, Run, Sink};

/// A report in its two forms: the `--json` object and the text summary.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// What `--json` prints.
    pub json: serde_json::Value,
    /// What the command prints without `--json`.
    pub text: String,
}

/// Engines attached to one pass, and the report they make afterwards.
pub trait Job {
    /// The sink that receives the input's events.
    fn sink(&mut self) -> &mut (dyn Sink + Send);
    /// The same engines as several sinks, each to be fed the whole stream,
    /// so that a command running this job alone may feed them on threads
    /// of their own. By default the one [`sink`](Job::sink).
    fn sinks(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        vec![self.sink()]
    }
    /// The report, once every event has been delivered.
    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered>;
}

/// An engine and, with `--exact`, its exact counterpart: one sink that
/// feeds both the same stream. It takes runs of blocks only when both do.
pub struct WithExact<E, X> {
    /// The engine.
    pub engine: E,
    /// The exact counts, with `--exact`.
    pub exact: Option<X>,
}

impl<E: Sink, X: Sink> WithExact<E, X> {
    /// The engine and its sinks, each as a `&mut dyn Sink`.
    fn each(&mut self, mut f: impl FnMut(&mut dyn Sink)) {
        f(&mut self.engine);
        if let Some(x) = &mut self.exact {
            f(x);
        }
    }
}

impl<E: Sink, X: Sink> Sink for WithExact<E, X> {
    fn wants(&self) -> ClassSet {
        let w = self.engine.wants();
        self.exact.as_ref().map_or(w, |x| w.union(x.wants()))
    }
    fn observe(&mut self, batch: &[Event]) {
        self.each(|s| s.observe(batch));
    }
    fn finish(&mut self) {
        self.each(|s| s.finish());
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        let exact = self.exact.as_ref().map(|x| x as &dyn Sink);
        coprof_core::all_with_runs(std::iter::once(&self.engine as &dyn Sink).chain(exact))
    }
    fn runs_follow(&mut self) {
        self.each(|s| s.runs_follow());
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.each(|s| s.observe_runs(runs, blocks));
    }
    fn wants_thread_switches(&self) -> bool {
        self.engine.wants_thread_switches()
            || self
                .exact
                .as_ref()
                .is_some_and(|x| x.wants_thread_switches())
    }
    fn thread_switch(&mut self, tid: u64) {
        self.each(|s| s.thread_switch(tid));
    }
    fn wants_stacks(&self) -> bool {
        self.engine.wants_stacks() || self.exact.as_ref().is_some_and(|x| x.wants_stacks())
    }
    fn stack(&mut self, calls: &[coprof_core::OpenCall]) {
        self.each(|s| s.stack(calls));
    }
}

/// Runs `job` over `input` and prints its report, as JSON or text. The
/// JSON holds the notes the run gave (`notes`, when there were any),
/// which a script reading it would not find on standard error.
pub fn run_one(input: &InputArgs, json: bool, mut job: Box<dyn Job>) -> anyhow::Result<()> {
    let info = input.run_sinks(job.sinks())?;
    let r = job.finish(&info)?;
    if json {
        let mut report = r.json;
        let notes = crate::notes::kept();
        if let (false, Some(object)) = (notes.is_empty(), report.as_object_mut()) {
            object.insert("notes".into(), notes.into());
        }
        print_json(&report)
    } else {
        print!("{}", r.text);
        Ok(())
    }
}

/// Builds a command's arguments from an argument list, as if typed after
/// `coprof`: how `coprof profile` gets each engine's defaults from the same
/// declarations as the command itself.
pub fn parse_args<T: clap::Args + clap::FromArgMatches>(argv: &[String]) -> anyhow::Result<T> {
    let cmd = T::augment_args(clap::Command::new("coprof").no_binary_name(true));
    let m = cmd
        .try_get_matches_from(argv)
        .map_err(|e| crate::error::bad_input(e.to_string()))?;
    T::from_arg_matches(&m).map_err(|e| crate::error::bad_input(e.to_string()))
}

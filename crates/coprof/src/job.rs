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
use coprof_core::Sink;

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
    fn sink(&mut self) -> &mut dyn Sink;
    /// The report, once every event has been delivered.
    fn finish(self: Box<Self>, info: &InputInfo) -> anyhow::Result<Rendered>;
}

/// Runs `job` over `input` and prints its report, as JSON or text.
pub fn run_one(input: &InputArgs, json: bool, mut job: Box<dyn Job>) -> anyhow::Result<()> {
    let info = input.run(job.sink())?;
    let r = job.finish(&info)?;
    if json {
        print_json(&r.json)
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

//! One module per subcommand: its arguments and what it runs.

pub mod bench;
pub mod demo;
pub mod export;
pub mod gen;
pub mod info;
pub mod loops;
pub mod profile;
pub mod ranges;
pub mod ranges_sweep;
pub mod record;
pub mod run;
pub mod sample;
pub mod sample_sweep;
pub mod values;
pub mod values_sweep;

//! One module per subcommand: its arguments and what it runs.

pub mod demo;
pub mod gen;
pub mod info;
pub mod run;

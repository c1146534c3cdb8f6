//! Progress on a terminal for long runs; silence when stderr is piped.

use coprof_core::{ClassSet, Event, Sink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar, or nothing when stderr is not a terminal.
pub fn bar(total: u64, unit: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = if total > 0 {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    };
    let template = if total > 0 {
        format!("{{bar:40}} {{human_pos}}/{{human_len}} {unit} ({{per_sec}}, eta {{eta}})")
    } else {
        format!("{{spinner}} {{human_pos}} {unit} ({{per_sec}})")
    };
    pb.set_style(ProgressStyle::with_template(&template).expect("valid template"));
    Some(pb)
}

/// A sink that passes everything to another and advances a progress bar.
pub struct ProgressSink<'a> {
    inner: &'a mut dyn Sink,
    bar: Option<ProgressBar>,
    pending: u64,
}

impl<'a> ProgressSink<'a> {
    /// Wraps `inner`; `total` is the expected event count (0 if unknown).
    pub fn new(inner: &'a mut dyn Sink, total: u64, unit: &str) -> ProgressSink<'a> {
        ProgressSink {
            inner,
            bar: bar(total, unit),
            pending: 0,
        }
    }

    /// Clears the bar.
    pub fn done(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Sink for ProgressSink<'_> {
    fn wants(&self) -> ClassSet {
        self.inner.wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        self.inner.observe(batch);
        if let Some(b) = &self.bar {
            self.pending += batch.len() as u64;
            if self.pending >= 1 << 16 {
                b.inc(self.pending);
                self.pending = 0;
            }
        }
    }
    fn finish(&mut self) {
        self.inner.finish();
    }
}

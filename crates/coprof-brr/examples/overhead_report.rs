//! Turns the results of `cargo bench -p coprof-brr --bench overhead` into
//! the tables of docs/PERFORMANCE.md (printed as Markdown) and the plot
//! docs/sampling-overhead.svg.
//!
//! Reads criterion's medians (target/criterion/overhead/*/*/new/estimates.json)
//! and the interleaved pass (target/coprof-brr-overhead/interleaved.csv).
//! The framework cost of a sampler at interval N is its per-site time less
//! the uninstrumented time and less 1/N of the instrumentation's own cost:
//! t(N) − t(none) − (t(full) − t(none))/N (Lee & Zilles, CGO 2008, §5.3).
//!
//! Run: `cargo run -p coprof-brr --example overhead_report`

use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Characters per kernel run (the bench's input size).
const CHARS: f64 = 500_000.0;
const SAMPLED: [&str; 4] = ["counter", "brr", "brr-thread-local", "geometric"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Criterion's median ns per site of one benchmark.
fn criterion_median(name: &str, log2: u32) -> Option<f64> {
    let p = root().join(format!(
        "target/criterion/overhead/{name}/{log2}/new/estimates.json"
    ));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).ok()?).ok()?;
    Some(v["median"]["point_estimate"].as_f64()? / CHARS)
}

/// (ns, ticks) per site from the interleaved pass, by (variant, log2).
type Medians = BTreeMap<(String, u32), (f64, Option<f64>)>;

fn interleaved() -> Result<Medians, String> {
    let p = root().join("target/coprof-brr-overhead/interleaved.csv");
    let text = std::fs::read_to_string(&p)
        .map_err(|e| format!("{}: {e} (run the overhead bench first)", p.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || format!("{}:{}: malformed line '{line}'", p.display(), n + 1);
        if f.len() != 4 {
            return Err(bad());
        }
        let log2: u32 = f[1].parse().map_err(|_| bad())?;
        let ns: f64 = f[2].parse().map_err(|_| bad())?;
        let ticks = if f[3].is_empty() {
            None
        } else {
            Some(f[3].parse::<f64>().map_err(|_| bad())?)
        };
        out.insert((f[0].to_string(), log2), (ns, ticks));
    }
    Ok(out)
}

fn fmt(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.2}"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let il = interleaved()?;
    let get = |v: &str, l: u32| il.get(&(v.to_string(), l)).copied();
    let (none, none_t) = get("none", 0).ok_or("no 'none' row")?;
    let (full, full_t) = get("full", 0).ok_or("no 'full' row")?;

    println!("Per-site cost, ns (interleaved median; criterion median in parentheses):\n");
    println!("| interval | none | full | counter | brr (LFSR) | brr (thread-local) | geometric |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for l in 1..=16u32 {
        let mut row = format!(
            "| 2^{l} | {:.2} ({}) | {:.2} ({}) |",
            none,
            fmt(criterion_median("none", 0)),
            full,
            fmt(criterion_median("full", 0))
        );
        for v in SAMPLED {
            row.push_str(&format!(
                " {} ({}) |",
                fmt(get(v, l).map(|x| x.0)),
                fmt(criterion_median(v, l))
            ));
        }
        println!("{row}");
    }

    if let (Some(nt), Some(ft)) = (none_t, full_t) {
        println!(
            "\nPer-site cost, time-stamp-counter ticks (interleaved median; none {nt:.2}, full {ft:.2}):\n"
        );
        println!("| interval | counter | brr (LFSR) | brr (thread-local) | geometric |");
        println!("|---:|---:|---:|---:|---:|");
        for l in 1..=16u32 {
            let mut row = format!("| 2^{l} |");
            for v in SAMPLED {
                row.push_str(&format!(" {} |", fmt(get(v, l).and_then(|x| x.1))));
            }
            println!("{row}");
        }
    }

    println!("\nFramework cost per site, ns: t(N) − t(none) − (t(full) − t(none))/N (interleaved medians):\n");
    println!("| interval | counter | brr (LFSR) | brr (thread-local) | geometric | geometric ≤ counter | brr ≤ 2 × counter |");
    println!("|---:|---:|---:|---:|---:|:---:|:---:|");
    let framework =
        |v: &str, l: u32| get(v, l).map(|(t, _)| t - none - (full - none) / (1u64 << l) as f64);
    for l in 1..=16u32 {
        let c = framework("counter", l).unwrap_or(f64::NAN);
        let b = framework("brr", l).unwrap_or(f64::NAN);
        let g = framework("geometric", l).unwrap_or(f64::NAN);
        // Differences below 0.05 ns are within the timer's resolution here.
        let ok = |x: bool| if x { "yes" } else { "no" };
        println!(
            "| 2^{l} | {c:.2} | {b:.2} | {} | {g:.2} | {} | {} |",
            fmt(framework("brr-thread-local", l)),
            ok(g <= c + 0.05),
            ok(b <= 2.0 * c.max(0.0) + 0.05)
        );
    }

    // The plot: ns per site against the interval.
    let out = root().join("docs/sampling-overhead.svg");
    let top = il.values().map(|x| x.0).fold(full, f64::max) * 1.1;
    let area = SVGBackend::new(&out, (900, 540)).into_drawing_area();
    area.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(
            "Sampled instrumentation: cost per site (500k-character kernel)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(1u32..16u32, 0f64..top)?;
    chart
        .configure_mesh()
        .x_desc("sampling interval (log2)")
        .y_desc("ns per site")
        .draw()?;
    let colors = [BLUE, RED, MAGENTA, GREEN];
    for (v, color) in SAMPLED.iter().zip(colors) {
        let pts: Vec<(u32, f64)> = (1..=16)
            .filter_map(|l| get(v, l).map(|x| (l, x.0)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(*v)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    for (name, y, color) in [("none", none, BLACK), ("full", full, CYAN)] {
        chart
            .draw_series(LineSeries::new(
                vec![(1, y), (16, y)],
                color.stroke_width(1),
            ))?
            .label(name)
            .legend(move |(x, yy)| PathElement::new(vec![(x, yy), (x + 18, yy)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    area.present()?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

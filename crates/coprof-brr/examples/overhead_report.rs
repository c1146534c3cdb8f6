//! Turns the results of `cargo bench -p coprof-brr --bench overhead` into
//! the tables of docs/PERFORMANCE.md (printed as Markdown) and the plot
//! docs/sampling-overhead.svg.
//!
//! Reads criterion's medians (target/criterion/overhead/*/*/new/estimates.json)
//! and the interleaved pass (target/coprof-brr-overhead/interleaved.csv).
//! The framework cost of a sampler at interval N is its per-site time less
//! the uninstrumented time and less 1/N of the instrumentation's own cost:
//! t(N) − t(none) − (t(full) − t(none))/N (Lee & Zilles, CGO 2008, §5.3),
//! taken round by round in the interleaved pass (the bench computes it).
//!
//! Run: `cargo run -p coprof-brr --example overhead_report`

use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Characters per kernel run (the bench's input size).
const CHARS: f64 = 500_000.0;
/// The sampled configurations: the bench's name and the tables' title.
const SAMPLED: [(&str, &str); 5] = [
    ("counter", "counter"),
    ("brr", "brr (LFSR)"),
    ("brr-thread-local", "brr (thread-local)"),
    ("brr-skip", "brr (skip-ahead)"),
    ("geometric", "geometric"),
];

/// A table header: "| interval | counter | brr (LFSR) | … |" and its rule.
fn header(extra: &[String]) -> String {
    let titles: Vec<String> = SAMPLED
        .iter()
        .map(|(_, t)| t.to_string())
        .chain(extra.iter().cloned())
        .collect();
    format!(
        "| interval | {} |\n|---:|{}",
        titles.join(" | "),
        "---:|".repeat(titles.len())
    )
}

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

/// One configuration's medians from the interleaved pass, per site.
#[derive(Clone, Copy, Debug)]
struct Row {
    ns: f64,
    iqr: f64,
    /// Framework cost and its interquartile range (sampled rows only).
    framework: Option<(f64, f64)>,
    ticks: Option<f64>,
    cycles: Option<f64>,
}

/// The interleaved pass's rows, by (variant, log2).
type Medians = BTreeMap<(String, u32), Row>;

fn interleaved() -> Result<Medians, String> {
    let p = root().join("target/coprof-brr-overhead/interleaved.csv");
    let text = std::fs::read_to_string(&p)
        .map_err(|e| format!("{}: {e} (run the overhead bench first)", p.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || format!("{}:{}: malformed line '{line}'", p.display(), n + 1);
        if f.len() != 8 {
            return Err(bad());
        }
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad());
        let opt = |s: &str| {
            if s.is_empty() {
                Ok(None)
            } else {
                num(s).map(Some)
            }
        };
        let log2: u32 = f[1].parse().map_err(|_| bad())?;
        let row = Row {
            ns: num(f[2])?,
            iqr: num(f[3])?,
            framework: opt(f[4])?.zip(opt(f[5])?),
            ticks: opt(f[6])?,
            cycles: opt(f[7])?,
        };
        out.insert((f[0].to_string(), log2), row);
    }
    Ok(out)
}

fn fmt(x: Option<f64>, decimals: usize) -> String {
    x.map_or("–".into(), |v| format!("{v:.decimals$}"))
}

/// `a / b`, when both are above zero: a framework cost at or below zero
/// (the sampled loop as fast as the plain one, or faster by an accident of
/// code layout) has no meaningful ratio.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a > 0.0 && b > 0.0).then(|| a / b)
}

/// "2^a–2^b, 2^c" from a list of intervals' logarithms.
fn spans(l: &[u32]) -> String {
    if l.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    let mut start = l[0];
    for w in l
        .windows(2)
        .chain(std::iter::once(&[l[l.len() - 1], u32::MAX][..]))
    {
        if w[1] != w[0] + 1 {
            parts.push(if start == w[0] {
                format!("2^{start}")
            } else {
                format!("2^{start}–2^{}", w[0])
            });
            start = w[1];
        }
    }
    parts.join(", ")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let il = interleaved()?;
    let get = |v: &str, l: u32| il.get(&(v.to_string(), l)).copied();
    let none = get("none", 0).ok_or("no 'none' row")?;
    let full = get("full", 0).ok_or("no 'full' row")?;
    let has_cycles = il.values().any(|r| r.cycles.is_some());
    let has_ticks = il.values().any(|r| r.ticks.is_some());

    println!("Uninstrumented and fully instrumented kernel, per site (interleaved medians; criterion's median in parentheses):\n");
    println!("| kernel | ns | interquartile range, ns | TSC ticks | core cycles |");
    println!("|---|---:|---:|---:|---:|");
    for (name, r) in [("none", none), ("full", full)] {
        println!(
            "| {name} | {:.3} ({}) | {:.3} | {} | {} |",
            r.ns,
            fmt(criterion_median(name, 0), 3),
            r.iqr,
            fmt(r.ticks, 2),
            fmt(r.cycles, 2)
        );
    }

    println!("\nPer-site cost, ns (interleaved median; criterion's median in parentheses):\n");
    println!("{}", header(&[]));
    for l in 1..=16u32 {
        let mut row = format!("| 2^{l} |");
        for (v, _) in SAMPLED {
            row.push_str(&format!(
                " {} ({}) |",
                fmt(get(v, l).map(|x| x.ns), 3),
                fmt(criterion_median(v, l), 3)
            ));
        }
        println!("{row}");
    }
    let iqr = |ls: std::ops::RangeInclusive<u32>| {
        let mut x: Vec<f64> = ls
            .flat_map(|l| SAMPLED.iter().filter_map(move |(v, _)| get(v, l)))
            .map(|r| r.iqr)
            .collect();
        x.sort_by(|a, b| a.total_cmp(b));
        (x[x.len() / 2], x[x.len() - 1])
    };
    let (med_iqr, max_iqr) = iqr(1..=16);
    println!(
        "\nInterquartile range of the rounds, sampled configurations: median {med_iqr:.3} ns, largest {max_iqr:.3} ns."
    );

    if has_ticks || has_cycles {
        let what = match (has_ticks, has_cycles) {
            (true, true) => "time-stamp-counter ticks / core cycles",
            (true, false) => "time-stamp-counter ticks",
            _ => "core cycles",
        };
        println!("\nPer-site cost, {what} (interleaved medians):\n");
        println!("{}", header(&[]));
        for l in 1..=16u32 {
            let mut row = format!("| 2^{l} |");
            for (v, _) in SAMPLED {
                let r = get(v, l);
                let cell = match (has_ticks, has_cycles) {
                    (true, true) => format!(
                        "{} / {}",
                        fmt(r.and_then(|x| x.ticks), 2),
                        fmt(r.and_then(|x| x.cycles), 2)
                    ),
                    (true, false) => fmt(r.and_then(|x| x.ticks), 2),
                    _ => fmt(r.and_then(|x| x.cycles), 2),
                };
                row.push_str(&format!(" {cell} |"));
            }
            println!("{row}");
        }
    }
    if !has_cycles {
        println!(
            "\nCore cycles: not readable on this machine (the bench says why on standard error)."
        );
    }

    println!("\nFramework cost per site, ns: t(N) − t(none) − (t(full) − t(none))/N, each round's own difference, median over the rounds (interquartile range in parentheses), and its ratio to the counter's:\n");
    let others = &SAMPLED[1..];
    let ratios: Vec<String> = others
        .iter()
        .map(|(_, t)| format!("{t} / counter"))
        .collect();
    println!("{}", header(&ratios));
    let framework = |v: &str, l: u32| get(v, l).and_then(|r| r.framework);
    // Per other sampler, the intervals where it meets its target: ≤ the
    // counter's framework cost for geometric, ≤ 2× for brr.
    let bound = |v: &str| if v == "geometric" { 1.0 } else { 2.0 };
    let mut met: Vec<Vec<u32>> = vec![Vec::new(); others.len()];
    for l in 1..=16u32 {
        let cell =
            |v: &str| framework(v, l).map_or("–".into(), |(m, q)| format!("{m:.3} ({q:.3})"));
        let med = |v: &str| framework(v, l).map_or(f64::NAN, |x| x.0);
        let c = med("counter");
        let mut row = format!("| 2^{l} |");
        for (v, _) in SAMPLED {
            row.push_str(&format!(" {} |", cell(v)));
        }
        for (i, (v, _)) in others.iter().enumerate() {
            if med(v) <= bound(v) * c {
                met[i].push(l);
            }
            row.push_str(&format!(" {} |", fmt(ratio(med(v), c), 2)));
        }
        println!("{row}");
    }
    println!("\n(–: a cost at or below zero, whose ratio means nothing.)");
    println!("\nTargets, interval by interval (medians compared):\n");
    for ((v, title), l) in others.iter().zip(&met) {
        let what = if bound(v) == 1.0 {
            "≤ counter's".to_string()
        } else {
            format!("≤ {} × counter's", bound(v))
        };
        println!(
            "- {title} framework cost {what}: met at {} of 16 intervals ({})",
            l.len(),
            spans(l)
        );
    }

    plot(&il, none.ns, full.ns)?;
    Ok(())
}

/// docs/sampling-overhead.svg: ns per site against the interval, over all
/// intervals (logarithmic axis) and, enlarged, over the long ones.
fn plot(il: &Medians, none: f64, full: f64) -> Result<(), Box<dyn std::error::Error>> {
    let get = |v: &str, l: u32| il.get(&(v.to_string(), l)).map(|r| r.ns);
    let out = root().join("docs/sampling-overhead.svg");
    let area = SVGBackend::new(&out, (1100, 520)).into_drawing_area();
    area.fill(&WHITE)?;
    let (title, body) = area.split_vertically(36);
    title.titled(
        "Sampled instrumentation: cost per site, 500,000-character kernel (interleaved medians)",
        ("sans-serif", 20),
    )?;
    let (left, right) = body.split_horizontally(550);
    let colors = [BLUE, RED, MAGENTA, RGBColor(230, 140, 0), GREEN];
    let all = il.values().map(|r| r.ns);
    let lo = all.clone().fold(none, f64::min) * 0.9;
    let hi = all.fold(full, f64::max) * 1.1;
    // Left: every interval, logarithmic time axis.
    {
        let mut chart = ChartBuilder::on(&left)
            .caption("all intervals (log scale)", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                1u32..16u32,
                (lo..hi).log_scale().with_key_points(
                    [1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0]
                        .into_iter()
                        .filter(|k| (lo..=hi).contains(k))
                        .collect::<Vec<f64>>(),
                ),
            )?;
        chart
            .configure_mesh()
            .x_desc("sampling interval (log2)")
            .y_desc("ns per site")
            .y_label_formatter(&|y| format!("{y}"))
            .draw()?;
        for (&(v, title), color) in SAMPLED.iter().zip(colors) {
            let pts: Vec<(u32, f64)> = (1..=16).filter_map(|l| get(v, l).map(|y| (l, y))).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(title)
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
    }
    // Right: intervals 2^6 and longer, linear axis.
    {
        let long = || (6..=16u32).flat_map(|l| SAMPLED.iter().filter_map(move |(v, _)| get(v, l)));
        let lo = long().fold(none, f64::min);
        let hi = long().fold(full, f64::max);
        let pad = (hi - lo) * 0.1;
        let mut chart = ChartBuilder::on(&right)
            .caption("intervals 2^6 … 2^16 (linear scale)", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(6u32..16u32, (lo - pad)..(hi + pad))?;
        chart
            .configure_mesh()
            .x_desc("sampling interval (log2)")
            .y_desc("ns per site")
            .draw()?;
        for (&(v, _), color) in SAMPLED.iter().zip(colors) {
            let pts: Vec<(u32, f64)> = (6..=16).filter_map(|l| get(v, l).map(|y| (l, y))).collect();
            chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
        for (y, color) in [(none, BLACK), (full, CYAN)] {
            chart.draw_series(LineSeries::new(
                vec![(6, y), (16, y)],
                color.stroke_width(1),
            ))?;
        }
    }
    area.present()?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

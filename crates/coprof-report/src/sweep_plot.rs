//! A design-space sweep drawn as an SVG picture: every configuration by
//! its cost and its error, the front of those no other beats joined and
//! numbered, each number named in a list beside the chart.
//!
//! This is the picture an architect reads a sweep from (the loop cache
//! paper's Fig. 3 plots accuracy against size in the same way): the
//! front is what is worth building, and how steeply its error falls with
//! cost says what the next byte buys.

use plotters::prelude::*;

/// What a sweep's picture shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepPlot {
    /// The title above the chart.
    pub title: String,
    /// What the horizontal axis counts (`hardware bytes`, `samples`).
    pub cost: String,
    /// What the vertical axis counts (`1 − accuracy`, `weighted RMS error`).
    pub error: String,
    /// Every configuration's (cost, error).
    pub points: Vec<(f64, f64)>,
    /// The indices in `points` of the front, cheapest first.
    pub front: Vec<usize>,
    /// The name of each point of `front` (its options), in the same
    /// order: listed beside the chart under the number the chart shows.
    pub labels: Vec<String>,
    /// The error the sweep's answer must stay within, drawn as a line.
    pub max_error: Option<f64>,
}

/// Width and height of the picture, and the part the chart takes.
const SIZE: (u32, u32) = (1100, 560);
const CHART_WIDTH: u32 = 700;
/// Front points named in the list beside the chart; more are numbered
/// on the chart alone.
const LISTED: usize = 30;

/// Whether costs from `lo` to `hi` are drawn on a logarithmic axis: when
/// they span a factor of ten or more, as a grid of sizes in powers of two
/// does.
fn log_axis(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo >= 10.0
}

/// The SVG text of `p`. Fails on a plot with no points, or one whose
/// front does not index its points or has not one label per point.
pub fn svg(p: &SweepPlot) -> Result<String, String> {
    if p.points.is_empty() {
        return Err("a sweep with no configuration has nothing to draw".into());
    }
    if p.front.len() != p.labels.len() || p.front.iter().any(|&i| i >= p.points.len()) {
        return Err("the front must index the points and have one label each".into());
    }
    let mut out = String::new();
    draw(p, &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

fn draw<'a>(p: &SweepPlot, out: &'a mut String) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let area = SVGBackend::with_string(out, SIZE).into_drawing_area();
    area.fill(&WHITE)?;
    let (title, body) = area.split_vertically(40);
    title.titled(&p.title, ("sans-serif", 18))?;
    let (left, right) = body.split_horizontally(CHART_WIDTH);

    let costs = p.points.iter().map(|q| q.0);
    let (lo, hi) = (
        costs.clone().fold(f64::MAX, f64::min),
        costs.fold(0.0, f64::max),
    );
    // The errors' range; the target's line is drawn when it lies within
    // half as much again, and else named beside the chart, so that a
    // target far above every point does not flatten them.
    let worst = p.points.iter().map(|q| q.1).fold(0.0, f64::max);
    let target = p.max_error.filter(|&e| e <= worst * 1.5);
    let top = worst.max(target.unwrap_or(0.0)).max(f64::MIN_POSITIVE) * 1.08;
    let front: Vec<(f64, f64)> = p.front.iter().map(|&i| p.points[i]).collect();
    let blue = RGBColor(31, 90, 180);
    if log_axis(lo, hi) {
        let mut chart = ChartBuilder::on(&left)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((lo / 1.3..hi * 1.3).log_scale(), 0.0..top)?;
        chart
            .configure_mesh()
            .x_desc(format!("{} (log scale)", p.cost))
            .y_desc(&p.error)
            .x_label_formatter(&|x| short(*x))
            .y_label_formatter(&|y| short_error(*y))
            .draw()?;
        series(&mut chart, p, &front, target, (lo / 1.3, hi * 1.3), blue)?;
    } else {
        let pad = ((hi - lo) * 0.05).max(1.0);
        let mut chart = ChartBuilder::on(&left)
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((lo - pad).max(0.0)..hi + pad, 0.0..top)?;
        chart
            .configure_mesh()
            .x_desc(&p.cost)
            .y_desc(&p.error)
            .x_label_formatter(&|x| short(*x))
            .y_label_formatter(&|y| short_error(*y))
            .draw()?;
        let x = ((lo - pad).max(0.0), hi + pad);
        series(&mut chart, p, &front, target, x, blue)?;
    }

    let style = ("sans-serif", 13).into_font().color(&BLACK);
    right.draw(&Text::new(
        format!(
            "{} configurations; the front ({}), cheapest first:",
            p.points.len(),
            p.front.len()
        ),
        (8, 24),
        style.clone(),
    ))?;
    for (n, label) in p.labels.iter().enumerate().take(LISTED) {
        let (cost, error) = front[n];
        let line = format!(
            "{:>2}. {label}: {}, {}",
            n + 1,
            grouped(cost),
            short_error(error)
        );
        right.draw(&Text::new(line, (8, 46 + 15 * n as i32), style.clone()))?;
    }
    let mut below = 46 + 15 * p.labels.len().min(LISTED) as i32;
    if p.labels.len() > LISTED {
        let more = format!("… and {} more (--json lists them)", p.labels.len() - LISTED);
        right.draw(&Text::new(more, (8, below), style.clone()))?;
        below += 15;
    }
    if let Some(e) = p.max_error {
        let line = match target {
            Some(_) => format!("target: error at most {} (dashed)", short_error(e)),
            None => format!(
                "target: error at most {}, above every point",
                short_error(e)
            ),
        };
        right.draw(&Text::new(line, (8, below + 8), style))?;
    }
    area.present()?;
    Ok(())
}

/// The points, the front joined and numbered, and the `target` error's
/// line, on a chart whose costs run over `x`.
fn series<'a, X, DB>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
    p: &SweepPlot,
    front: &[(f64, f64)],
    target: Option<f64>,
    x: (f64, f64),
    blue: RGBColor,
) -> Result<(), Box<dyn std::error::Error + 'a>>
where
    X: Ranged<ValueType = f64>,
    DB: DrawingBackend + 'a,
{
    let grey = RGBColor(150, 150, 150);
    chart.draw_series(p.points.iter().map(|&q| Circle::new(q, 3, grey.filled())))?;
    if let Some(e) = target {
        chart.draw_series(DashedLineSeries::new(
            vec![(x.0, e), (x.1, e)],
            6,
            4,
            RED.stroke_width(1),
        ))?;
    }
    chart.draw_series(LineSeries::new(front.to_vec(), blue.stroke_width(2)))?;
    chart.draw_series(front.iter().map(|&q| Circle::new(q, 4, blue.filled())))?;
    chart.draw_series(front.iter().enumerate().map(|(n, &q)| {
        EmptyElement::at(q)
            + Text::new(
                format!("{}", n + 1),
                (5, -14),
                ("sans-serif", 11).into_font().color(&blue),
            )
    }))?;
    Ok(())
}

/// A cost in few characters: `1,536`, `24K`, `1.5M`.
fn short(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{:.3}M", x / 1e6)
            .replace(".000M", "M")
            .replace("00M", "M")
    } else if a >= 1e4 {
        format!("{:.0}K", x / 1e3)
    } else if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// A cost in full, a whole number with its thousands grouped (`12,452`).
fn grouped(x: f64) -> String {
    if x.fract() != 0.0 || x.abs() >= 1e15 {
        return format!("{x}");
    }
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// An error as a percentage.
fn short_error(e: f64) -> String {
    format!("{:.2}%", e * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot(points: Vec<(f64, f64)>, front: Vec<usize>) -> SweepPlot {
        let labels = front.iter().map(|i| format!("config {i}")).collect();
        SweepPlot {
            title: "a sweep".into(),
            cost: "bytes".into(),
            error: "error".into(),
            points,
            front,
            labels,
            max_error: Some(0.05),
        }
    }

    #[test]
    fn every_point_is_drawn_and_the_front_is_joined_numbered_and_listed() {
        let points = vec![(64.0, 0.2), (128.0, 0.1), (256.0, 0.12), (1024.0, 0.01)];
        let s = svg(&plot(points, vec![0, 1, 3])).unwrap();
        assert!(s.starts_with("<svg"), "{s}");
        // Four points, and the front's three again on top.
        assert_eq!(s.matches("<circle").count(), 4 + 3);
        // The front is one line through its three points, and the error
        // line is dashed red.
        let front: Vec<&str> = s
            .lines()
            .filter(|l| l.contains("stroke=\"#1F5AB4\" stroke-width=\"2\""))
            .collect();
        assert_eq!(front.len(), 1, "{s}");
        assert_eq!(front[0].matches(',').count(), 3, "{}", front[0]);
        assert!(s.contains("stroke=\"#FF0000\""));
        for label in ["1. config 0: 64, 20.00%", "3. config 3: 1,024, 1.00%"] {
            assert!(s.contains(label), "{label} in {s}");
        }
        assert!(
            s.contains("(log scale)"),
            "costs over 16x are on a log axis"
        );
        assert!(s.contains("4 configurations; the front (3)"));
    }

    #[test]
    fn a_target_far_above_every_point_is_named_not_drawn() {
        let mut p = plot(vec![(64.0, 0.002), (128.0, 0.001)], vec![0, 1]);
        p.max_error = Some(0.02);
        let s = svg(&p).unwrap();
        assert!(!s.contains("stroke=\"#FF0000\""), "no line");
        assert!(s.contains("target: error at most 2.00%, above every point"));
        p.max_error = Some(0.0025);
        let s = svg(&p).unwrap();
        assert!(s.contains("stroke=\"#FF0000\""));
        assert!(s.contains("target: error at most 0.25% (dashed)"));
    }

    #[test]
    fn costs_within_a_factor_of_ten_are_on_a_linear_axis() {
        let s = svg(&plot(vec![(100.0, 0.2), (300.0, 0.1)], vec![0, 1])).unwrap();
        assert!(!s.contains("(log scale)"));
        assert_eq!(s.matches("<circle").count(), 4);
    }

    #[test]
    fn a_long_front_lists_its_first_points_and_says_how_many_more() {
        let points: Vec<(f64, f64)> = (0..40)
            .map(|i| (f64::from(i + 1), 1.0 / f64::from(i + 1)))
            .collect();
        let s = svg(&plot(points, (0..40).collect())).unwrap();
        assert!(s.contains("30. config 29"));
        assert!(!s.contains("31. config 30"));
        assert!(s.contains("… and 10 more"));
    }

    #[test]
    fn costs_are_listed_in_full_and_drawn_short() {
        assert_eq!(grouped(12452.0), "12,452");
        assert_eq!(grouped(1_234_567.0), "1,234,567");
        assert_eq!(grouped(0.25), "0.25");
        assert_eq!(short(12452.0), "12K");
        assert_eq!(short(1_500_000.0), "1.5M");
        assert_eq!(short(640.0), "640");
    }

    #[test]
    fn nothing_to_draw_and_a_front_without_labels_are_refused() {
        assert!(svg(&plot(vec![], vec![])).is_err());
        let mut p = plot(vec![(1.0, 0.1)], vec![0]);
        p.labels.clear();
        assert!(svg(&p).is_err());
        assert!(svg(&plot(vec![(1.0, 0.1)], vec![3])).is_err());
    }
}

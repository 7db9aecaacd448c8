//! What all figures share: the embedded font, the RGB canvas, PNG encoding, number
//! formatting and colours.
//!
//! Figures are drawn into an in-memory RGB buffer and encoded with the `png` crate rather
//! than through plotters' `image`-based encoder: it keeps the dependency tree small,
//! lets the tests look at the very pixels that were written, and makes every failure
//! (font, drawing, file system, encoding) a [`PlotError`] naming the file.

use std::error::Error;
use std::fs;
use std::io::BufWriter;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::PlotError;

/// The drawing area of a whole figure.
pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;
/// Drawing errors are turned into a [`PlotError`] message at the top.
pub(crate) type DrawResult = Result<(), Box<dyn Error>>;

/// Size of single-panel figures.
pub(crate) const NORMAL: (u32, u32) = (1000, 600);
/// Size of the two-panel figure.
pub(crate) const WIDE: (u32, u32) = (1400, 600);

/// Font family name the embedded font is registered under (plotters' default family).
pub(crate) const FONT: &str = "sans-serif";
pub(crate) const TITLE_SIZE: f64 = 26.0;
pub(crate) const PANEL_TITLE_SIZE: f64 = 20.0;
pub(crate) const DESC_SIZE: f64 = 18.0;
pub(crate) const LABEL_SIZE: f64 = 15.0;

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Registers the embedded font with plotters once per process.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded DejaVu Sans font could not be loaded".into())
    }
}

/// Draws a figure of `size` with `draw` and returns its RGB pixels (3 bytes per pixel,
/// row by row). Any panic inside plotters is caught and reported as an error.
pub(crate) fn render_rgb(
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<Vec<u8>, String> {
    ensure_font()?;
    let mut buf = vec![255u8; size.0 as usize * size.1 as usize * 3];
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let root = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        draw(&root).map_err(|e| format!("drawing failed: {e}"))?;
        root.present().map_err(|e| e.to_string())
    }));
    match outcome {
        Ok(Ok(())) => Ok(buf),
        Ok(Err(e)) => Err(e),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("drawing failed: {what}"))
        }
    }
}

/// Writes RGB pixels as a PNG file, creating the parent directory if needed.
pub(crate) fn write_png(path: &Path, size: (u32, u32), rgb: &[u8]) -> Result<(), PlotError> {
    let err = |what: String| PlotError::new(path, what);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)
            .map_err(|e| err(format!("cannot create directory {}: {e}", dir.display())))?;
    }
    let file = fs::File::create(path).map_err(|e| err(format!("cannot create file: {e}")))?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder
        .write_header()
        .map_err(|e| err(format!("cannot write PNG header: {e}")))?;
    writer
        .write_image_data(rgb)
        .map_err(|e| err(format!("cannot write PNG data: {e}")))?;
    writer
        .finish()
        .map_err(|e| err(format!("cannot finish PNG: {e}")))
}

/// Renders a figure and writes it to `path`.
pub(crate) fn plot_to_file(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Area) -> DrawResult,
) -> Result<(), PlotError> {
    let rgb = render_rgb(size, draw).map_err(|e| PlotError::new(path, e))?;
    write_png(path, size, &rgb)
}

pub(crate) fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// The smallest a title gets to fit its figure's width.
const TITLE_SIZE_MIN: f64 = 12.0;

/// The figure title on top of `area`; returns the area below it. A title too wide for
/// the figure at [`TITLE_SIZE`] is set smaller (down to [`TITLE_SIZE_MIN`]) rather than
/// cut off at both edges: a caption that says what a figure is drawn from must be read
/// whole.
pub(crate) fn titled<'a>(area: &Area<'a>, title: &str) -> Result<Area<'a>, Box<dyn Error>> {
    if title.is_empty() {
        return Ok(area.clone());
    }
    let size = title_size(area, title)?;
    Ok(area.margin(8, 0, 0, 0).titled(title, font(size))?)
}

/// The largest font size up to [`TITLE_SIZE`] at which `title` fits `area`'s width
/// with a margin of 10 pixels on each side.
fn title_size(area: &Area, title: &str) -> Result<f64, Box<dyn Error>> {
    let room = area.dim_in_pixel().0.saturating_sub(20);
    let mut size = TITLE_SIZE;
    while size > TITLE_SIZE_MIN && area.estimate_text_size(title, &font(size))?.0 > room {
        size -= 1.0;
    }
    Ok(size)
}

/// Writes `text` centred in `area` (the "no data" placeholder).
pub(crate) fn centred_text(area: &Area, text: &str, size: f64) -> DrawResult {
    let (w, h) = area.dim_in_pixel();
    let style = font(size)
        .color(&RGBColor(110, 110, 110))
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(
        text.to_string(),
        (w as i32 / 2, h as i32 / 2),
        style,
    ))?;
    Ok(())
}

/// A whole figure that only says "no data" under its title.
pub(crate) fn no_data(root: &Area, title: &str) -> DrawResult {
    let area = titled(root, title)?;
    centred_text(&area, "no data", 32.0)
}

/// Colours of successive series / groups (matplotlib's "tab10", familiar from papers).
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `c` mixed with white: an opaque light fill (the bitmap has no use for alpha).
pub(crate) fn light(c: RGBColor, amount: f64) -> RGBColor {
    let mix = |v: u8| (v as f64 * amount + 255.0 * (1.0 - amount)).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// Axis tick text: short, without float noise (0.30000000000000004 → "0.3"), with SI
/// suffixes from ten thousand on (25000 → "25k", 2000000 → "2M", as throughput figures
/// write them) and scientific notation for very large or very small magnitudes.
pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            format!("{v}")
        };
    }
    // Rounded to four significant digits first, so that 999999 becomes "1M", not "1000k".
    let v: f64 = format!("{v:.3e}").parse().unwrap_or(v);
    let a = v.abs();
    if !(1e-3..1e15).contains(&a) {
        let s = format!("{v:.2e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        return format!("{}e{exp}", trim_zeros(mantissa));
    }
    for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if a >= scale * 10.0 || (a >= scale && scale >= 1e6) {
            return format!("{}{suffix}", plain(v / scale));
        }
    }
    plain(v)
}

/// About four significant digits, trailing zeros trimmed.
fn plain(v: f64) -> String {
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = trim_zeros(&format!("{v:.decimals$}")).to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `[lo, hi]` with a margin of `frac` of its width on both sides (a unit-ish span around
/// a single value).
pub(crate) fn padded(lo: f64, hi: f64, frac: f64) -> (f64, f64) {
    if hi > lo {
        let m = (hi - lo) * frac;
        (lo - m, hi + m)
    } else {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - d, hi + d)
    }
}

/// `[lo, hi]` (both > 0) widened by a factor for a logarithmic axis.
pub(crate) fn padded_log(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        let f = (hi / lo).powf(0.04).max(1.05);
        (lo / f, hi * f)
    } else {
        (lo / 2.0, hi * 2.0)
    }
}

/// Shortens `text` with "…" until it fits `max_width` pixels in `style`.
pub(crate) fn fit_text(area: &Area, text: &str, style: &TextStyle, max_width: u32) -> String {
    let width = |s: &str| {
        area.estimate_text_size(s, style)
            .map(|(w, _)| w)
            .unwrap_or(0)
    };
    if width(text) <= max_width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    for keep in (1..chars.len()).rev() {
        let s: String = chars[..keep].iter().chain(std::iter::once(&'…')).collect();
        if width(&s) <= max_width {
            return s;
        }
    }
    "…".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.1 + 0.2), "0.3");
        assert_eq!(fmt_num(1500.0), "1500");
        assert_eq!(fmt_num(12.5), "12.5");
        assert_eq!(fmt_num(-0.25), "-0.25");
        assert_eq!(fmt_num(9999.0), "9999");
        assert_eq!(fmt_num(25_000.0), "25k");
        assert_eq!(fmt_num(999_999.0), "1M");
        assert_eq!(fmt_num(123_456.0), "123.5k");
        assert_eq!(fmt_num(1e6), "1M");
        assert_eq!(fmt_num(2.5e6), "2.5M");
        assert_eq!(fmt_num(1e7), "10M");
        assert_eq!(fmt_num(-3e9), "-3G");
        assert_eq!(fmt_num(2.5e-5), "2.5e-5");
        assert_eq!(fmt_num(1e20), "1e20");
    }

    #[test]
    fn long_titles_are_set_smaller_to_fit() {
        let short = "Figure 4.3-like: latency";
        let long = "Figure 4.2(a)-like: message lengths, run 1A (inproc, json) (drawn from a \
                    proportional sample of 1,002,097 of 43,308,919 messages; the table counts all)";
        let mut sizes = (0.0, 0.0);
        render_rgb(NORMAL, |root| {
            sizes = (title_size(root, short)?, title_size(root, long)?);
            let fits = root.estimate_text_size(long, &font(sizes.1))?.0;
            assert!(fits <= NORMAL.0 - 20, "{fits} px");
            Ok(())
        })
        .unwrap();
        assert_eq!(sizes.0, TITLE_SIZE);
        assert!(
            sizes.1 < TITLE_SIZE && sizes.1 >= TITLE_SIZE_MIN,
            "{sizes:?}"
        );
    }

    #[test]
    fn renders_text_without_system_fonts() {
        let rgb = render_rgb((200, 100), |root| centred_text(root, "no data", 30.0)).unwrap();
        assert!(rgb.iter().any(|&b| b < 200), "text left no dark pixel");
    }

    #[test]
    fn panics_become_errors() {
        let e = render_rgb((10, 10), |_| panic!("boom")).unwrap_err();
        assert!(e.contains("boom"), "{e}");
    }
}

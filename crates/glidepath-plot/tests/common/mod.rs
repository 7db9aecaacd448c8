//! Helpers shared by the integration tests: a private output directory and a PNG
//! checker that reads the file back the way a viewer would.

#![allow(dead_code)]

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A path for a test's PNG in its own temporary directory, removed when dropped.
pub struct Out {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Deref for Out {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

/// A fresh path named `name` in a new temporary directory.
pub fn out(name: &str) -> Out {
    let dir = tempfile::Builder::new()
        .prefix("glidepath-plot-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(name);
    Out { _dir: dir, path }
}

/// A decoded RGB image.
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Image {
    pub fn pixel(&self, x: u32, y: u32) -> (u8, u8, u8) {
        let i = 3 * (y as usize * self.width as usize + x as usize);
        (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }

    /// Pixels in the rectangle given as fractions of the image that satisfy `pred`.
    pub fn count_in(
        &self,
        (x0, y0, x1, y1): (f64, f64, f64, f64),
        pred: impl Fn((u8, u8, u8)) -> bool,
    ) -> usize {
        let (w, h) = (self.width as f64, self.height as f64);
        let mut n = 0;
        for y in (y0 * h) as u32..(y1 * h) as u32 {
            for x in (x0 * w) as u32..(x1 * w) as u32 {
                n += pred(self.pixel(x, y)) as usize;
            }
        }
        n
    }
}

pub fn non_white(p: (u8, u8, u8)) -> bool {
    p != (255, 255, 255)
}

/// Close to the first palette colour (the blue of bars, first lines and first boxes).
pub fn blueish(p: (u8, u8, u8)) -> bool {
    p.2 > 150 && p.0 < 90 && p.1 > 90 && p.1 < 150
}

/// Checks the file is a PNG of the expected size (signature and IHDR read by hand) and
/// returns its decoded pixels.
pub fn check_png(path: &std::path::Path, width: u32, height: u32) -> Image {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("{} not written: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |r: std::ops::Range<usize>| u32::from_be_bytes(bytes[r].try_into().unwrap());
    assert_eq!(
        (be(16..20), be(20..24)),
        (width, height),
        "size of {}",
        path.display()
    );

    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut rgb = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut rgb).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    rgb.truncate(info.buffer_size());
    let image = Image { width, height, rgb };
    // White background: the corners are white.
    assert_eq!(image.pixel(0, height - 1), (255, 255, 255));
    assert_eq!(image.pixel(width - 1, height - 1), (255, 255, 255));
    image
}

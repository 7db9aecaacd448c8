//! The SNDEM track message (ATM TestBed report, section 3.3 and Table 4.1) and its two
//! serialisations: JSON exactly as the TestBed writes it, and compact binary.
//!
//! JSON is written field for field in the report's order with Java's `Double.toString`
//! number format (`6.0`, `-122.38169`, `1.0E7`) and `NaN` for missing numbers, so the
//! sample of Table 4.1 comes out byte for byte. The reader accepts that output, any
//! field order, whitespace, unknown fields (skipped) and missing numbers (NaN).

use std::borrow::Cow;

use glidepath_codec::{read_varint, write_varint, zigzag_decode, zigzag_encode, CodecError};

/// The metadata section of an SNDEM message.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TrackMeta {
    /// The publishing component, e.g. `ATAC Data.1`.
    pub src: String,
    /// The SNDEM format version, e.g. `2.3`.
    pub ver: String,
    /// The run name, e.g. `1A`.
    pub run: String,
    /// Publication time, milliseconds since the Unix epoch (T_P).
    pub tpub: i64,
}

/// One track: a vehicle's position and state at one time. Missing numbers are NaN.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Vehicle identifier (the callsign), also the message key.
    pub vid: String,
    /// Latitude in degrees (WGS 84).
    pub lat_deg: f64,
    /// Longitude in degrees (WGS 84).
    pub lon_deg: f64,
    /// Altitude in feet.
    pub alt_ft: f64,
    /// When the track was recorded, milliseconds since the Unix epoch.
    pub time: i64,
    /// Ground speed in knots.
    pub gs_kt: f64,
    /// Course over the ground in degrees from true north.
    pub crs_deg: f64,
    /// Vertical speed in feet per minute (NaN when the source has none).
    pub vs_fpm: f64,
    /// Who published the message, and when.
    pub meta: TrackMeta,
}

/// Equality that treats NaN as equal to NaN (missing equals missing), bit for bit.
impl PartialEq for Track {
    fn eq(&self, o: &Self) -> bool {
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        self.vid == o.vid
            && same(self.lat_deg, o.lat_deg)
            && same(self.lon_deg, o.lon_deg)
            && same(self.alt_ft, o.alt_ft)
            && self.time == o.time
            && same(self.gs_kt, o.gs_kt)
            && same(self.crs_deg, o.crs_deg)
            && same(self.vs_fpm, o.vs_fpm)
            && self.meta == o.meta
    }
}

const BINARY_VERSION: u8 = 1;

impl Track {
    /// The message key: the vehicle identifier.
    pub fn key(&self) -> &str {
        &self.vid
    }

    /// Writes the SNDEM JSON payload (without the key).
    ///
    /// Makes no allocation when `out` has room (about 220 bytes for a typical track).
    pub fn write_sndem_json(&self, out: &mut Vec<u8>) {
        out.reserve(
            self.vid.len() + self.meta.src.len() + self.meta.ver.len() + self.meta.run.len() + 256,
        );
        out.extend_from_slice(b"{\"vid\":");
        write_json_string(out, &self.vid);
        out.extend_from_slice(b",\"latDeg\":");
        write_java_double(out, self.lat_deg);
        out.extend_from_slice(b",\"lonDeg\":");
        write_java_double(out, self.lon_deg);
        out.extend_from_slice(b",\"altFt\":");
        write_java_double(out, self.alt_ft);
        out.extend_from_slice(b",\"time\":");
        write_i64(out, self.time);
        out.extend_from_slice(b",\"gsKt\":");
        write_java_double(out, self.gs_kt);
        out.extend_from_slice(b",\"crsDeg\":");
        write_java_double(out, self.crs_deg);
        out.extend_from_slice(b",\"vsFpm\":");
        write_java_double(out, self.vs_fpm);
        out.extend_from_slice(b",\"meta\":{\"src\":");
        write_json_string(out, &self.meta.src);
        out.extend_from_slice(b",\"ver\":");
        write_json_string(out, &self.meta.ver);
        out.extend_from_slice(b",\"run\":");
        write_json_string(out, &self.meta.run);
        out.extend_from_slice(b",\"tpub\":");
        write_i64(out, self.meta.tpub);
        out.extend_from_slice(b"}}");
    }

    /// The SNDEM JSON payload as a string.
    pub fn to_sndem_json(&self) -> String {
        let mut out = Vec::with_capacity(224);
        self.write_sndem_json(&mut out);
        String::from_utf8(out).expect("JSON output is UTF-8")
    }

    /// Reads an SNDEM JSON payload.
    pub fn from_sndem_json(input: &[u8]) -> Result<Track, CodecError> {
        let mut t = Track::default();
        t.read_sndem_json(input)?;
        Ok(t)
    }

    /// Reads an SNDEM JSON payload into this track, reusing its strings' memory (a
    /// receiver decoding millions of messages allocates nothing per message). Every
    /// field is overwritten: missing numbers become NaN, missing strings empty. On an
    /// error the track holds whatever was read before it.
    pub fn read_sndem_json(&mut self, input: &[u8]) -> Result<(), CodecError> {
        let mut p = JsonReader { input, pos: 0 };
        let nan = f64::NAN;
        let t = self;
        t.vid.clear();
        (t.lat_deg, t.lon_deg, t.alt_ft) = (nan, nan, nan);
        t.time = 0;
        (t.gs_kt, t.crs_deg, t.vs_fpm) = (nan, nan, nan);
        t.meta.src.clear();
        t.meta.ver.clear();
        t.meta.run.clear();
        t.meta.tpub = 0;
        let mut have_vid = false;
        let set = |s: &mut String, v: Cow<'_, str>| {
            s.clear();
            s.push_str(&v);
        };
        p.object(|p, key| {
            match key {
                b"vid" => {
                    set(&mut t.vid, p.string()?);
                    have_vid = true;
                }
                b"latDeg" => t.lat_deg = p.number()?,
                b"lonDeg" => t.lon_deg = p.number()?,
                b"altFt" => t.alt_ft = p.number()?,
                b"time" => t.time = p.integer()?,
                b"gsKt" => t.gs_kt = p.number()?,
                b"crsDeg" => t.crs_deg = p.number()?,
                b"vsFpm" => t.vs_fpm = p.number()?,
                b"meta" => p.object(|p, key| {
                    match key {
                        b"src" => set(&mut t.meta.src, p.string()?),
                        b"ver" => set(&mut t.meta.ver, p.string()?),
                        b"run" => set(&mut t.meta.run, p.string()?),
                        b"tpub" => t.meta.tpub = p.integer()?,
                        _ => p.skip_value()?,
                    }
                    Ok(())
                })?,
                _ => p.skip_value()?,
            }
            Ok(())
        })?;
        p.ws();
        if p.pos != input.len() {
            return Err(p.error("trailing characters after the message"));
        }
        if !have_vid {
            return Err(CodecError::Malformed("track message without `vid`".into()));
        }
        Ok(())
    }

    /// Writes the compact binary form: a version byte, strings as varint length plus
    /// UTF-8, times as zigzag varints, other numbers as little-endian IEEE 754 doubles.
    pub fn encode_binary(&self, out: &mut Vec<u8>) {
        out.push(BINARY_VERSION);
        put_str(out, &self.vid);
        for v in [self.lat_deg, self.lon_deg, self.alt_ft] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        write_varint(out, zigzag_encode(self.time));
        for v in [self.gs_kt, self.crs_deg, self.vs_fpm] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        put_str(out, &self.meta.src);
        put_str(out, &self.meta.ver);
        put_str(out, &self.meta.run);
        write_varint(out, zigzag_encode(self.meta.tpub));
    }

    /// Reads the compact binary form.
    pub fn decode_binary(input: &[u8]) -> Result<Track, CodecError> {
        let mut r = BinReader { input, pos: 0 };
        let version = r.byte()?;
        if version != BINARY_VERSION {
            return Err(CodecError::Malformed(format!(
                "binary track version {version}, expected {BINARY_VERSION}"
            )));
        }
        let vid = r.str()?;
        let (lat_deg, lon_deg, alt_ft) = (r.f64()?, r.f64()?, r.f64()?);
        let time = zigzag_decode(r.varint()?);
        let (gs_kt, crs_deg, vs_fpm) = (r.f64()?, r.f64()?, r.f64()?);
        let meta = TrackMeta {
            src: r.str()?,
            ver: r.str()?,
            run: r.str()?,
            tpub: zigzag_decode(r.varint()?),
        };
        if r.pos != input.len() {
            return Err(CodecError::Malformed(format!(
                "{} trailing bytes after a binary track",
                input.len() - r.pos
            )));
        }
        Ok(Track {
            vid,
            lat_deg,
            lon_deg,
            alt_ft,
            time,
            gs_kt,
            crs_deg,
            vs_fpm,
            meta,
        })
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    write_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

struct BinReader<'a> {
    input: &'a [u8],
    pos: usize,
}

impl BinReader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], CodecError> {
        if self.input.len() - self.pos < n {
            return Err(CodecError::Truncated);
        }
        let s = &self.input[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn byte(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    fn f64(&mut self) -> Result<f64, CodecError> {
        let b = self.take(8)?;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
    fn varint(&mut self) -> Result<u64, CodecError> {
        let (v, used) = read_varint(&self.input[self.pos..]).ok_or(CodecError::Truncated)?;
        self.pos += used;
        Ok(v)
    }
    fn str(&mut self) -> Result<String, CodecError> {
        let len = self.varint()?;
        if len > (self.input.len() - self.pos) as u64 {
            return Err(CodecError::Truncated);
        }
        let b = self.take(len as usize)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| CodecError::Malformed("string is not UTF-8".into()))
    }
}

/// Writes a double as Java's `Double.toString` does: at least one fraction digit,
/// plain notation for magnitudes in [1e-3, 1e7), `d.dddE±n` otherwise, and `NaN`,
/// `Infinity`, `-Infinity`.
///
/// The digits are the shortest that read back as `x` (what Rust's `Display` gives).
/// Most values are written without allocating through an exact fast path (a decimal of
/// at most 15 significant digits that reads back as `x` is the only such decimal, so
/// it is the shortest); the rest go through `Display` / `LowerExp` into a stack buffer.
pub fn write_java_double(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 {
            b"Infinity" as &[u8]
        } else {
            b"-Infinity"
        });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0" as &[u8]
        } else {
            b"0.0"
        });
        return;
    }
    let ax = x.abs();
    let plain = (1e-3..1e7).contains(&ax);
    match shortest_decimal(ax) {
        Some((m, e10)) => {
            if x.is_sign_negative() {
                out.push(b'-');
            }
            let mut buf = [0u8; 20];
            let digits = u64_digits(m, &mut buf);
            if plain {
                write_plain(out, digits, e10);
            } else {
                write_sci(out, digits, e10);
            }
        }
        None => write_java_double_fmt(out, x, plain),
    }
}

/// Exact powers of ten as doubles (10^22 is the largest exactly representable).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// For a finite positive `ax`, a decimal `m × 10^e10` with `m` of at most 15 digits
/// (and no trailing zero) that reads back exactly as `ax`, when there is one that can
/// be checked with a single correctly rounded operation.
///
/// Because 10^15 < 2^52, two different decimals of at most 15 significant digits
/// never round to the same double: the decimal found is the only one of 15 digits or
/// fewer, so it is exactly the shortest round-trip representation that `Display`
/// gives. The check `m / 10^d == ax` (or `m × 10^k == ax`) is exact because `m` and
/// `10^d` are exactly representable and IEEE division / multiplication round
/// correctly, like decimal-to-double parsing does.
fn shortest_decimal(ax: f64) -> Option<(u64, i32)> {
    const LIMIT: f64 = 1e15;
    let (mut m, mut e10) = if ax < LIMIT {
        let mut found = None;
        for (d, &p) in POW10.iter().enumerate() {
            let s = ax * p;
            if s >= LIMIT {
                break;
            }
            let r = s.round();
            // If `r × 10^-d` reads back as `ax`, `s` is within 2^-52·s of `r` (half an
            // ulp of `ax` scaled, plus the rounding of `s`): skip the division otherwise.
            if (s - r).abs() <= s * 1e-15 && r / p == ax {
                found = Some((r as u64, -(d as i32)));
                break;
            }
        }
        found?
    } else {
        // Large values: ax = m × 10^k with k ≥ 1.
        let mut found = None;
        for (k, &p) in POW10.iter().enumerate().skip(1) {
            let s = ax / p;
            if s >= LIMIT {
                continue;
            }
            let r = s.round();
            if r * p == ax {
                found = Some((r as u64, k as i32));
            }
            break;
        }
        found?
    };
    if m == 0 {
        return None;
    }
    while m % 10 == 0 {
        m /= 10;
        e10 += 1;
    }
    Some((m, e10))
}

/// The decimal digits of `m`, written at the end of `buf`.
fn u64_digits(mut m: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    &buf[i..]
}

/// `digits × 10^e10` in plain notation with at least one fraction digit, as
/// `Display` writes it followed by the `.0` Java adds to whole numbers.
fn write_plain(out: &mut Vec<u8>, digits: &[u8], e10: i32) {
    if e10 >= 0 {
        out.extend_from_slice(digits);
        for _ in 0..e10 {
            out.push(b'0');
        }
        out.extend_from_slice(b".0");
    } else {
        let frac = e10.unsigned_abs() as usize;
        if digits.len() > frac {
            let (int, rest) = digits.split_at(digits.len() - frac);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(rest);
        } else {
            out.extend_from_slice(b"0.");
            for _ in 0..frac - digits.len() {
                out.push(b'0');
            }
            out.extend_from_slice(digits);
        }
    }
}

/// `digits × 10^e10` as `d.dddE±n` (Java's computerized scientific notation).
fn write_sci(out: &mut Vec<u8>, digits: &[u8], e10: i32) {
    out.push(digits[0]);
    out.push(b'.');
    if digits.len() > 1 {
        out.extend_from_slice(&digits[1..]);
    } else {
        out.push(b'0');
    }
    out.push(b'E');
    write_i64(out, i64::from(e10) + digits.len() as i64 - 1);
}

/// The general path of [`write_java_double`] for finite non-zero `x`: `Display` or
/// `LowerExp` into a stack buffer, then Java's adjustments.
#[cold]
fn write_java_double_fmt(out: &mut Vec<u8>, x: f64, plain: bool) {
    use std::fmt::Write as _;
    let mut s = StackStr::default();
    if plain {
        write!(s, "{x}").expect("a double fits the buffer");
        let s = s.as_str();
        out.extend_from_slice(s.as_bytes());
        if !s.contains('.') {
            out.extend_from_slice(b".0");
        }
    } else {
        write!(s, "{x:e}").expect("a double fits the buffer");
        let (mantissa, exp) = s
            .as_str()
            .split_once('e')
            .expect("`{:e}` always has an exponent");
        out.extend_from_slice(mantissa.as_bytes());
        if !mantissa.contains('.') {
            out.extend_from_slice(b".0");
        }
        out.push(b'E');
        out.extend_from_slice(exp.as_bytes());
    }
}

/// A small fixed-capacity string for formatting one number without allocating.
struct StackStr {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackStr {
    fn default() -> Self {
        StackStr {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl StackStr {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).expect("only whole `str`s are written")
    }
}

impl std::fmt::Write for StackStr {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes an integer in decimal without allocating.
fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut buf = [0u8; 20];
    out.extend_from_slice(u64_digits(v.unsigned_abs(), &mut buf));
}

/// Whether a byte must be escaped in a JSON string as written here.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn write_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// `-?[0-9]+(\.[0-9]+)?` with at most 15 digits in all, read exactly: the digits
/// as an integer `m < 10^15` (exact in a double) divided by `10^f` (exact for
/// `f ≤ 22`), one correctly rounded division, so the same double `str::parse`
/// gives (Clinger's fast path). Anything else is `None`, for `str::parse`.
#[inline]
fn parse_simple_decimal(t: &[u8]) -> Option<f64> {
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    let mut m: u64 = 0;
    let mut n = 0usize;
    let mut frac: Option<usize> = None;
    for (i, &b) in digits.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                n += 1;
                if n > 15 {
                    return None;
                }
                m = m * 10 + u64::from(b - b'0');
            }
            b'.' if frac.is_none() && i > 0 && i + 1 < digits.len() => {
                frac = Some(digits.len() - i - 1)
            }
            _ => return None,
        }
    }
    if n == 0 {
        return None;
    }
    let v = m as f64 / POW10[frac.unwrap_or(0)];
    Some(if neg { -v } else { v })
}

/// `-?[0-9]{1,18}` (which cannot overflow an `i64`), as `str::parse` reads it; anything
/// else is `None`, for `str::parse`.
#[inline]
fn parse_simple_integer(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, t),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(b - b'0');
    }
    Some(if neg { -v } else { v })
}

/// A small JSON reader for the SNDEM shapes: objects, strings, numbers (with `NaN`
/// and `Infinity`, which standard JSON lacks), literals and arrays to skip.
///
/// Keys, number tokens and strings without escapes are borrowed from the input: the
/// only allocations of a parse are the strings the track keeps.
struct JsonReader<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> JsonReader<'a> {
    #[cold]
    fn error(&self, what: &str) -> CodecError {
        CodecError::Malformed(format!("SNDEM JSON at byte {}: {what}", self.pos))
    }
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.input.get(self.pos) {
            self.pos += 1;
        }
    }
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.input.get(self.pos).copied()
    }
    #[inline]
    fn expect(&mut self, c: u8) -> Result<(), CodecError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.expected(c))
        }
    }
    #[cold]
    fn expected(&self, c: u8) -> CodecError {
        self.error(&format!("expected `{}`", c as char))
    }
    fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &[u8]) -> Result<(), CodecError>,
    ) -> Result<(), CodecError> {
        self.expect(b'{')?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            field(self, &key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }
    /// A string, borrowed from the input unless it has escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, CodecError> {
        self.expect(b'"')?;
        let input = self.input;
        let start = self.pos;
        let len = input[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .unwrap_or(input.len() - start);
        self.pos = start + len;
        let chunk = std::str::from_utf8(&input[start..self.pos])
            .map_err(|_| self.error("string is not UTF-8"))?;
        match input.get(self.pos) {
            None => Err(self.error("unterminated string")),
            Some(b'"') => {
                self.pos += 1;
                Ok(Cow::Borrowed(chunk))
            }
            Some(_) => self.string_escaped(chunk.to_owned()).map(Cow::Owned),
        }
    }
    /// An object key: the bytes of a string (checked to be UTF-8 like any string),
    /// borrowed from the input unless it has escapes.
    fn key(&mut self) -> Result<Cow<'a, [u8]>, CodecError> {
        self.expect(b'"')?;
        let input = self.input;
        let start = self.pos;
        let len = input[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .unwrap_or(input.len() - start);
        self.pos = start + len;
        let chunk = &input[start..self.pos];
        if !chunk.is_ascii() && std::str::from_utf8(chunk).is_err() {
            return Err(self.error("string is not UTF-8"));
        }
        match input.get(self.pos) {
            None => Err(self.error("unterminated string")),
            Some(b'"') => {
                self.pos += 1;
                Ok(Cow::Borrowed(chunk))
            }
            Some(_) => {
                let chunk = std::str::from_utf8(chunk).expect("checked above");
                self.string_escaped(chunk.to_owned())
                    .map(|s| Cow::Owned(s.into_bytes()))
            }
        }
    }
    /// The rest of a string from a backslash at `pos`, appended to `out`.
    #[cold]
    fn string_escaped(&mut self, mut out: String) -> Result<String, CodecError> {
        loop {
            // Here `pos` is at a backslash.
            self.pos += 1;
            let esc = *self
                .input
                .get(self.pos)
                .ok_or_else(|| self.error("unterminated escape"))?;
            self.pos += 1;
            match esc {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let hi = self.hex4()?;
                    let c = if (0xD800..0xDC00).contains(&hi) {
                        if self.input.get(self.pos..self.pos + 2) != Some(b"\\u") {
                            return Err(self.error("lone surrogate"));
                        }
                        self.pos += 2;
                        let lo = self.hex4()?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return Err(self.error("bad low surrogate"));
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else {
                        hi
                    };
                    out.push(char::from_u32(c).ok_or_else(|| self.error("invalid \\u escape"))?);
                }
                _ => return Err(self.error("unknown escape")),
            }
            let start = self.pos;
            while self.pos < self.input.len() && !matches!(self.input[self.pos], b'"' | b'\\') {
                self.pos += 1;
            }
            let chunk = std::str::from_utf8(&self.input[start..self.pos])
                .map_err(|_| self.error("string is not UTF-8"))?;
            out.push_str(chunk);
            match self.input.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => {}
            }
        }
    }
    fn hex4(&mut self) -> Result<u32, CodecError> {
        let digits = self
            .input
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }
    /// A run of number and literal characters, borrowed from the input (maybe empty).
    #[inline]
    fn token(&mut self) -> &'a [u8] {
        self.ws();
        let input = self.input;
        let start = self.pos;
        let len = input[start..]
            .iter()
            .position(|&b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z' | b'A'..=b'Z'))
            .unwrap_or(input.len() - start);
        self.pos = start + len;
        &input[start..self.pos]
    }
    /// A token as text, for messages and `str::parse`: it is ASCII, so always UTF-8.
    fn text(t: &[u8]) -> &str {
        std::str::from_utf8(t).unwrap_or("")
    }
    fn number(&mut self) -> Result<f64, CodecError> {
        if self.peek() == Some(b'n') {
            let t = self.token();
            return if t == b"null" {
                Ok(f64::NAN)
            } else {
                Err(self.error(&format!("`{}` is not a number", Self::text(t))))
            };
        }
        let t = self.token();
        match t {
            b"NaN" => Ok(f64::NAN),
            b"Infinity" => Ok(f64::INFINITY),
            b"-Infinity" => Ok(f64::NEG_INFINITY),
            _ => match parse_simple_decimal(t) {
                Some(v) => Ok(v),
                None => {
                    let t = Self::text(t);
                    t.parse::<f64>()
                        .map_err(|_| self.error(&format!("`{t}` is not a number")))
                }
            },
        }
    }
    fn integer(&mut self) -> Result<i64, CodecError> {
        let t = self.token();
        match parse_simple_integer(t) {
            Some(v) => Ok(v),
            None => {
                let t = Self::text(t);
                t.parse::<i64>()
                    .map_err(|_| self.error(&format!("`{t}` is not an integer")))
            }
        }
    }
    fn skip_value(&mut self) -> Result<(), CodecError> {
        match self.peek() {
            Some(b'"') => self.key().map(|_| ()),
            Some(b'{') => self.object(|p, _| p.skip_value()),
            Some(b'[') => {
                self.pos += 1;
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.skip_value()?;
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(_) => {
                if self.token().is_empty() {
                    Err(self.error("expected a value"))
                } else {
                    Ok(())
                }
            }
            None => Err(self.error("unexpected end")),
        }
    }
}

/// The implementation before the allocation-free rewrite, kept as the oracle the
/// new writer and reader are checked against (same bytes out, same results and
/// errors in).
#[cfg(test)]
mod legacy {
    use super::Track;
    use glidepath_codec::CodecError;

    pub fn write_sndem_json(t: &Track, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"vid\":");
        write_json_string(out, &t.vid);
        out.extend_from_slice(b",\"latDeg\":");
        write_java_double(out, t.lat_deg);
        out.extend_from_slice(b",\"lonDeg\":");
        write_java_double(out, t.lon_deg);
        out.extend_from_slice(b",\"altFt\":");
        write_java_double(out, t.alt_ft);
        out.extend_from_slice(b",\"time\":");
        out.extend_from_slice(t.time.to_string().as_bytes());
        out.extend_from_slice(b",\"gsKt\":");
        write_java_double(out, t.gs_kt);
        out.extend_from_slice(b",\"crsDeg\":");
        write_java_double(out, t.crs_deg);
        out.extend_from_slice(b",\"vsFpm\":");
        write_java_double(out, t.vs_fpm);
        out.extend_from_slice(b",\"meta\":{\"src\":");
        write_json_string(out, &t.meta.src);
        out.extend_from_slice(b",\"ver\":");
        write_json_string(out, &t.meta.ver);
        out.extend_from_slice(b",\"run\":");
        write_json_string(out, &t.meta.run);
        out.extend_from_slice(b",\"tpub\":");
        out.extend_from_slice(t.meta.tpub.to_string().as_bytes());
        out.extend_from_slice(b"}}");
    }

    pub fn from_sndem_json(input: &[u8]) -> Result<Track, CodecError> {
        let mut p = JsonReader { input, pos: 0 };
        let nan = f64::NAN;
        let mut t = Track {
            lat_deg: nan,
            lon_deg: nan,
            alt_ft: nan,
            gs_kt: nan,
            crs_deg: nan,
            vs_fpm: nan,
            ..Track::default()
        };
        let mut have_vid = false;
        p.object(|p, key| {
            match key {
                "vid" => {
                    t.vid = p.string()?;
                    have_vid = true;
                }
                "latDeg" => t.lat_deg = p.number()?,
                "lonDeg" => t.lon_deg = p.number()?,
                "altFt" => t.alt_ft = p.number()?,
                "time" => t.time = p.integer()?,
                "gsKt" => t.gs_kt = p.number()?,
                "crsDeg" => t.crs_deg = p.number()?,
                "vsFpm" => t.vs_fpm = p.number()?,
                "meta" => p.object(|p, key| {
                    match key {
                        "src" => t.meta.src = p.string()?,
                        "ver" => t.meta.ver = p.string()?,
                        "run" => t.meta.run = p.string()?,
                        "tpub" => t.meta.tpub = p.integer()?,
                        _ => p.skip_value()?,
                    }
                    Ok(())
                })?,
                _ => p.skip_value()?,
            }
            Ok(())
        })?;
        p.ws();
        if p.pos != input.len() {
            return Err(p.error("trailing characters after the message"));
        }
        if !have_vid {
            return Err(CodecError::Malformed("track message without `vid`".into()));
        }
        Ok(t)
    }

    /// Writes a double as Java's `Double.toString` does: at least one fraction digit,
    /// plain notation for magnitudes in [1e-3, 1e7), `d.dddE±n` otherwise, and `NaN`,
    /// `Infinity`, `-Infinity`.
    pub fn write_java_double(out: &mut Vec<u8>, x: f64) {
        if x.is_nan() {
            out.extend_from_slice(b"NaN");
        } else if x.is_infinite() {
            out.extend_from_slice(if x > 0.0 {
                b"Infinity" as &[u8]
            } else {
                b"-Infinity"
            });
        } else if x == 0.0 {
            out.extend_from_slice(if x.is_sign_negative() {
                b"-0.0" as &[u8]
            } else {
                b"0.0"
            });
        } else if (1e-3..1e7).contains(&x.abs()) {
            let s = x.to_string();
            out.extend_from_slice(s.as_bytes());
            if !s.contains('.') {
                out.extend_from_slice(b".0");
            }
        } else {
            let s = format!("{x:e}");
            let (mantissa, exp) = s.split_once('e').expect("`{:e}` always has an exponent");
            out.extend_from_slice(mantissa.as_bytes());
            if !mantissa.contains('.') {
                out.extend_from_slice(b".0");
            }
            out.push(b'E');
            out.extend_from_slice(exp.as_bytes());
        }
    }

    pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
        out.push(b'"');
        for c in s.chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if (c as u32) < 0x20 => {
                    out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                }
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        out.push(b'"');
    }

    /// A small JSON reader for the SNDEM shapes: objects, strings, numbers (with `NaN`
    /// and `Infinity`, which standard JSON lacks), literals and arrays to skip.
    struct JsonReader<'a> {
        input: &'a [u8],
        pos: usize,
    }

    impl JsonReader<'_> {
        fn error(&self, what: &str) -> CodecError {
            CodecError::Malformed(format!("SNDEM JSON at byte {}: {what}", self.pos))
        }
        fn ws(&mut self) {
            while self.pos < self.input.len()
                && matches!(self.input[self.pos], b' ' | b'\t' | b'\n' | b'\r')
            {
                self.pos += 1;
            }
        }
        fn peek(&mut self) -> Option<u8> {
            self.ws();
            self.input.get(self.pos).copied()
        }
        fn expect(&mut self, c: u8) -> Result<(), CodecError> {
            if self.peek() == Some(c) {
                self.pos += 1;
                Ok(())
            } else {
                Err(self.error(&format!("expected `{}`", c as char)))
            }
        }
        fn object(
            &mut self,
            mut field: impl FnMut(&mut Self, &str) -> Result<(), CodecError>,
        ) -> Result<(), CodecError> {
            self.expect(b'{')?;
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(());
            }
            loop {
                let key = self.string()?;
                self.expect(b':')?;
                field(self, &key)?;
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        return Ok(());
                    }
                    _ => return Err(self.error("expected `,` or `}`")),
                }
            }
        }
        fn string(&mut self) -> Result<String, CodecError> {
            self.expect(b'"')?;
            let mut out = String::new();
            loop {
                let start = self.pos;
                while self.pos < self.input.len() && !matches!(self.input[self.pos], b'"' | b'\\') {
                    self.pos += 1;
                }
                let chunk = std::str::from_utf8(&self.input[start..self.pos])
                    .map_err(|_| self.error("string is not UTF-8"))?;
                out.push_str(chunk);
                match self.input.get(self.pos) {
                    None => return Err(self.error("unterminated string")),
                    Some(b'"') => {
                        self.pos += 1;
                        return Ok(out);
                    }
                    Some(_) => {
                        self.pos += 1;
                        let esc = *self
                            .input
                            .get(self.pos)
                            .ok_or_else(|| self.error("unterminated escape"))?;
                        self.pos += 1;
                        match esc {
                            b'"' => out.push('"'),
                            b'\\' => out.push('\\'),
                            b'/' => out.push('/'),
                            b'b' => out.push('\u{8}'),
                            b'f' => out.push('\u{c}'),
                            b'n' => out.push('\n'),
                            b'r' => out.push('\r'),
                            b't' => out.push('\t'),
                            b'u' => {
                                let hi = self.hex4()?;
                                let c = if (0xD800..0xDC00).contains(&hi) {
                                    if self.input.get(self.pos..self.pos + 2) != Some(b"\\u") {
                                        return Err(self.error("lone surrogate"));
                                    }
                                    self.pos += 2;
                                    let lo = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&lo) {
                                        return Err(self.error("bad low surrogate"));
                                    }
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    hi
                                };
                                out.push(
                                    char::from_u32(c)
                                        .ok_or_else(|| self.error("invalid \\u escape"))?,
                                );
                            }
                            _ => return Err(self.error("unknown escape")),
                        }
                    }
                }
            }
        }
        fn hex4(&mut self) -> Result<u32, CodecError> {
            let digits = self
                .input
                .get(self.pos..self.pos + 4)
                .ok_or_else(|| self.error("short \\u escape"))?;
            let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u escape"))?;
            let v = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
            self.pos += 4;
            Ok(v)
        }
        fn token(&mut self) -> &str {
            self.ws();
            let start = self.pos;
            while self.pos < self.input.len()
                && matches!(self.input[self.pos], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z' | b'A'..=b'Z')
            {
                self.pos += 1;
            }
            std::str::from_utf8(&self.input[start..self.pos]).unwrap_or("")
        }
        fn number(&mut self) -> Result<f64, CodecError> {
            if self.peek() == Some(b'n') {
                let t = self.token().to_string();
                return if t == "null" {
                    Ok(f64::NAN)
                } else {
                    Err(self.error(&format!("`{t}` is not a number")))
                };
            }
            let t = self.token().to_string();
            match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                _ => t
                    .parse::<f64>()
                    .map_err(|_| self.error(&format!("`{t}` is not a number"))),
            }
        }
        fn integer(&mut self) -> Result<i64, CodecError> {
            let t = self.token().to_string();
            t.parse::<i64>()
                .map_err(|_| self.error(&format!("`{t}` is not an integer")))
        }
        fn skip_value(&mut self) -> Result<(), CodecError> {
            match self.peek() {
                Some(b'"') => self.string().map(|_| ()),
                Some(b'{') => self.object(|p, _| p.skip_value()),
                Some(b'[') => {
                    self.pos += 1;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        return Ok(());
                    }
                    loop {
                        self.skip_value()?;
                        match self.peek() {
                            Some(b',') => self.pos += 1,
                            Some(b']') => {
                                self.pos += 1;
                                return Ok(());
                            }
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                }
                Some(_) => {
                    if self.token().is_empty() {
                        Err(self.error("expected a value"))
                    } else {
                        Ok(())
                    }
                }
                None => Err(self.error("unexpected end")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SplitMix64: a small deterministic generator for the million-value sweep.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn new_double(x: f64) -> Vec<u8> {
        let mut out = Vec::new();
        write_java_double(&mut out, x);
        out
    }

    fn old_double(x: f64) -> Vec<u8> {
        let mut out = Vec::new();
        legacy::write_java_double(&mut out, x);
        out
    }

    fn assert_same_double(x: f64) {
        let (new, old) = (new_double(x), old_double(x));
        assert_eq!(
            new,
            old,
            "{x:e} ({:#018x}): new {:?} old {:?}",
            x.to_bits(),
            String::from_utf8_lossy(&new),
            String::from_utf8_lossy(&old)
        );
    }

    /// A double of one of several shapes: any bit pattern, short decimals like track
    /// fields, integers, values at powers of ten and their neighbours, tiny and huge
    /// exponents, subnormals, zeros and the specials.
    fn random_double(r: &mut Rng) -> f64 {
        let sign = if r.next() & 1 == 0 { 1.0 } else { -1.0 };
        match r.below(10) {
            0 | 1 => f64::from_bits(r.next()),
            2 | 3 => {
                // A decimal of 1..=17 digits at a scale around the plain range.
                let digits = 1 + r.below(17) as u32;
                let m = r.below(10u64.pow(digits)) as f64;
                let e = r.below(40) as i32 - 25;
                sign * m * 10f64.powi(e)
            }
            4 => sign * (r.below(1 << 53) as f64) / POW10[r.below(23) as usize],
            5 => sign * (r.below(1 << 53) as f64) * POW10[r.below(23) as usize],
            6 => {
                // Neighbours of powers of ten, where the notation and digit count change.
                let p = 10f64.powi(r.below(60) as i32 - 30);
                let steps = r.below(7) as i64 - 3;
                sign * f64::from_bits((p.to_bits() as i64 + steps) as u64)
            }
            7 => sign * f64::from_bits(r.below(1 << 52) + 1), // subnormal
            8 => sign * (r.next() as i64 as f64),
            _ => [
                0.0,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MIN_POSITIVE,
                f64::MAX,
                f64::MIN,
                f64::EPSILON,
                1e7,
                1e-3,
                9_999_999.999_999_998,
                0.000_999_999_999_999_999_9,
            ][r.below(13) as usize],
        }
    }

    #[test]
    fn java_double_matches_the_old_writer_on_a_million_values() {
        let mut r = Rng(0x5EED_0FD0_0B1E);
        let mut fast = 0u32;
        for _ in 0..1_000_000 {
            let x = random_double(&mut r);
            assert_same_double(x);
            if x.is_finite() && x != 0.0 && shortest_decimal(x.abs()).is_some() {
                fast += 1;
            }
        }
        // The fast path must carry the common shapes, not just be correct.
        assert!(fast > 150_000, "fast path took {fast} of 1,000,000");
    }

    #[test]
    fn java_double_matches_the_old_writer_on_track_like_values() {
        let mut r = Rng(42);
        for _ in 0..200_000 {
            // Coordinates with 5 decimals, altitudes, speeds, as the TestBed writes them.
            let lat = (r.below(18_000_000) as f64 - 9_000_000.0) / 1e5;
            let alt = r.below(600_000) as f64 / 10.0;
            let x = lat + alt * 0.0;
            for v in [x, alt, -alt, (lat * 1e5).round() / 1e5] {
                assert_same_double(v);
                assert!(
                    v == 0.0 || shortest_decimal(v.abs()).is_some(),
                    "{v} missed the fast path"
                );
            }
            // Arithmetic results have 16-17 digits and take the general path.
            assert_same_double(lat * 3.0);
        }
        for x in [
            37.62231,
            -122.38169,
            6.0,
            20.0,
            286.0,
            1e7,
            1.5e-5,
            -2.5e10,
            0.001,
            9999999.5,
            1e15,
            1e16,
            1e22,
            1e23,
            123456789012345.0,
            0.1 + 0.2,
            5e-324,
            1e-300,
            1.7976931348623157e308,
        ] {
            assert_same_double(x);
            assert_same_double(-x);
        }
    }

    fn new_json(t: &Track) -> Vec<u8> {
        let mut out = Vec::new();
        t.write_sndem_json(&mut out);
        out
    }

    fn old_json(t: &Track) -> Vec<u8> {
        let mut out = Vec::new();
        legacy::write_sndem_json(t, &mut out);
        out
    }

    /// The new and old reader agree: the same track, or the same error message.
    fn assert_same_parse(input: &[u8]) {
        let new = Track::from_sndem_json(input);
        let old = legacy::from_sndem_json(input);
        match (&new, &old) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "input {:?}", String::from_utf8_lossy(input)),
            (Err(a), Err(b)) => assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "input {:?}",
                String::from_utf8_lossy(input)
            ),
            _ => panic!(
                "input {:?}: new {new:?} old {old:?}",
                String::from_utf8_lossy(input)
            ),
        }
    }

    fn any_double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-180_000_000i64..180_000_000).prop_map(|v| v as f64 / 1e6),
            (0u32..60_000).prop_map(f64::from),
            Just(f64::NAN),
            Just(-0.0),
        ]
    }

    fn any_track() -> impl Strategy<Value = Track> {
        (
            (
                any::<String>(),
                any_double(),
                any_double(),
                any_double(),
                any::<i64>(),
            ),
            (any_double(), any_double(), any_double()),
            (
                ".{0,12}",
                "[\\x00-\\x7f]{0,6}",
                any::<String>(),
                any::<i64>(),
            ),
        )
            .prop_map(
                |(
                    (vid, lat_deg, lon_deg, alt_ft, time),
                    (gs_kt, crs_deg, vs_fpm),
                    (src, ver, run, tpub),
                )| Track {
                    vid,
                    lat_deg,
                    lon_deg,
                    alt_ft,
                    time,
                    gs_kt,
                    crs_deg,
                    vs_fpm,
                    meta: TrackMeta {
                        src,
                        ver,
                        run,
                        tpub,
                    },
                },
            )
    }

    /// Bytes that steer a mutation towards JSON structure rather than noise.
    const JSONISH: &[u8] = b"{}[]:,\" \\\n\t0123456789.-+eEnNaIfuyltr/\x01\xc3\xa9\xff";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn writer_matches_the_old_writer_and_reads_back(t in any_track()) {
            let json = new_json(&t);
            prop_assert_eq!(&json, &old_json(&t));
            prop_assert_eq!(Track::from_sndem_json(&json).unwrap(), t.clone());
            prop_assert_eq!(legacy::from_sndem_json(&json).unwrap(), t.clone());
            // Appending to a buffer that already holds something.
            let mut out = b"xyz".to_vec();
            t.write_sndem_json(&mut out);
            prop_assert_eq!(&out[3..], &json[..]);
        }

        #[test]
        fn reading_into_a_used_track_forgets_what_it_held(t in any_track(), before in any_track()) {
            let mut reused = before;
            reused.read_sndem_json(&new_json(&t)).unwrap();
            prop_assert_eq!(&reused, &t);
            // A message that leaves fields out leaves them missing, not as they were.
            reused.read_sndem_json(br#"{"vid":"N1"}"#).unwrap();
            prop_assert_eq!(&reused.vid, "N1");
            prop_assert!(reused.lat_deg.is_nan() && reused.vs_fpm.is_nan());
            prop_assert_eq!(reused.time, 0);
            prop_assert!(reused.meta.src.is_empty() && reused.meta.run.is_empty());
            prop_assert_eq!(reused.meta.tpub, 0);
        }

        #[test]
        fn reader_matches_the_old_reader_on_mutated_input(
            t in any_track(),
            edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<prop::sample::Index>(), any::<u8>()), 0..6),
            pretty in any::<bool>(),
        ) {
            let mut json = new_json(&t);
            if pretty {
                // Whitespace around every structural character.
                let mut spaced = Vec::new();
                for &b in &json {
                    if matches!(b, b'{' | b'}' | b':' | b',') { spaced.extend_from_slice(b" \n"); spaced.push(b); spaced.extend_from_slice(b"\t "); } else { spaced.push(b); }
                }
                json = spaced;
            }
            assert_same_parse(&json);
            for (at, kind, pick, raw) in edits {
                let byte = if raw & 1 == 0 { JSONISH[pick.index(JSONISH.len())] } else { raw };
                match kind {
                    0 if !json.is_empty() => { json.remove(at.index(json.len())); }
                    1 => { let i = at.index(json.len() + 1); json.insert(i, byte); }
                    _ if !json.is_empty() => { let i = at.index(json.len()); json[i] = byte; }
                    _ => {}
                }
                assert_same_parse(&json);
            }
        }

        #[test]
        fn reader_matches_the_old_reader_on_json_soup(
            parts in proptest::collection::vec(prop_oneof![
                Just("{".to_string()), Just("}".to_string()), Just("[".to_string()), Just("]".to_string()),
                Just(",".to_string()), Just(":".to_string()), Just(" ".to_string()),
                prop::sample::select(vec!["\"vid\"", "\"latDeg\"", "\"lonDeg\"", "\"altFt\"", "\"time\"", "\"gsKt\"", "\"crsDeg\"", "\"vsFpm\"",
                    "\"meta\"", "\"src\"", "\"ver\"", "\"run\"", "\"tpub\"", "\"x\"", "\"v\\u0069d\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"a\\qb\"",
                    "NaN", "-Infinity", "Infinity", "null", "nul", "nan", "inf", "+1", "1e400", "-0", "1.5", ".5", "5.", "1e", "9223372036854775808", "-9223372036854775808", "0x10", "true"]).prop_map(str::to_string),
                any::<i64>().prop_map(|v| v.to_string()),
                any::<f64>().prop_map(|v| v.to_string()),
                "\"[^\"\\\\]{0,4}\"",
            ], 0..40),
        ) {
            let text = parts.concat();
            assert_same_parse(text.as_bytes());
            // And wrapped as an object with a vid, so more of them get deep.
            let wrapped = format!("{{\"vid\":\"A\",{}}}", &text);
            assert_same_parse(wrapped.as_bytes());
            let wrapped = format!("{{\"vid\":\"A\",\"meta\":{{{}}}}}", &text);
            assert_same_parse(wrapped.as_bytes());
        }
    }

    #[test]
    fn reader_matches_the_old_reader_on_known_cases() {
        let cases: &[&[u8]] = &[
            b"",
            b"{",
            b"}",
            b"{}",
            b"{\"vid\":\"A\"}",
            b"{\"vid\":\"A\"",
            b"{\"vid\":\"A\",\"latDeg\":abc}",
            b"{\"latDeg\":1}",
            b"{\"vid\":\"A\"} x",
            b"{\"vid\":\"\\q\"}",
            b"{\"vid\":\"A\",}",
            b"{\"vid\":\"\xff\"}",
            b"{\"vid\":\"a\\u00e9\xff\"}",
            b"{\"vid\":\"\\ud800\"}",
            b"{\"vid\":\"\\ud800\\u0041\"}",
            b"{\"vid\":\"\\u+0041\"}",
            b"{\"vid\":\"\\u12\"}",
            b"{\"vid\":\"A\",\"time\":1.5}",
            b"{\"vid\":\"A\",\"latDeg\":null}",
            b"{\"vid\":\"A\",\"latDeg\":nul}",
            b"{\"vid\":\"A\",\"latDeg\":}",
            b"{\"vid\":\"A\",\"x\":}",
            b"{\"vid\":\"A\",\"x\":[1,[2,{}],\"s\"],\"y\":abc}",
            b"{\"vid\":\"A\",\"x\":[1,]}",
            b"{\"vid\":\"A\",\"meta\":{}}",
            b"{\"vid\":\"A\",\"meta\":{\"src\":\"s\"},\"meta\":{\"ver\":\"v\"}}",
            b"{\"vid\":\"A\",\"vid\":\"B\"}",
            b" {\"vid\" : \"A\" } \n",
            b"{\"vid\":\"A\",\"latDeg\":1.5\"}",
            b"{\"v\\u0069d\":\"A\"}",
            b"{\"vid\":\"A\\",
        ];
        for &c in cases {
            assert_same_parse(c);
        }
    }

    #[test]
    fn control_characters_are_escaped_as_before() {
        let s: String = (0u32..0x80)
            .filter_map(char::from_u32)
            .chain("é\u{2028}😀".chars())
            .collect();
        let (mut new, mut old) = (Vec::new(), Vec::new());
        write_json_string(&mut new, &s);
        legacy::write_json_string(&mut old, &s);
        assert_eq!(new, old);
    }

    #[test]
    fn simple_decimals_read_as_str_parse_reads_them() {
        let mut r = Rng(7);
        let check = |t: &str| {
            if let Some(v) = parse_simple_decimal(t.as_bytes()) {
                assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
            }
        };
        for t in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "007",
            "1.",
            ".5",
            "-",
            "",
            "1.2.3",
            "123456789012345",
            "1234567890123456",
            "0.000000000000001",
            "99999999999999.9",
            "-1e5",
            "+1",
            "1-2",
        ] {
            check(t);
        }
        assert_eq!(parse_simple_decimal(b"1234567890123456"), None);
        assert_eq!(parse_simple_decimal(b"1.5"), Some(1.5));
        for _ in 0..1_000_000 {
            let digits = 1 + r.below(15) as u32;
            let m = r.below(10u64.pow(digits));
            let mut t = format!("{m:0width$}", width = digits as usize);
            let point = r.below(u64::from(digits) + 1) as usize;
            if point > 0 && point < t.len() {
                t.insert(point, '.');
            }
            if r.next() & 1 == 1 {
                t.insert(0, '-');
            }
            check(&t);
        }
        for _ in 0..200_000 {
            let x = random_double(&mut r);
            check(&x.to_string());
            check(&String::from_utf8(new_double(x)).unwrap());
        }
    }

    #[test]
    fn simple_integers_read_as_str_parse_reads_them() {
        let mut r = Rng(11);
        for t in [
            "0",
            "-0",
            "+5",
            "-",
            "",
            "007",
            "999999999999999999",
            "9999999999999999999",
            "-9223372036854775808",
            "1.0",
            "1e3",
            "12a",
        ] {
            if let Some(v) = parse_simple_integer(t.as_bytes()) {
                assert_eq!(Ok(v), t.parse::<i64>(), "{t}");
            }
        }
        for _ in 0..200_000 {
            let v = r.next() as i64 >> r.below(64);
            let t = v.to_string();
            assert_eq!(
                parse_simple_integer(t.as_bytes()).unwrap_or_else(|| t.parse().unwrap()),
                v
            );
        }
    }

    #[test]
    fn integers_are_written_like_to_string() {
        for v in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            1_481_068_800_000,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut out = Vec::new();
            write_i64(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }
}

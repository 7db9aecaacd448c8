//! The SNDEM track message (ATM TestBed report, section 3.3 and Table 4.1) and its two
//! serialisations: JSON exactly as the TestBed writes it, and compact binary.
//!
//! JSON is written field for field in the report's order with Java's `Double.toString`
//! number format (`6.0`, `-122.38169`, `1.0E7`) and `NaN` for missing numbers, so the
//! sample of Table 4.1 comes out byte for byte. The reader accepts that output, any
//! field order, whitespace, unknown fields (skipped) and missing numbers (NaN).

use crate::frame::CodecError;
use crate::varint::{read_varint, write_varint, zigzag_decode, zigzag_encode};

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
    pub lat_deg: f64,
    pub lon_deg: f64,
    pub alt_ft: f64,
    /// When the track was recorded, milliseconds since the Unix epoch.
    pub time: i64,
    pub gs_kt: f64,
    pub crs_deg: f64,
    pub vs_fpm: f64,
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
    pub fn write_sndem_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"vid\":");
        write_json_string(out, &self.vid);
        out.extend_from_slice(b",\"latDeg\":");
        write_java_double(out, self.lat_deg);
        out.extend_from_slice(b",\"lonDeg\":");
        write_java_double(out, self.lon_deg);
        out.extend_from_slice(b",\"altFt\":");
        write_java_double(out, self.alt_ft);
        out.extend_from_slice(b",\"time\":");
        out.extend_from_slice(self.time.to_string().as_bytes());
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
        out.extend_from_slice(self.meta.tpub.to_string().as_bytes());
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
        let mut p = JsonReader { input, pos: 0 };
        let nan = f64::NAN;
        let mut t = Track { lat_deg: nan, lon_deg: nan, alt_ft: nan, gs_kt: nan, crs_deg: nan, vs_fpm: nan, ..Track::default() };
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
            return Err(CodecError::Malformed(format!("binary track version {version}, expected {BINARY_VERSION}")));
        }
        let vid = r.str()?;
        let (lat_deg, lon_deg, alt_ft) = (r.f64()?, r.f64()?, r.f64()?);
        let time = zigzag_decode(r.varint()?);
        let (gs_kt, crs_deg, vs_fpm) = (r.f64()?, r.f64()?, r.f64()?);
        let meta = TrackMeta { src: r.str()?, ver: r.str()?, run: r.str()?, tpub: zigzag_decode(r.varint()?) };
        if r.pos != input.len() {
            return Err(CodecError::Malformed(format!("{} trailing bytes after a binary track", input.len() - r.pos)));
        }
        Ok(Track { vid, lat_deg, lon_deg, alt_ft, time, gs_kt, crs_deg, vs_fpm, meta })
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
        String::from_utf8(b.to_vec()).map_err(|_| CodecError::Malformed("string is not UTF-8".into()))
    }
}

/// Writes a double as Java's `Double.toString` does: at least one fraction digit,
/// plain notation for magnitudes in [1e-3, 1e7), `d.dddE±n` otherwise, and `NaN`,
/// `Infinity`, `-Infinity`.
pub fn write_java_double(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 { b"Infinity" as &[u8] } else { b"-Infinity" });
    } else if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0.0" as &[u8] } else { b"0.0" });
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

fn write_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
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
        while self.pos < self.input.len() && matches!(self.input[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
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
    fn object(&mut self, mut field: impl FnMut(&mut Self, &str) -> Result<(), CodecError>) -> Result<(), CodecError> {
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
            let chunk = std::str::from_utf8(&self.input[start..self.pos]).map_err(|_| self.error("string is not UTF-8"))?;
            out.push_str(chunk);
            match self.input.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(_) => {
                    self.pos += 1;
                    let esc = *self.input.get(self.pos).ok_or_else(|| self.error("unterminated escape"))?;
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
                }
            }
        }
    }
    fn hex4(&mut self) -> Result<u32, CodecError> {
        let digits = self.input.get(self.pos..self.pos + 4).ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("bad \\u escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(v)
    }
    fn token(&mut self) -> &str {
        self.ws();
        let start = self.pos;
        while self.pos < self.input.len() && matches!(self.input[self.pos], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z' | b'A'..=b'Z') {
            self.pos += 1;
        }
        std::str::from_utf8(&self.input[start..self.pos]).unwrap_or("")
    }
    fn number(&mut self) -> Result<f64, CodecError> {
        if self.peek() == Some(b'n') {
            let t = self.token().to_string();
            return if t == "null" { Ok(f64::NAN) } else { Err(self.error(&format!("`{t}` is not a number"))) };
        }
        let t = self.token().to_string();
        match t.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => t.parse::<f64>().map_err(|_| self.error(&format!("`{t}` is not a number"))),
        }
    }
    fn integer(&mut self) -> Result<i64, CodecError> {
        let t = self.token().to_string();
        t.parse::<i64>().map_err(|_| self.error(&format!("`{t}` is not an integer")))
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

//! The SNDEM JSON writer and reader as they were before the allocation-free rewrite,
//! kept only as the oracle the new ones are checked against (same bytes out, same
//! results and errors in): `tests/track_oracle.rs`. Never used by the library.

use glidepath_atm::track::Track;
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

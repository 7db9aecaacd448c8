//! The SNDEM JSON reader: any field order, whitespace, unknown fields skipped, missing
//! numbers as NaN, and strings read into a reused track without allocating.

use std::borrow::Cow;

use glidepath_codec::CodecError;

use super::{Track, POW10};

impl Track {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::test_doubles::{random_double, Rng};
    use crate::track::write_java_double;

    fn new_double(x: f64) -> Vec<u8> {
        let mut out = Vec::new();
        write_java_double(&mut out, x);
        out
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
}

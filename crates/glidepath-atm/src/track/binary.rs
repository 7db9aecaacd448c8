//! The compact binary form of a track: a version byte, varint-length strings, zigzag
//! varint times and little-endian doubles.

use glidepath_codec::{read_varint, write_varint, zigzag_decode, zigzag_encode, CodecError};

use super::{Track, TrackMeta};

const BINARY_VERSION: u8 = 1;

impl Track {
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

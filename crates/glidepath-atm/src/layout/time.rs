//! Instants and durations in layouts: RFC 3339 times with an offset, and durations as
//! seconds or a number with a unit.

use std::ops::Range;

/// A duration: a number of seconds, or a string `"<number> <unit>"` with unit `s`, `ms`,
/// `min` or `h` (Table 3.1 writes "1 s", "61200 s").
pub(super) fn duration_value(v: &toml::Value) -> Result<f64, String> {
    let seconds = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => parse_duration(s)?,
        other => {
            return Err(format!(
                "expected seconds as a number or a string like \"61200 s\", got {}",
                other.type_str()
            ))
        }
    };
    if !seconds.is_finite() {
        return Err(format!("must be a finite number of seconds, got {seconds}"));
    }
    Ok(seconds)
}

/// Parses `"61200 s"`, `"1s"`, `"1.5 min"`, `"250 ms"`, `"17 h"` into seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(t.len());
    // An exponent letter followed by a unit would be mis-split; units never start with e.
    let (number, unit) = t.split_at(split);
    let value: f64 = number.trim().parse().map_err(|_| {
        format!(
            "\"{s}\" is not a duration (expected a number of seconds or a string like \"61200 s\")"
        )
    })?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "\"{s}\": unknown unit \"{other}\" (expected s, ms, min or h)"
            ))
        }
    };
    Ok(value * scale)
}

/// An instant: a TOML offset date-time (`2016-03-23T07:00:00Z`, unquoted) or the same as a
/// string.
pub(super) fn time_value(v: &toml::Value) -> Result<i64, String> {
    match v {
        toml::Value::String(s) => parse_rfc3339(s),
        toml::Value::Datetime(d) => parse_rfc3339(&d.to_string()),
        other => Err(format!(
            "expected an RFC 3339 time like \"2016-03-23T07:00:00Z\", got {}",
            other.type_str()
        )),
    }
}

/// Parses an RFC 3339 date-time with a `Z` or `±hh:mm` offset into unix seconds
/// (fractional seconds are truncated). Local times without an offset are refused: a
/// layout must say which instant it means.
pub fn parse_rfc3339(s: &str) -> Result<i64, String> {
    let bad =
        |why: &str| format!("\"{s}\" is not an RFC 3339 time like \"2016-03-23T07:00:00Z\": {why}");
    let b = s.trim().as_bytes();
    if b.len() < 19 || !b.is_ascii() {
        return Err(bad("too short"));
    }
    let num = |r: Range<usize>| -> Result<i64, String> {
        let part = &b[r];
        if part.iter().all(u8::is_ascii_digit) {
            Ok(part
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        } else {
            Err(bad("expected digits"))
        }
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad("expected YYYY-MM-DDTHH:MM:SS"));
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad("no such time of day"));
    }
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(bad("expected digits after '.'"));
        }
        rest = &rest[1 + digits..];
    }
    let offset_s = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let d = |c: &u8| {
                if c.is_ascii_digit() {
                    Ok(i64::from(c - b'0'))
                } else {
                    Err(bad("bad offset"))
                }
            };
            let (oh, om) = (d(h1)? * 10 + d(h2)?, d(m1)? * 10 + d(m2)?);
            if oh > 23 || om > 59 {
                return Err(bad("bad offset"));
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        [] => return Err(bad("missing offset (write Z for UTC)")),
        _ => return Err(bad("expected Z or an offset like +02:00 at the end")),
    };
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s)
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_rfc3339(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's `days_from_civil` / `civil_from_days` (public-domain algorithms).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_and_offsets() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_rfc3339("2016-03-23T07:00:00Z"), Ok(1_458_716_400));
        assert_eq!(
            parse_rfc3339("2016-03-23T00:00:00-07:00"),
            Ok(1_458_716_400)
        );
        assert_eq!(parse_rfc3339("2016-03-23T07:00:00.999Z"), Ok(1_458_716_400));
        assert_eq!(format_rfc3339(1_458_716_400), "2016-03-23T07:00:00Z");
        assert!(parse_rfc3339("2016-02-30T00:00:00Z").is_err());
        assert!(parse_rfc3339("2016-03-23T07:00:00").is_err());
        assert!(parse_rfc3339("2016-03-23T07:00:00ZZ").is_err());
        for t in [-86_401i64, 0, 951_782_400, 1_458_777_600, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&format_rfc3339(t)), Ok(t));
        }
    }

    #[test]
    fn durations_in_both_spellings() {
        assert_eq!(parse_duration("61200 s"), Ok(61_200.0));
        assert_eq!(parse_duration("1s"), Ok(1.0));
        assert_eq!(parse_duration("250 ms"), Ok(0.25));
        assert_eq!(parse_duration("17 h"), Ok(61_200.0));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1 fortnight").is_err());
        assert_eq!(duration_value(&toml::Value::Integer(5)), Ok(5.0));
    }
}

//! Instants and durations in layouts: RFC 3339 times with an offset, and durations as
//! seconds or a number with a unit, read with `jiff`.

use jiff::{civil::DateTime, SignedDuration, Timestamp};

/// The spellings a duration error offers.
const DURATION_EXAMPLES: &str =
    "a number of seconds or a string like \"61200 s\", \"250 ms\", \"1.5 min\" or \"17 h\"";

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

/// Parses `"61200 s"`, `"1s"`, `"1.5 min"`, `"250 ms"`, `"17 h"` (any duration `jiff`'s
/// friendly or ISO 8601 format reads, such as `"1h 30min"` or `"PT90M"`) into seconds;
/// a number alone (`"61200"`, `"-5"`, `"1e3"`) is seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let is_number = |c: char| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E');
    if !t.is_empty() && t.chars().all(is_number) {
        return t
            .parse()
            .map_err(|_| format!("\"{s}\" is not a duration (expected {DURATION_EXAMPLES})"));
    }
    t.parse::<SignedDuration>()
        .map(|d| d.as_secs_f64())
        .map_err(|e| format!("\"{s}\" is not a duration (expected {DURATION_EXAMPLES}): {e}"))
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
/// (fractional seconds are dropped: the second the instant falls in). Local times
/// without an offset are refused: a layout must say which instant it means.
pub fn parse_rfc3339(s: &str) -> Result<i64, String> {
    let bad =
        |why: &str| format!("\"{s}\" is not an RFC 3339 time like \"2016-03-23T07:00:00Z\": {why}");
    let t = s.trim();
    match t.parse::<Timestamp>() {
        // Before 1970 a fraction counts back from the second: floor, not truncation.
        Ok(ts) => Ok(ts.as_second() - i64::from(ts.subsec_nanosecond() < 0)),
        Err(_) if t.parse::<DateTime>().is_ok() => Err(bad("missing offset (write Z for UTC)")),
        Err(e) => Err(bad(&e.to_string())),
    }
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (seconds past `jiff`'s range, the
/// years -9999 to 9999, as a number of seconds).
pub fn format_rfc3339(t: i64) -> String {
    match Timestamp::from_second(t) {
        Ok(ts) => ts.to_string(),
        Err(_) => format!("{t} s after 1970-01-01T00:00:00Z"),
    }
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
    fn rfc3339_errors_say_what_is_wrong() {
        let local = parse_rfc3339("2016-03-23T07:00:00").unwrap_err();
        assert!(local.contains("missing offset"), "{local}");
        let day = parse_rfc3339("2016-02-30T00:00:00Z").unwrap_err();
        assert!(
            day.contains("2016-02-30T00:00:00Z") && day.contains("RFC 3339"),
            "{day}"
        );
        // The second an instant falls in, also before 1970.
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59.5Z"), Ok(-1));
        assert_eq!(parse_rfc3339(" 2016-03-23t07:00:00z "), Ok(1_458_716_400));
    }

    #[test]
    fn durations_in_both_spellings() {
        assert_eq!(parse_duration("61200 s"), Ok(61_200.0));
        assert_eq!(parse_duration("1s"), Ok(1.0));
        assert_eq!(parse_duration("250 ms"), Ok(0.25));
        assert_eq!(parse_duration("17 h"), Ok(61_200.0));
        assert_eq!(parse_duration("1.5 min"), Ok(90.0));
        assert_eq!(parse_duration("-5 s"), Ok(-5.0));
        assert_eq!(parse_duration("61200"), Ok(61_200.0));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1 fortnight")
            .unwrap_err()
            .contains("fortnight"));
        assert_eq!(duration_value(&toml::Value::Integer(5)), Ok(5.0));
    }
}

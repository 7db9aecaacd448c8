//! Timestamps as recorded-traffic exports write them: Unix time in seconds (integer or
//! fractional), milliseconds, microseconds or nanoseconds, or an ISO 8601 / RFC 3339
//! date-time with a UTC offset; and the rule that tells the epoch units apart.
//!
//! # The automatic rule
//! A numeric timestamp is taken in the unit that puts it between 1973-03-03T09:46:40Z
//! (10^8 s) and 2100-01-01T00:00:00Z. Those windows are 1,000 times apart, so at most
//! one unit fits any value: 1458716400 can only be seconds, 1458716400000 only
//! milliseconds. A value no unit places in that span (a small number such as `12`, a
//! relative time, an instant before 1973) is ambiguous and its row is refused with the
//! reason, never guessed: the source's `timestamp_unit` then says what it is.

use jiff::{civil::DateTime, Timestamp};

/// How numeric timestamps are read (the layout's `source.timestamp_unit`). A timestamp
/// written as a date-time (`2016-03-23T07:00:00Z`) is read as one whatever the unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimestampUnit {
    /// Decide per value by the automatic rule of this module, refusing what no unit
    /// places between 1973 and 2100. The default: safe for any export.
    #[default]
    Auto,
    /// Unix seconds, integer or fractional (OpenSky's state vectors, `traffic`'s CSV).
    Seconds,
    /// Unix milliseconds (`traffic`'s and pandas' JSON, most web exports).
    Milliseconds,
    /// Unix microseconds.
    Microseconds,
    /// Unix nanoseconds (pandas' `datetime64[ns]` as integers).
    Nanoseconds,
}

impl TimestampUnit {
    /// Every unit, in the spelling a layout uses (`µs` is accepted for `us`).
    pub const NAMES: [&'static str; 5] = ["auto", "s", "ms", "us", "ns"];

    /// The unit a layout spells `name`.
    pub fn from_name(name: &str) -> Option<TimestampUnit> {
        match name {
            "auto" => Some(TimestampUnit::Auto),
            "s" => Some(TimestampUnit::Seconds),
            "ms" => Some(TimestampUnit::Milliseconds),
            "us" | "µs" => Some(TimestampUnit::Microseconds),
            "ns" => Some(TimestampUnit::Nanoseconds),
            _ => None,
        }
    }

    /// The spelling in a layout.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// What the unit is, in words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            TimestampUnit::Auto => "decided per value",
            TimestampUnit::Seconds => "Unix seconds",
            TimestampUnit::Milliseconds => "Unix milliseconds",
            TimestampUnit::Microseconds => "Unix microseconds",
            TimestampUnit::Nanoseconds => "Unix nanoseconds",
        }
    }

    /// Units per second; `None` for [`TimestampUnit::Auto`].
    fn per_second(self) -> Option<i128> {
        match self {
            TimestampUnit::Auto => None,
            TimestampUnit::Seconds => Some(1),
            TimestampUnit::Milliseconds => Some(1_000),
            TimestampUnit::Microseconds => Some(1_000_000),
            TimestampUnit::Nanoseconds => Some(1_000_000_000),
        }
    }

    /// The epoch units, finest last.
    const EPOCH: [TimestampUnit; 4] = [
        TimestampUnit::Seconds,
        TimestampUnit::Milliseconds,
        TimestampUnit::Microseconds,
        TimestampUnit::Nanoseconds,
    ];
}

impl std::fmt::Display for TimestampUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How one timestamp was read: in an epoch unit, or as a date-time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimestampForm {
    /// A number in this unit (never [`TimestampUnit::Auto`]).
    Epoch(TimestampUnit),
    /// An ISO 8601 / RFC 3339 date-time with an offset.
    DateTime,
}

/// The automatic rule's span: 10^8 s (1973-03-03T09:46:40Z) ..
/// 2100-01-01T00:00:00Z, in seconds.
const AUTO_FROM_S: f64 = 1e8;
const AUTO_TO_S: f64 = 4_102_444_800.0;

/// The instants a track may carry: the years 0001 to 9999 (what RFC 3339 can write),
/// in milliseconds.
const MS_MIN: i128 = -62_135_596_800_000;
const MS_MAX: i128 = 253_402_300_799_999;

/// The unit the automatic rule gives `value`, if any.
fn auto_unit(value: f64) -> Option<TimestampUnit> {
    TimestampUnit::EPOCH.into_iter().find(|u| {
        let s = value / u.per_second().expect("an epoch unit") as f64;
        (AUTO_FROM_S..AUTO_TO_S).contains(&s)
    })
}

/// `n / d` rounded to the nearest integer, halves away from zero.
fn div_round(n: i128, d: i128) -> i128 {
    let q = n.div_euclid(d);
    let r = n.rem_euclid(d);
    if 2 * r >= d {
        q + 1
    } else {
        q
    }
}

/// Reads a timestamp field (already trimmed) into Unix milliseconds, rounding finer
/// units to the nearest millisecond, and says how it was read. The error says what is
/// wrong with the value.
pub(crate) fn parse_timestamp_ms(
    text: &str,
    unit: TimestampUnit,
) -> Result<(i64, TimestampForm), String> {
    if text.is_empty() {
        return Err("`timestamp` is empty".to_string());
    }
    // A number if Rust reads it as one (`1458716400`, `1.4587164e9`, `-1.5`); anything
    // else must be a date-time.
    let Ok(value) = text.parse::<f64>() else {
        return parse_date_time(text).map(|ms| (ms, TimestampForm::DateTime));
    };
    if !value.is_finite() {
        return Err(format!(
            "`timestamp` is `{}`, not a time",
            super::shorten(text)
        ));
    }
    // Integers are converted exactly (a nanosecond count has more digits than an f64).
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let exact: Option<i128> = if digits.len() <= 30 && digits.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    };
    let unit = match unit {
        TimestampUnit::Auto => auto_unit(value).ok_or_else(|| {
            format!(
                "`timestamp` {} is ambiguous: no unit (s, ms, us, ns) makes it a Unix time \
                 between 1973-03-03 and 2100-01-01; set `timestamp_unit` in the source",
                super::shorten(text)
            )
        })?,
        u => u,
    };
    let per_second = unit.per_second().expect("an epoch unit");
    let ms: i128 = match exact {
        Some(v) if per_second >= 1_000 => div_round(v, per_second / 1_000),
        Some(v) => v * (1_000 / per_second),
        None => {
            let ms = (value * 1_000.0 / per_second as f64).round();
            if ms.abs() > 1e18 {
                i128::MAX
            } else {
                ms as i128
            }
        }
    };
    if !(MS_MIN..=MS_MAX).contains(&ms) {
        return Err(format!(
            "`timestamp` {} {} is outside the years 1..9999",
            super::shorten(text),
            unit.name()
        ));
    }
    Ok((ms as i64, TimestampForm::Epoch(unit)))
}

/// An ISO 8601 / RFC 3339 date-time with an offset (`Z`, `+02:00`), a `T` or a space
/// between date and time, any fraction of a second; without an offset it is refused,
/// as a layout's times are: the row must say which instant it means.
fn parse_date_time(text: &str) -> Result<i64, String> {
    match text.parse::<Timestamp>() {
        Ok(ts) => {
            let ns = ts.as_nanosecond();
            Ok(div_round(ns, 1_000_000) as i64)
        }
        Err(_) if text.parse::<DateTime>().is_ok() => Err(format!(
            "`timestamp` {} has no UTC offset (write Z or ±hh:mm): which instant it \
             means is unknown",
            super::shorten(text)
        )),
        Err(e) => Err(format!(
            "`timestamp` is `{}`, neither a Unix time nor an ISO 8601 date-time with an \
             offset ({e})",
            super::shorten(text)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TimestampUnit::*;

    fn ms(text: &str, unit: TimestampUnit) -> Result<i64, String> {
        parse_timestamp_ms(text, unit).map(|(ms, _)| ms)
    }

    #[test]
    fn every_epoch_unit_gives_the_same_instant() {
        let want = Ok(1_458_716_400_250);
        assert_eq!(ms("1458716400.25", Seconds), want);
        assert_eq!(ms("1458716400250", Milliseconds), want);
        assert_eq!(ms("1458716400250000", Microseconds), want);
        assert_eq!(ms("1458716400250000000", Nanoseconds), want);
        for text in [
            "1458716400.25",
            "1458716400250",
            "1458716400250000",
            "1458716400250000000",
            "1.45871640025e9",
            "1458716400250.0",
        ] {
            assert_eq!(ms(text, Auto), want, "{text}");
        }
        assert_eq!(ms("1458716400", Auto), Ok(1_458_716_400_000));
        // Finer units round to the nearest millisecond.
        assert_eq!(ms("1458716400250600", Microseconds), Ok(1_458_716_400_251));
        assert_eq!(
            ms("1458716400250499999", Nanoseconds),
            Ok(1_458_716_400_250)
        );
        assert_eq!(ms("-1.5", Seconds), Ok(-1_500));
        assert_eq!(ms("12", Seconds), Ok(12_000));
        assert_eq!(ms("12", Milliseconds), Ok(12));
    }

    #[test]
    fn the_automatic_rule_says_which_unit_it_chose() {
        let form = |text| parse_timestamp_ms(text, Auto).map(|(_, f)| f);
        assert_eq!(form("1633564800"), Ok(TimestampForm::Epoch(Seconds)));
        assert_eq!(
            form("1633564800000"),
            Ok(TimestampForm::Epoch(Milliseconds))
        );
        assert_eq!(
            form("1633564800000000"),
            Ok(TimestampForm::Epoch(Microseconds))
        );
        assert_eq!(
            form("1633564800000000000"),
            Ok(TimestampForm::Epoch(Nanoseconds))
        );
        assert_eq!(form("2021-10-07T00:00:00Z"), Ok(TimestampForm::DateTime));
    }

    #[test]
    fn ambiguous_values_are_refused_not_guessed() {
        // Seconds of 1970, or milliseconds of a few minutes: no unit fits.
        for text in [
            "1",
            "12",
            "86399",
            "99999999",
            "-1458716400",
            "5e10",
            "9e12",
        ] {
            let e = ms(text, Auto).unwrap_err();
            assert!(
                e.contains("ambiguous") && e.contains("timestamp_unit"),
                "{text}: {e}"
            );
        }
        // With a unit they are read as said.
        assert_eq!(ms("99999999", Seconds), Ok(99_999_999_000));
    }

    #[test]
    fn date_times_with_an_offset() {
        let want = Ok(1_458_716_400_250);
        for text in [
            "2016-03-23T07:00:00.25Z",
            "2016-03-23T07:00:00.250+00:00",
            "2016-03-23 07:00:00.25Z",
            "2016-03-23T08:00:00.25+01:00",
            "2016-03-23T00:00:00.250-07:00",
            "2016-03-23t07:00:00.25z",
        ] {
            assert_eq!(ms(text, Auto), want, "{text}");
            assert_eq!(ms(text, Seconds), want, "a unit does not apply: {text}");
        }
        let local = ms("2016-03-23T07:00:00", Auto).unwrap_err();
        assert!(local.contains("no UTC offset"), "{local}");
        let bad = ms("yesterday", Auto).unwrap_err();
        assert!(bad.contains("yesterday"), "{bad}");
    }

    #[test]
    fn bad_numbers_say_so() {
        assert!(ms("", Auto).unwrap_err().contains("empty"));
        assert!(ms("1.2.3", Seconds).unwrap_err().contains("1.2.3"));
        assert!(ms("NaN", Seconds).unwrap_err().contains("not a time"));
        assert!(ms("inf", Auto).unwrap_err().contains("not a time"));
        assert!(ms("1e300", Seconds).unwrap_err().contains("outside"));
        assert!(ms("-99999999999999999999", Seconds).is_err());
    }

    #[test]
    fn unit_names_round_trip() {
        for name in TimestampUnit::NAMES {
            assert_eq!(TimestampUnit::from_name(name).unwrap().name(), name);
        }
        assert_eq!(TimestampUnit::from_name("µs"), Some(Microseconds));
        assert_eq!(TimestampUnit::from_name("sec"), None);
    }
}

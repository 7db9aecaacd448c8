//! The alias table: which header names the reader takes for each quantity a track
//! needs, and the unit each name carries, so the state vectors of common public exports
//! read as they are written.
//!
//! | quantity | names tried, in order (unit) |
//! | --- | --- |
//! | time | `timestamp`, `time` (OpenSky), `time_position` (OpenSky REST) |
//! | icao24 | `icao24` |
//! | callsign | `callsign` |
//! | latitude | `latitude`, `lat` (OpenSky) |
//! | longitude | `longitude`, `lon` (OpenSky) |
//! | altitude → ft | `altitude` (ft), `baroaltitude` (m, OpenSky), `baro_altitude` (m, OpenSky REST), `geoaltitude` (m, OpenSky), `geo_altitude` (m, OpenSky REST) |
//! | ground speed → kt | `groundspeed` (kt), `velocity` (m/s, OpenSky) |
//! | track → deg | `track`, `heading` (OpenSky), `true_track` (OpenSky REST) |
//! | vertical rate → ft/min | `vertical_rate` (ft/min; m/s when the speed column is `velocity`, as in OpenSky's REST API), `vertrate` (m/s, OpenSky) |
//!
//! The first name present wins, so a `traffic` export, which has `altitude` in feet
//! and `geoaltitude` in feet beside it, is read from `altitude`. Converted values are
//! rounded to 0.01 of the track's unit: far finer than the data (ADS-B reports
//! altitude in 25 ft steps, speed in knots, vertical rate in 64 ft/min steps), and a
//! value that went through metres comes back as it was (10,668 m is 35,000 ft, not
//! 34,999.999999999996).

/// The unit a column carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Text, degrees or time: read as written.
    AsWritten,
    /// Feet.
    Feet,
    /// Metres (converted to feet).
    Metres,
    /// Knots.
    Knots,
    /// Metres per second, as a speed (converted to knots).
    MetresPerSecond,
    /// Feet per minute.
    FeetPerMinute,
    /// Metres per second, as a vertical rate (converted to feet per minute).
    MetresPerSecondVertical,
}

impl Unit {
    /// The factor to the track's unit, `None` when values are kept as written.
    fn factor(self) -> Option<f64> {
        match self {
            Unit::AsWritten | Unit::Feet | Unit::Knots | Unit::FeetPerMinute => None,
            Unit::Metres => Some(1.0 / 0.3048),
            Unit::MetresPerSecond => Some(3_600.0 / 1_852.0),
            Unit::MetresPerSecondVertical => Some(60.0 / 0.3048),
        }
    }

    /// The unit's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::AsWritten => "",
            Unit::Feet => "ft",
            Unit::Metres => "m",
            Unit::Knots => "kt",
            Unit::MetresPerSecond | Unit::MetresPerSecondVertical => "m/s",
            Unit::FeetPerMinute => "ft/min",
        }
    }

    /// `value` in the track's unit (rounded to 0.01 when converted; NaN stays NaN).
    pub fn convert(self, value: f64) -> f64 {
        match self.factor() {
            None => value,
            Some(f) => (value * f * 100.0).round() / 100.0,
        }
    }
}

/// One quantity a track needs and the names it may have.
pub(super) struct Quantity {
    /// The canonical name (the first alias), as errors and reports name it.
    pub(super) name: &'static str,
    /// The track's unit, for reports.
    pub(super) unit: &'static str,
    /// Header names, tried in order, with their units.
    pub(super) aliases: &'static [(&'static str, Unit)],
}

/// The nine quantities, in the order of [`Columns::index`].
pub(super) const QUANTITIES: [Quantity; 9] = [
    Quantity {
        name: "timestamp",
        unit: "",
        aliases: &[
            ("timestamp", Unit::AsWritten),
            ("time", Unit::AsWritten),
            ("time_position", Unit::AsWritten),
        ],
    },
    Quantity {
        name: "icao24",
        unit: "",
        aliases: &[("icao24", Unit::AsWritten)],
    },
    Quantity {
        name: "callsign",
        unit: "",
        aliases: &[("callsign", Unit::AsWritten)],
    },
    Quantity {
        name: "latitude",
        unit: "deg",
        aliases: &[("latitude", Unit::AsWritten), ("lat", Unit::AsWritten)],
    },
    Quantity {
        name: "longitude",
        unit: "deg",
        aliases: &[("longitude", Unit::AsWritten), ("lon", Unit::AsWritten)],
    },
    Quantity {
        name: "altitude",
        unit: "ft",
        aliases: &[
            ("altitude", Unit::Feet),
            ("baroaltitude", Unit::Metres),
            ("baro_altitude", Unit::Metres),
            ("geoaltitude", Unit::Metres),
            ("geo_altitude", Unit::Metres),
        ],
    },
    Quantity {
        name: "groundspeed",
        unit: "kt",
        aliases: &[
            ("groundspeed", Unit::Knots),
            ("velocity", Unit::MetresPerSecond),
        ],
    },
    Quantity {
        name: "track",
        unit: "deg",
        aliases: &[
            ("track", Unit::AsWritten),
            ("heading", Unit::AsWritten),
            ("true_track", Unit::AsWritten),
        ],
    },
    Quantity {
        name: "vertical_rate",
        unit: "ft/min",
        aliases: &[
            ("vertical_rate", Unit::FeetPerMinute),
            ("vertrate", Unit::MetresPerSecondVertical),
        ],
    },
];

pub(super) const TIMESTAMP: usize = 0;
pub(super) const ICAO24: usize = 1;
pub(super) const CALLSIGN: usize = 2;
pub(super) const LATITUDE: usize = 3;
const GROUNDSPEED: usize = 6;
const VERTICAL_RATE: usize = 8;

/// Where each quantity is in a file and what unit it is in there.
#[derive(Clone, Debug, PartialEq)]
pub struct Columns {
    /// Per quantity: field index, the header name found, its unit.
    found: [(usize, &'static str, Unit); 9],
}

impl Columns {
    /// Finds every quantity among `names` (lower-cased, trimmed header names); the
    /// error names the first quantity with none of its names present.
    pub(super) fn find(names: &[String]) -> Result<Columns, &'static str> {
        let mut found = [(0, "", Unit::AsWritten); 9];
        for (slot, q) in found.iter_mut().zip(&QUANTITIES) {
            *slot = q
                .aliases
                .iter()
                .find_map(|&(alias, unit)| {
                    names
                        .iter()
                        .position(|n| n == alias)
                        .map(|i| (i, alias, unit))
                })
                .ok_or(q.name)?;
        }
        // OpenSky's REST API names its vertical rate `vertical_rate` too, in m/s; its
        // speed column, `velocity`, says which convention a file follows.
        if found[GROUNDSPEED].1 == "velocity" && found[VERTICAL_RATE].1 == "vertical_rate" {
            found[VERTICAL_RATE].2 = Unit::MetresPerSecondVertical;
        }
        Ok(Columns { found })
    }

    /// The field index of quantity `q`.
    pub(super) fn index(&self, q: usize) -> usize {
        self.found[q].0
    }

    /// The header name quantity `q` is read from.
    pub(super) fn header(&self, q: usize) -> &'static str {
        self.found[q].1
    }

    /// The unit quantity `q` is in, in this file.
    pub fn unit(&self, q: usize) -> Unit {
        self.found[q].2
    }

    /// The columns read under another name or in another unit than glidepath's own
    /// (`altitude from baroaltitude (m)`), or `None` when the file uses glidepath's
    /// names and units.
    pub fn describe(&self) -> Option<String> {
        let parts: Vec<String> = QUANTITIES
            .iter()
            .zip(&self.found)
            .filter(|(q, (_, header, unit))| *header != q.name || unit.factor().is_some())
            .map(|(q, (_, header, unit))| match unit.factor() {
                Some(_) => format!(
                    "{} from `{header}` ({} → {})",
                    q.name,
                    unit.symbol(),
                    q.unit
                ),
                None => format!("{} from `{header}`", q.name),
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// The names tried for a quantity, for error messages: "`altitude`, `baroaltitude`, ...".
pub(super) fn names_tried(quantity: &str) -> String {
    QUANTITIES
        .iter()
        .find(|q| q.name == quantity)
        .map(|q| {
            q.aliases
                .iter()
                .map(|(a, _)| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| format!("`{quantity}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(header: &str) -> Vec<String> {
        header.split(',').map(str::to_string).collect()
    }

    #[test]
    fn units_convert_to_the_tracks_units() {
        assert_eq!(Unit::Metres.convert(10_668.0), 35_000.0);
        assert_eq!(Unit::Metres.convert(0.3048), 1.0);
        assert_eq!(Unit::MetresPerSecond.convert(231.5), 450.0);
        assert_eq!(Unit::MetresPerSecond.convert(1_852.0 / 3_600.0), 1.0);
        // ADS-B's 64 ft/min steps, through OpenSky's m/s and back.
        assert_eq!(Unit::MetresPerSecondVertical.convert(-3.901_44), -768.0);
        assert_eq!(Unit::MetresPerSecondVertical.convert(0.325_12), 64.0);
        assert_eq!(Unit::Feet.convert(35_000.123_456), 35_000.123_456);
        assert!(Unit::Metres.convert(f64::NAN).is_nan());
    }

    #[test]
    fn opensky_state_vectors_are_found_with_their_units() {
        let c = Columns::find(&names(
            "time,icao24,lat,lon,velocity,heading,vertrate,callsign,onground,alert,spi,squawk,baroaltitude,geoaltitude,lastposupdate,lastcontact,hour",
        ))
        .unwrap();
        assert_eq!((c.index(TIMESTAMP), c.header(TIMESTAMP)), (0, "time"));
        assert_eq!((c.index(5), c.unit(5)), (12, Unit::Metres), "baroaltitude");
        assert_eq!(c.unit(GROUNDSPEED), Unit::MetresPerSecond);
        assert_eq!(c.unit(VERTICAL_RATE), Unit::MetresPerSecondVertical);
        let d = c.describe().unwrap();
        assert!(d.contains("altitude from `baroaltitude` (m → ft)"), "{d}");
        assert!(d.contains("timestamp from `time`"), "{d}");
    }

    #[test]
    fn opensky_rest_names_read_vertical_rate_in_metres_per_second() {
        let c = Columns::find(&names(
            "icao24,callsign,origin_country,time_position,last_contact,longitude,latitude,baro_altitude,on_ground,velocity,true_track,vertical_rate,sensors,geo_altitude,squawk,spi,position_source",
        ))
        .unwrap();
        assert_eq!(c.header(TIMESTAMP), "time_position");
        assert_eq!(c.unit(5), Unit::Metres);
        assert_eq!(c.unit(VERTICAL_RATE), Unit::MetresPerSecondVertical);
    }

    #[test]
    fn glidepaths_own_names_need_no_description() {
        let c = Columns::find(&names(
            "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate,geoaltitude",
        ))
        .unwrap();
        assert_eq!(c.unit(5), Unit::Feet, "altitude comes before geoaltitude");
        assert_eq!(c.unit(VERTICAL_RATE), Unit::FeetPerMinute);
        assert_eq!(c.describe(), None);
        assert_eq!(
            Columns::find(&names("timestamp,icao24,callsign")),
            Err("latitude")
        );
        assert!(names_tried("altitude").contains("`baroaltitude`"));
    }
}

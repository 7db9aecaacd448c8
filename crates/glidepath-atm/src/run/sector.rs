//! Sectors through DDM (`layout::sector`): a sectored monitor or recorder subscribes
//! the track messages with its sector's region, and a traffic block linked to one
//! sends every track with the track's point as its region.

use glidepath::{DimensionHandle, Federate, InteractionClassHandle, RangeBounds, RegionHandle};

use crate::layout::sector::Point;
use crate::layout::Sector;

/// The air-traffic FOM's three dimensions.
#[derive(Clone, Copy)]
struct Dims {
    lat: DimensionHandle,
    lon: DimensionHandle,
    fl: DimensionHandle,
}

impl Dims {
    fn of(f: &Federate) -> Result<Dims, String> {
        let d = |name: &str| f.dimension_handle(name).map_err(|e| e.to_string());
        Ok(Dims {
            lat: d("Latitude")?,
            lon: d("Longitude")?,
            fl: d("FlightLevel")?,
        })
    }
}

fn set(
    f: &Federate,
    r: RegionHandle,
    d: DimensionHandle,
    [lower, upper]: [u64; 2],
) -> Result<(), String> {
    f.set_range_bounds(r, d, RangeBounds { lower, upper })
        .map_err(|e| e.to_string())
}

/// Subscribes a monitor or recorder to the track messages: within its sector only
/// when it has one.
pub(super) fn subscribe_tracks(
    f: &Federate,
    class: InteractionClassHandle,
    sector: Option<&Sector>,
) -> Result<(), String> {
    match sector {
        Some(s) => subscribe_within(f, class, s),
        None => f
            .subscribe_interaction_class(class)
            .map_err(|e| e.to_string()),
    }
}

/// Subscribes `class` within `sector` only.
fn subscribe_within(
    f: &Federate,
    class: InteractionClassHandle,
    sector: &Sector,
) -> Result<(), String> {
    let d = Dims::of(f)?;
    let (lat, lon, fl) = sector.ranges();
    let mut dims = vec![d.lat, d.lon];
    if fl.is_some() {
        dims.push(d.fl);
    }
    let e = |e: glidepath::RtiError| format!("the sector's region: {e}");
    let r = f.create_region(&dims).map_err(e)?;
    set(f, r, d.lat, lat)?;
    set(f, r, d.lon, lon)?;
    if let Some(band) = fl {
        set(f, r, d.fl, band)?;
    }
    f.commit_region_modifications(&[r]).map_err(e)?;
    f.subscribe_interaction_class_with_regions(class, &[r])
        .map_err(e)
}

/// The regions a traffic block sends its tracks with: one with altitude, one without
/// (a track whose altitude is unknown), moved to each track's point before it is sent.
pub(super) struct PointRegions {
    dims: Dims,
    with_alt: RegionHandle,
    without_alt: RegionHandle,
}

impl PointRegions {
    pub(super) fn new(f: &Federate) -> Result<PointRegions, String> {
        let d = Dims::of(f)?;
        let e = |e: glidepath::RtiError| format!("the tracks' regions: {e}");
        Ok(PointRegions {
            dims: d,
            with_alt: f.create_region(&[d.lat, d.lon, d.fl]).map_err(e)?,
            without_alt: f.create_region(&[d.lat, d.lon]).map_err(e)?,
        })
    }

    /// The region of a track at `p`, committed.
    pub(super) fn at(&self, f: &Federate, p: Point) -> Result<RegionHandle, String> {
        let d = self.dims;
        let r = if p.fl.is_some() {
            self.with_alt
        } else {
            self.without_alt
        };
        set(f, r, d.lat, [p.lat, p.lat + 1])?;
        set(f, r, d.lon, [p.lon, p.lon + 1])?;
        if let Some(fl) = p.fl {
            set(f, r, d.fl, [fl, fl + 1])?;
        }
        f.commit_region_modifications(&[r])
            .map_err(|e| format!("the track's region: {e}"))?;
        Ok(r)
    }
}

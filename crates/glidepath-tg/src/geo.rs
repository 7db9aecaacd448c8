//! Positions on a spherical Earth: great-circle distance and initial bearing, for
//! guidance and for the scenario generator.

/// Mean Earth radius, m (IUGG).
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Great-circle distance in metres between two positions given in radians.
pub fn distance_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let dlat = lat2 - lat1;
    let dlon = lon2 - lon1;
    let a = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * a.sqrt().min(1.0).asin()
}

/// Initial great-circle bearing from the first position to the second, radians
/// clockwise from true north in [0, 2π).
pub fn bearing_rad(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let dlon = lon2 - lon1;
    let y = dlon.sin() * lat2.cos();
    let x = lat1.cos() * lat2.sin() - lat1.sin() * lat2.cos() * dlon.cos();
    wrap_2pi(y.atan2(x))
}

/// The position `distance_m` metres from a start along a great circle of initial
/// bearing `bearing` (radians), as (lat, lon) in radians.
pub fn destination(lat: f64, lon: f64, bearing: f64, distance_m: f64) -> (f64, f64) {
    let d = distance_m / EARTH_RADIUS_M;
    let lat2 = (lat.sin() * d.cos() + lat.cos() * d.sin() * bearing.cos()).asin();
    let lon2 = lon + (bearing.sin() * d.sin() * lat.cos()).atan2(d.cos() - lat.sin() * lat2.sin());
    (lat2, wrap_pi(lon2))
}

/// An angle in [0, 2π).
pub fn wrap_2pi(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    let r = a % t;
    if r < 0.0 {
        r + t
    } else {
        r
    }
}

/// An angle in (−π, π].
pub fn wrap_pi(a: f64) -> f64 {
    let r = wrap_2pi(a);
    if r > std::f64::consts::PI {
        r - std::f64::consts::TAU
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sfo_to_jfk_is_4152_km_on_the_sphere_and_destination_inverts() {
        let (sfo, jfk) = ((37.6188f64, -122.3754f64), (40.6398f64, -73.7789f64));
        let r = |d: f64| d.to_radians();
        let d = distance_m(r(sfo.0), r(sfo.1), r(jfk.0), r(jfk.1));
        // 4,162 km on the WGS-84 ellipsoid (2,586 statute miles); 4,152 km on the sphere.
        assert!((d / 1000.0 - 4_152.0).abs() < 2.0, "{d}");
        let b = bearing_rad(r(sfo.0), r(sfo.1), r(jfk.0), r(jfk.1));
        let (lat, lon) = destination(r(sfo.0), r(sfo.1), b, d);
        assert!((lat - r(jfk.0)).abs() < 1e-9 && (lon - r(jfk.1)).abs() < 1e-9);
        assert!((wrap_pi(3.5 * std::f64::consts::PI) + 0.5 * std::f64::consts::PI).abs() < 1e-12);
    }
}

//! Which model steps an aircraft: the point-mass dynamics, or DASE's stand-in (a fixed
//! cost per step, then straight flight), so the paper's Table 1 can be compared like
//! for like.

use std::time::{Duration, Instant};

use crate::dynamics::{Aircraft, Wind};
use crate::perf::PerformanceTable;

/// The model a processing node steps its aircraft with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// The 3-degree-of-freedom point-mass model of [`crate::dynamics`].
    PointMass,
    /// DASE's stand-in for a look-up-table model: each step costs `cost` of busy CPU
    /// time (DASE slept; a sleeping step would cost a pool thread nothing and measure
    /// only the scheduler), then the aircraft flies straight on.
    StandIn {
        /// The fixed cost of one step.
        cost: Duration,
    },
}

impl Model {
    /// The name used on the command line and in benchmark JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Model::PointMass => "point-mass",
            Model::StandIn { .. } => "stand-in",
        }
    }

    /// Advances one aircraft by `dt` seconds.
    pub fn step(&self, table: &PerformanceTable, aircraft: &mut Aircraft, dt: f64, wind: Wind) {
        match self {
            Model::PointMass => {
                let perf = table
                    .get(aircraft.type_index)
                    .expect("aircraft carry indices of the node's own table");
                aircraft.step(perf, dt, wind);
            }
            Model::StandIn { cost } => {
                let start = Instant::now();
                while start.elapsed() < *cost {
                    std::hint::spin_loop();
                }
                aircraft.dead_reckon(dt, wind);
            }
        }
    }
}

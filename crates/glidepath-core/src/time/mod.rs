//! Time management: GALT from time statuses alone (`galt`), one federate's time state
//! (`state`) and the services that drive it (`management`).

mod galt;
mod management;
mod queries;
pub(crate) mod state;

pub use galt::{galt_bound, RegulatorView};
pub use state::TimeSnapshot;

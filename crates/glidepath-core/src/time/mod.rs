//! Time management: GALT from time statuses alone (`galt`), one federate's time state
//! (`state`) and the services that drive it (`management`).

mod finished;
mod galt;
pub(crate) mod handles;
mod management;
mod queries;
pub(crate) mod state;

pub use galt::{galt_bound, RegulatorView};
pub use state::TimeSnapshot;

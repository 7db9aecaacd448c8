//! The endpoint's side of cells ([`super::cells`]): which envelopes go to cells and
//! their accounts (sending), and which cell subjects the endpoint subscribes for each
//! data topic it reads (receiving).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use async_nats::{Client, Subscriber};
use bytes::Bytes;
use glidepath_core::{Envelope, FederateHandle, FederationId, RegionSet, Topic};
use parking_lot::{Mutex, RwLock};
use tokio::sync::mpsc::UnboundedSender;

use super::cells::{
    grid_axes, Account, CellGrid, CellInterest, CellView, OpenAccounts, ACCOUNT_IDLE,
    RECEIVE_CELLS_MAX, SEND_CELLS_MAX,
};
use super::subject::{cell_subject, cell_wildcard, cells_subject};
use super::{frames, subscribe_error, NatsEndpoint};
use crate::TransportError;

/// What a federation's reader is told about its cell subscriptions.
pub(super) enum CellCommand {
    /// Read this subscription too.
    Add(String, Subscriber),
    /// Stop reading this subject (dropping the subscription unsubscribes it).
    Remove(String),
}

/// The receiving side of one federation: what the reader sees, what this endpoint
/// was told and subscribed, and the way to the reader.
pub(super) struct FederationCells {
    pub(super) view: Arc<RwLock<CellView>>,
    told: HashMap<Topic, Option<RegionSet>>,
    subscribed: HashMap<Topic, BTreeSet<String>>,
    commands: UnboundedSender<CellCommand>,
}

impl FederationCells {
    pub(super) fn new(commands: UnboundedSender<CellCommand>) -> FederationCells {
        FederationCells {
            view: Arc::new(RwLock::new(CellView::default())),
            told: HashMap::new(),
            subscribed: HashMap::new(),
            commands,
        }
    }
}

/// The sending side, shared with the thread that publishes accounts of idle senders.
pub(super) struct CellSender {
    client: Client,
    accounts: Mutex<OpenAccounts>,
    any_open: AtomicBool,
    /// When the last cell envelope was published (ns since `origin`).
    last_ns: AtomicU64,
    origin: Instant,
    stop: AtomicBool,
    thread: Mutex<Option<std::thread::Thread>>,
}

impl CellSender {
    fn publish_account(&self, federation: FederationId, account: &Account) {
        let sent = futures::executor::block_on(
            self.client
                .publish(cells_subject(federation), account.encode()),
        );
        if let Err(e) = sent {
            // The receivers NACK the holes instead: nothing is lost.
            tracing::debug!(error = %e, "could not publish a cell account");
        }
    }

    /// Publishes every open account (the lock is not taken when none is open: a
    /// flush on every time advance request costs an atomic load).
    pub(super) fn publish_all(&self) {
        if !self.any_open.load(Ordering::Acquire) {
            return;
        }
        let mut accounts = self.accounts.lock();
        for (federation, account) in accounts.take_all() {
            self.publish_account(federation, &account);
        }
        self.any_open.store(false, Ordering::Release);
    }

    fn since(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// The thread publishing the accounts of senders idle for [`ACCOUNT_IDLE`].
    fn run(self: Arc<Self>) {
        let idle = ACCOUNT_IDLE.as_nanos() as u64;
        while !self.stop.load(Ordering::Acquire) {
            if !self.any_open.load(Ordering::Acquire) {
                std::thread::park_timeout(std::time::Duration::from_millis(100));
                continue;
            }
            std::thread::sleep(ACCOUNT_IDLE);
            let quiet = self
                .since()
                .saturating_sub(self.last_ns.load(Ordering::Acquire));
            if quiet >= idle {
                self.publish_all();
            }
        }
    }

    pub(super) fn close(&self) {
        self.publish_all();
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.lock().as_ref() {
            t.unpark();
        }
    }
}

/// An endpoint's cells: off unless reliable delivery runs over plain core NATS.
pub(super) struct Cells {
    enabled: bool,
    slices: u32,
    names: Vec<String>,
    grids: RwLock<HashMap<FederationId, Arc<CellGrid>>>,
    pub(super) sender: Arc<CellSender>,
}

impl Cells {
    pub(super) fn new(enabled: bool, slices: u32, names: Vec<String>, client: Client) -> Cells {
        Cells {
            enabled: enabled && slices > 0,
            slices,
            names,
            grids: RwLock::new(HashMap::new()),
            sender: Arc::new(CellSender {
                client,
                accounts: Mutex::new(OpenAccounts::default()),
                any_open: AtomicBool::new(false),
                last_ns: AtomicU64::new(0),
                origin: Instant::now(),
                stop: AtomicBool::new(false),
                thread: Mutex::new(None),
            }),
        }
    }

    pub(super) fn grid(&self, federation: FederationId) -> Option<Arc<CellGrid>> {
        self.grids.read().get(&federation).cloned()
    }

    /// The cells an envelope goes to instead of its topic's subject, if any.
    pub(super) fn route(
        &self,
        federation: FederationId,
        envelope: &Envelope,
    ) -> Option<(Arc<CellGrid>, Vec<u32>)> {
        if !self.enabled || envelope.sender == FederateHandle::EXECUTIVE {
            return None;
        }
        let regions = envelope.body.regions()?;
        let grid = self.grid(federation)?;
        let cells = grid.cells(regions, SEND_CELLS_MAX)?;
        Some((grid, cells))
    }

    /// Before an envelope goes to the federation's subjects: the account of what its
    /// sender sent to cells since its last one goes first.
    pub(super) fn before_main(&self, federation: FederationId, sender: FederateHandle) {
        if !self.sender.any_open.load(Ordering::Acquire) {
            return;
        }
        let mut accounts = self.sender.accounts.lock();
        if let Some(account) = accounts.take(federation, sender) {
            self.sender.publish_account(federation, &account);
        }
        if accounts.is_empty() {
            self.sender.any_open.store(false, Ordering::Release);
        }
    }

    /// Publishes an envelope (already kept by reliable delivery) on its cells and
    /// records it in its sender's account.
    pub(super) fn publish(
        &self,
        client: &Client,
        federation: FederationId,
        topic: Topic,
        envelope: &Envelope,
        payload: Bytes,
        (grid, cells): (Arc<CellGrid>, Vec<u32>),
    ) -> Result<(), TransportError> {
        let mut accounts = self.sender.accounts.lock();
        for cell in &cells {
            let Some(subject) = cell_subject(federation, grid.id(), topic, *cell) else {
                continue;
            };
            futures::executor::block_on(client.publish(subject, payload.clone()))
                .map_err(|e| frames::publish_error(client, &e))?;
        }
        let due = accounts.record(
            federation,
            grid.id(),
            envelope.sender,
            envelope.seq,
            topic,
            &cells,
        );
        self.sender
            .last_ns
            .store(self.sender.since(), Ordering::Release);
        self.sender.any_open.store(true, Ordering::Release);
        if due {
            if let Some(account) = accounts.take(federation, envelope.sender) {
                self.sender.publish_account(federation, &account);
            }
        }
        drop(accounts);
        self.wake_account_thread();
        Ok(())
    }

    /// Wakes the account thread, starting it the first time.
    fn wake_account_thread(&self) {
        let mut thread = self.sender.thread.lock();
        match thread.as_ref() {
            Some(t) => t.unpark(),
            None => {
                let sender = self.sender.clone();
                match std::thread::Builder::new()
                    .name("glidepath-cell-accounts".into())
                    .spawn(move || sender.run())
                {
                    Ok(handle) => *thread = Some(handle.thread().clone()),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot start the cell account thread; accounts go out with the next envelope or flush")
                    }
                }
            }
        }
    }

    /// Sets a federation's grid from its FOM's dimensions (handle, name, upper bound).
    pub(super) fn set_grid(
        &self,
        federation: FederationId,
        dimensions: &[(glidepath_core::DimensionHandle, String, u64)],
    ) -> Result<bool, TransportError> {
        if !self.enabled {
            return Ok(false);
        }
        let axes =
            grid_axes(dimensions, &self.names).map_err(TransportError::InvalidConfiguration)?;
        let Some(grid) = CellGrid::new(&axes, self.slices) else {
            return Ok(false);
        };
        self.grids.write().insert(federation, Arc::new(grid));
        Ok(true)
    }

    /// What a data topic should read through cells, given what the core told.
    fn desired(
        &self,
        federation: FederationId,
        grid: &CellGrid,
        topic: Topic,
        told: Option<&RegionSet>,
    ) -> Option<(CellInterest, BTreeSet<String>)> {
        let cells = told.and_then(|r| grid.cells(r, RECEIVE_CELLS_MAX));
        match cells {
            Some(cells) => {
                let subjects = cells
                    .iter()
                    .filter_map(|c| cell_subject(federation, grid.id(), topic, *c))
                    .collect();
                Some((
                    CellInterest::Cells(cells.into_iter().collect::<HashSet<_>>()),
                    subjects,
                ))
            }
            None => Some((
                CellInterest::All,
                BTreeSet::from([cell_wildcard(federation, grid.id(), topic)?]),
            )),
        }
    }
}

impl NatsEndpoint {
    /// Brings a data topic's cell subscriptions in line with what the core told
    /// (`regions`: `None` reads every cell), effective on return: the new cells are
    /// subscribed and confirmed by the server before the reader's view changes, the
    /// old ones dropped after.
    pub(super) fn refresh_cells(
        &self,
        federation: FederationId,
        fc: &mut FederationCells,
        topic: Topic,
    ) -> Result<(), TransportError> {
        let Some(grid) = self.cells.grid(federation) else {
            return Ok(());
        };
        let told = fc.told.get(&topic).cloned().flatten();
        let Some((interest, want)) = self.cells.desired(federation, &grid, topic, told.as_ref())
        else {
            return Ok(());
        };
        // The reader reads cell subjects by the grid's id: known before any of them
        // can arrive.
        fc.view.write().grid = Some(grid.id());
        let have = fc.subscribed.remove(&topic).unwrap_or_default();
        let transport = &self.transport;
        let mut added = Vec::new();
        for subject in want.difference(&have) {
            let sub = transport
                .block_on(self.client.subscribe(subject.clone()))
                .map_err(subscribe_error)?;
            added.push((subject.clone(), sub));
        }
        if !added.is_empty() {
            transport.block_on(super::barrier(
                &self.client,
                transport.options.request_timeout,
            ))?;
        }
        for (subject, sub) in added {
            let _ = fc.commands.send(CellCommand::Add(subject, sub));
        }
        fc.view.write().interest.insert(topic, interest);
        for subject in have.difference(&want) {
            let _ = fc.commands.send(CellCommand::Remove(subject.clone()));
        }
        fc.subscribed.insert(topic, want);
        Ok(())
    }

    /// A data topic subscribed: read it through cells too (every cell until told
    /// otherwise).
    pub(super) fn cells_subscribed(
        &self,
        federation: FederationId,
        fc: &mut FederationCells,
        topic: Topic,
    ) -> Result<(), TransportError> {
        if !matches!(topic, Topic::ObjectClass(_) | Topic::InteractionClass(_)) {
            return Ok(());
        }
        fc.told.entry(topic).or_insert(None);
        self.refresh_cells(federation, fc, topic)
    }

    /// What the core wants of a topic changed.
    pub(super) fn cells_told(
        &self,
        federation: FederationId,
        fc: &mut FederationCells,
        topic: Topic,
        regions: Option<RegionSet>,
    ) -> Result<(), TransportError> {
        fc.told.insert(topic, regions);
        self.refresh_cells(federation, fc, topic)
    }

    /// A topic no longer read: its cells go.
    pub(super) fn cells_unsubscribed(fc: &mut FederationCells, topic: Topic) {
        fc.told.remove(&topic);
        fc.view.write().interest.remove(&topic);
        for subject in fc.subscribed.remove(&topic).unwrap_or_default() {
            let _ = fc.commands.send(CellCommand::Remove(subject));
        }
    }
}

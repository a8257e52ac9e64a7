//! Where the actor's results go out: events to subscribers, warnings, the counters behind the
//! stats, and each send's fate (to its handle and to the drain report being collected).

use super::events::ClientEvent;
use super::fate::{DrainReport, Fate};
use super::fate_cell::FateTx;
use super::pending::Pending;
use super::ClientShared;
use crate::warning::{Warning, WarningCode};
use std::sync::Arc;
use std::time::SystemTime;
use tokio::sync::broadcast;

pub(crate) struct Outbox {
    shared: Arc<ClientShared>,
    events: broadcast::Sender<ClientEvent>,
    /// Collects what closing or destroying settles.
    report: Option<DrainReport>,
    /// Set while the link loop credits a read's worth of ACKs, to the read's wall-clock time
    /// (taken once for all its ACKs). Meanwhile room is given back at once but waiters are
    /// woken once after, so they find all of it, not one send's worth.
    read_wall: Option<SystemTime>,
    /// Meanwhile, whether a send was settled yet: the first is counted and handed over at
    /// once (a read usually brings one ACK when sends go one at a time).
    settled_one: bool,
    /// The sends settled after it (where each fate goes, the fate, whether the send was
    /// committed): counted under one lock once the read is credited, and their fates handed
    /// over only then, so a fate is never seen before it is counted.
    settled: Vec<(FateTx, Fate, bool)>,
}

impl Outbox {
    pub(crate) fn new(shared: Arc<ClientShared>, events: broadcast::Sender<ClientEvent>) -> Self {
        Outbox {
            shared,
            events,
            report: None,
            read_wall: None,
            settled_one: false,
            settled: Vec::new(),
        }
    }

    pub(crate) fn shared(&self) -> &ClientShared {
        &self.shared
    }

    pub(crate) fn emit(&self, event: ClientEvent) {
        // No subscriber is fine: events are also counted in the stats.
        let _ = self.events.send(event);
    }

    pub(crate) fn warn(&self, code: WarningCode, byte_offset: Option<u64>) {
        self.shared.counters().record_warning(code);
        self.emit(ClientEvent::Warning(Warning { code, byte_offset }));
    }

    /// Decide a send's fate: give back its room, count it, tell its handle and the report.
    pub(crate) fn settle(&mut self, p: Box<Pending>, fate: Fate) {
        let id = p.id;
        let committed = p.commit.is_some();
        let fate_tx = p.release(self.read_wall.is_some());
        if let Some(report) = &mut self.report {
            report.record(id, &fate);
        }
        if self.read_wall.is_some() && std::mem::replace(&mut self.settled_one, true) {
            self.settled.push((fate_tx, fate, committed));
            return;
        }
        self.shared
            .counters()
            .record_settled(&fate, committed, self.read_wall);
        fate_tx.send(fate);
    }

    /// Start collecting a drain report, unless one is being collected already.
    pub(crate) fn start_report(&mut self) {
        self.report.get_or_insert_with(DrainReport::default);
    }

    /// The report being collected, if any.
    pub(crate) fn report_mut(&mut self) -> Option<&mut DrainReport> {
        self.report.as_mut()
    }

    /// The report collected so far (empty when none was), ending its collection.
    pub(crate) fn take_report(&mut self) -> DrainReport {
        self.report.take().unwrap_or_default()
    }

    /// Credit a read's worth of ACKs under one wall-clock reading, waking waiters once after.
    pub(crate) fn begin_read(&mut self) {
        self.read_wall = Some(SystemTime::now());
    }

    pub(crate) fn end_read(&mut self) {
        let wall = self.read_wall.take();
        self.settled_one = false;
        if let (Some(wall), false) = (wall, self.settled.is_empty()) {
            let settled = self.settled.iter().map(|(_, fate, c)| (fate, *c));
            self.shared.counters().record_settled_all(settled, wall);
            for (fate_tx, fate, _) in self.settled.drain(..) {
                fate_tx.send(fate);
            }
        }
        self.shared.admission.wake();
    }
}

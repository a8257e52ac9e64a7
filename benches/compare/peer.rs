//! The senders and receivers compared: the floor's, ours, and each library's, by name.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Client {
    Floor,
    /// The same floor sender written in C (`benches/floor/floor.c`).
    FloorC,
    Send,
    /// `mllp send --connections 4 --order-key PID-3`: keyed parallel links.
    SendKeyed,
    PyAsyncio,
    PyMllpSend,
    NodeHl7,
    SimpleHl7,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Server {
    Floor,
    FloorC,
    Listen,
    PyAsyncio,
    NodeHl7,
    SimpleHl7,
}

impl Client {
    pub fn label(self) -> &'static str {
        match self {
            Client::Floor => "floor send",
            Client::FloorC => "C floor send",
            Client::Send => "mllp send",
            Client::SendKeyed => "mllp send --connections 4 --order-key PID-3",
            Client::PyAsyncio => "python-hl7 asyncio client",
            Client::PyMllpSend => "python-hl7 mllp_send",
            Client::NodeHl7 => "node-hl7-client",
            Client::SimpleHl7 => "simple-hl7 client",
        }
    }

    /// Whether its CPU is the whole process's (start-up included), so a one-message run gives
    /// the fixed part; the interpreted clients report their measured interval instead.
    pub fn whole_process_cpu(self) -> bool {
        matches!(
            self,
            Client::Floor | Client::FloorC | Client::Send | Client::SendKeyed
        )
    }

    /// Why this client cannot have `window` messages unacknowledged, when it cannot.
    pub fn cannot_pipeline(self) -> Option<&'static str> {
        (self == Client::PyMllpSend).then_some(
            "not supported: MLLPClient.send_message writes one message and blocks on its ACK",
        )
    }
}

impl Server {
    pub fn label(self) -> &'static str {
        match self {
            Server::Floor => "floor recv",
            Server::FloorC => "C floor recv",
            Server::Listen => "mllp listen",
            Server::PyAsyncio => "python-hl7 asyncio server",
            Server::NodeHl7 => "node-hl7-server",
            Server::SimpleHl7 => "simple-hl7 server",
        }
    }
}

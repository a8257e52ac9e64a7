//! Loopback ports that refuse connections.

/// A port on 127.0.0.1 that refuses connections for as long as the tests run. It is bound and
/// never listened on: a port bound and let go can be given to the next listener on port 0 (the
/// relay under test, or a peer of a test running beside it), which would then answer. Bound
/// with `SO_REUSEADDR`, so a test can still start its own listener on it later by number (the
/// engine coming up); the kernel never hands it out for port 0 while it is held.
pub fn closed_port() -> u16 {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    // Held until the test binary exits, so the port is never given out again.
    std::mem::forget(socket);
    port
}

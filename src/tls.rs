//! TLS configuration through rustls (ring provider): client verification, mTLS, server client-auth.

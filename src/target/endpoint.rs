//! Where to connect, from the pieces people give: a `HOST[:PORT]`, a separate port, and whether
//! each came from the command line or from the environment (`MLLP_HOST`, `MLLP_PORT`).

use super::{Target, DEFAULT_PORT};

/// Where the endpoint's parts came from: the command line, or `MLLP_HOST`/`MLLP_PORT`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origin {
    /// The host came from `MLLP_HOST`.
    pub host_from_env: bool,
    /// The port came from `MLLP_PORT`.
    pub port_from_env: bool,
}

/// Why the pieces name no single endpoint. The text names the pieces, not the command's
/// options: a command words them with its own flags.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// A port in `MLLP_HOST` and another in `MLLP_PORT`.
    #[error(
        "the port is given twice, in MLLP_HOST={host} and MLLP_PORT={port}: set it in one of them"
    )]
    PortTwiceInEnvironment {
        /// The host with its port.
        host: Target,
        /// The separate port.
        port: u16,
    },
    /// A port in the host and another given separately, both on the command line.
    #[error("the port is given twice, in the host {host} and separately as {port}: give it once")]
    PortTwice {
        /// The host with its port.
        host: Target,
        /// The separate port.
        port: u16,
    },
    /// The endpoint twice on one command line (as an argument and as the host option).
    #[error("the endpoint is given twice: give it once")]
    Twice,
    /// No endpoint at all.
    #[error("no endpoint: name one, HOST[:PORT]")]
    Missing,
}

impl Target {
    /// The same host with no port.
    pub fn without_port(&self) -> Target {
        Target {
            port: None,
            ..self.clone()
        }
    }
}

/// Host and port to connect to. A port given both in `HOST:PORT` and by `port` is refused when
/// both come from the same place; otherwise the command line beats the environment. No port at
/// all is [`DEFAULT_PORT`].
pub fn endpoint(
    host: &Target,
    port: Option<u16>,
    origin: Origin,
) -> Result<(String, u16), EndpointError> {
    let port = match (host.port, port) {
        (Some(_), Some(port)) if origin.host_from_env == origin.port_from_env => {
            let host = host.clone();
            return Err(if origin.host_from_env {
                EndpointError::PortTwiceInEnvironment { host, port }
            } else {
                EndpointError::PortTwice { host, port }
            });
        }
        (Some(a), Some(b)) => {
            if origin.port_from_env {
                a
            } else {
                b
            }
        }
        (Some(p), None) | (None, Some(p)) => p,
        (None, None) => DEFAULT_PORT,
    };
    Ok((host.host.clone(), port))
}

/// Host and port from an optional positional endpoint and an optional host option (from the
/// command line or `MLLP_HOST`): one of them, never both from the command line.
pub fn endpoint_of(
    positional: Option<&Target>,
    host: Option<&Target>,
    port: Option<u16>,
    origin: Origin,
) -> Result<(String, u16), EndpointError> {
    match (positional, host) {
        (Some(_), Some(_)) if !origin.host_from_env => Err(EndpointError::Twice),
        (Some(target), _) => endpoint(
            target,
            port,
            Origin {
                host_from_env: false,
                ..origin
            },
        ),
        (None, Some(host)) => endpoint(host, port, origin),
        (None, None) => Err(EndpointError::Missing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_beats_the_environment_and_never_contradicts_itself() {
        let t = |text: &str| Target::parse(text).unwrap();
        let cli = Origin::default();
        let env_host = Origin {
            host_from_env: true,
            port_from_env: false,
        };
        let env_both = Origin {
            host_from_env: true,
            port_from_env: true,
        };
        let env_port = Origin {
            host_from_env: false,
            port_from_env: true,
        };
        let refused = |host: &str, port, origin| {
            endpoint(&t(host), Some(port), origin)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(endpoint(&t("h"), None, cli), Ok(("h".into(), 2575)));
        assert_eq!(endpoint(&t("h:1"), None, cli), Ok(("h".into(), 1)));
        assert_eq!(endpoint(&t("h"), Some(2), cli), Ok(("h".into(), 2)));
        assert_eq!(
            endpoint(&t("h:1"), Some(2), cli),
            Err(EndpointError::PortTwice {
                host: t("h:1"),
                port: 2
            })
        );
        assert!(endpoint(&t("h:1"), Some(1), cli).is_err());
        assert!(refused("h:1", 2, env_both).contains("MLLP_HOST=h:1"));
        assert_eq!(endpoint(&t("h:1"), Some(2), env_host), Ok(("h".into(), 2)));
        assert_eq!(endpoint(&t("h:1"), Some(2), env_port), Ok(("h".into(), 1)));
        assert_eq!(endpoint(&t("[::1]:9"), None, cli), Ok(("::1".into(), 9)));
    }

    #[test]
    fn a_positional_endpoint_and_host_are_one_or_the_other() {
        let t = |text: &str| Target::parse(text).unwrap();
        let cli = Origin::default();
        let env_host = Origin {
            host_from_env: true,
            port_from_env: false,
        };
        let (a, b) = (t("a:1"), t("b:2"));
        assert_eq!(
            endpoint_of(Some(&a), Some(&b), None, cli),
            Err(EndpointError::Twice)
        );
        assert_eq!(
            endpoint_of(Some(&a), Some(&b), None, env_host),
            Ok(("a".into(), 1))
        );
        assert_eq!(endpoint_of(None, Some(&b), None, cli), Ok(("b".into(), 2)));
        assert_eq!(
            endpoint_of(None, None, None, cli),
            Err(EndpointError::Missing)
        );
    }
}

//! Where the PostgreSQL sink connects, the way libpq reads it: the connection string (a
//! `postgres://` URL or `key=value` pairs), then the `PG*` environment for what it leaves out,
//! then the password file (`PGPASSFILE`, else `~/.pgpass`). tokio-postgres parses the string but
//! reads neither the environment nor the password file, and knows only three `sslmode`s; the
//! libpq-only settings (`sslmode=verify-ca|verify-full|allow`, `sslrootcert`) are taken out here.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;
use tokio_postgres::config::{Host, SslMode as WireSslMode};
use tokio_postgres::Config;

/// libpq's `sslmode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    /// No TLS.
    Disable,
    /// TLS if the server insists (here: as `prefer`).
    Allow,
    /// TLS if the server offers it.
    Prefer,
    /// TLS always, the certificate not verified.
    Require,
    /// TLS always, the certificate verified against the roots.
    VerifyCa,
    /// TLS always, the certificate verified and naming the host.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// What tokio-postgres does on the wire: the verifying modes require TLS.
    fn wire(self) -> WireSslMode {
        match self {
            SslMode::Disable => WireSslMode::Disable,
            SslMode::Allow | SslMode::Prefer => WireSslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => WireSslMode::Require,
        }
    }
}

/// A connection string that cannot be used. Never holds the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnInfoError {
    #[error("not a PostgreSQL connection string ({what}); expected postgres://USER@HOST:PORT/DB or key=value pairs")]
    /// Neither a URL nor key=value pairs.
    Parse {
        /// What could not be read.
        what: String,
    },
    #[error("sslmode {0:?} is not one of disable, allow, prefer, require, verify-ca, verify-full")]
    /// An unknown `sslmode`.
    SslMode(String),
    #[error("{name} {value:?} is not a number")]
    /// A numeric setting that is not a number.
    Number {
        /// The setting.
        name: &'static str,
        /// The value given.
        value: String,
    },
}

/// Everything needed to connect.
#[derive(Clone)]
pub(crate) struct ConnInfo {
    /// Host, port, user, database and password for the driver.
    pub config: Config,
    /// The `sslmode` asked for.
    pub ssl_mode: SslMode,
    /// `sslrootcert`: a PEM file of trusted roots, or `system` for the system's.
    pub root_cert: Option<String>,
}

impl std::fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // tokio-postgres's own Debug redacts the password.
        f.debug_struct("ConnInfo")
            .field("config", &self.config)
            .field("ssl_mode", &self.ssl_mode)
            .field("root_cert", &self.root_cert)
            .finish()
    }
}

impl ConnInfo {
    /// Where the connection goes, for diagnostics: `user@host:port/db`, never the password.
    pub(crate) fn describe(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => String::new(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!(
            "{}@{host}:{port}/{}",
            self.config.get_user().unwrap_or(""),
            self.config.get_dbname().unwrap_or("")
        )
    }
}

/// Read `url`, then fill what it leaves out from `env` (the `PG*` variables) and the password
/// file, as libpq does. `env` is a parameter so tests need not touch the process environment.
pub(crate) fn resolve(
    url: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ConnInfo, ConnInfoError> {
    let (rest, extracted) = take_libpq_only(url);
    let rest = with_env_port(&rest, env("PGPORT").as_deref());
    let mut config = Config::from_str(&rest).map_err(|e| ConnInfoError::Parse {
        // tokio-postgres's parse errors name the option, not its value.
        what: e.to_string(),
    })?;
    let ssl_value = extracted.ssl_mode.or_else(|| env("PGSSLMODE"));
    let ssl_mode = match ssl_value {
        Some(v) => SslMode::parse(&v).ok_or(ConnInfoError::SslMode(v))?,
        None => SslMode::Prefer,
    };
    config.ssl_mode(ssl_mode.wire());
    let root_cert = extracted.root_cert.or_else(|| env("PGSSLROOTCERT"));
    if config.get_hosts().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "localhost".into());
        for host in hosts.split(',') {
            config.host(host);
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT") {
            let port = port.parse().map_err(|_| ConnInfoError::Number {
                name: "PGPORT",
                value: port.clone(),
            })?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        let user = env("PGUSER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
            .unwrap_or_else(|| "postgres".into());
        config.user(user);
    }
    if config.get_dbname().is_none() {
        if let Some(db) = env("PGDATABASE") {
            config.dbname(db);
        }
    }
    if config.get_application_name().is_none() {
        config.application_name(env("PGAPPNAME").unwrap_or_else(|| "mllp listen".into()));
    }
    if config.get_connect_timeout().is_none() {
        let secs = match env("PGCONNECT_TIMEOUT") {
            Some(v) => v.parse().map_err(|_| ConnInfoError::Number {
                name: "PGCONNECT_TIMEOUT",
                value: v.clone(),
            })?,
            None => 10,
        };
        config.connect_timeout(Duration::from_secs(secs.max(2)));
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        } else if let Some(file) = env("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")))
        {
            if let Some(password) = password_from_file(&file, &config) {
                config.password(password);
            }
        }
    }
    Ok(ConnInfo {
        config,
        ssl_mode,
        root_cert,
    })
}

#[derive(Default)]
struct Extracted {
    ssl_mode: Option<String>,
    root_cert: Option<String>,
}

/// Take `sslmode` and `sslrootcert` out of the string (tokio-postgres rejects libpq's other
/// modes and this option), leaving the rest as written.
fn take_libpq_only(url: &str) -> (String, Extracted) {
    let mut found = Extracted::default();
    let mut keep = |key: &str, value: String| -> bool {
        match key {
            "sslmode" => found.ssl_mode = Some(value),
            "sslrootcert" => found.root_cert = Some(value),
            _ => return true,
        }
        false
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else {
            return (url.to_string(), found);
        };
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                keep(k, percent_decode(v))
            })
            .collect();
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return (rest, found);
    }
    let mut rest = String::new();
    for token in key_value_tokens(url) {
        let (k, v) = token.split_once('=').unwrap_or((token, ""));
        let (k, v) = (k.trim(), v.trim());
        if keep(k, unquote(v)) {
            rest.push_str(token);
            rest.push(' ');
        }
    }
    (rest.trim_end().to_string(), found)
}

/// tokio-postgres gives a URL host without a port 5432, so `PGPORT` goes into the URL itself
/// for the hosts that name no port.
fn with_env_port(url: &str, port: Option<&str>) -> String {
    let Some(port) = port else {
        return url.to_string();
    };
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let tail = &url[scheme_end..];
    let authority_len = tail.find(['/', '?']).unwrap_or(tail.len());
    let authority = &tail[..authority_len];
    let hosts_at = authority.rfind('@').map_or(0, |i| i + 1);
    let hosts = &authority[hosts_at..];
    if hosts.is_empty() {
        return url.to_string();
    }
    let hosts: Vec<String> = hosts
        .split(',')
        .map(|h| {
            let explicit = match h.strip_prefix('[') {
                Some(v6) => v6.contains("]:"),
                None => h.contains(':'),
            };
            if explicit {
                h.to_string()
            } else {
                format!("{h}:{port}")
            }
        })
        .collect();
    format!(
        "{}{}{}{}",
        &url[..scheme_end],
        &authority[..hosts_at],
        hosts.join(","),
        &tail[authority_len..]
    )
}

/// The `key = value` pairs of a libpq string, each as written (quotes and escapes kept).
fn key_value_tokens(s: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        // the key, then optional spaces, '=', optional spaces
        while i < bytes.len() && bytes[i] != b'=' && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'=') {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'\'' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
        }
        let end = i.min(bytes.len());
        if end > start {
            tokens.push(&s[start..end]);
        }
    }
    tokens
}

fn unquote(v: &str) -> String {
    let v = v
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .unwrap_or(v);
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' {
            chars.next().unwrap_or('\\')
        } else {
            c
        });
    }
    out
}

fn percent_decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| {
            std::str::from_utf8(h)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        });
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The password for `config`'s first host, port, database and user from a `.pgpass` file:
/// `host:port:database:user:password` lines, `*` matching anything, `\` escaping `:` and `\`.
/// Like libpq, a file readable by group or others is not used.
fn password_from_file(file: &Path, config: &Config) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        // libpq matches a socket directory as `localhost`.
        Host::Unix(_) => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    lookup_pgpass(&text, [&host, &port, db, user])
}

/// The first line of a `.pgpass` text matching `wanted` (host, port, database, user).
pub(crate) fn lookup_pgpass(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want);
            matches.then(|| fields[4].clone())
        })
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("never empty").extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests;

use super::*;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn a_url_keeps_its_settings_and_the_environment_fills_the_rest() {
    let env = env_of(&[
        ("PGUSER", "envuser"),
        ("PGDATABASE", "envdb"),
        ("PGPORT", "6543"),
    ]);
    let info = resolve("postgres://alice@db.example:5544/feeds", &env).unwrap();
    assert_eq!(info.config.get_user(), Some("alice"));
    assert_eq!(info.config.get_dbname(), Some("feeds"));
    assert_eq!(info.config.get_ports(), &[5544]);
    assert_eq!(info.ssl_mode, SslMode::Prefer);
    let info = resolve("postgres://db.example", &env).unwrap();
    assert_eq!(info.config.get_user(), Some("envuser"));
    assert_eq!(info.config.get_dbname(), Some("envdb"));
    assert_eq!(info.config.get_ports(), &[6543]);
}

#[test]
fn libpq_only_ssl_settings_are_taken_out_of_urls_and_pairs() {
    let env = env_of(&[]);
    let info = resolve(
        "postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&application_name=x",
        &env,
    )
    .unwrap();
    assert_eq!(info.ssl_mode, SslMode::VerifyFull);
    assert_eq!(info.root_cert.as_deref(), Some("/tmp/ca.pem"));
    assert_eq!(info.config.get_application_name(), Some("x"));
    assert_eq!(info.config.get_ssl_mode(), WireSslMode::Require);
    let info = resolve(
        "host=h user=u password='a b\\'c' sslmode = verify-ca dbname=d",
        &env,
    )
    .unwrap();
    assert_eq!(info.ssl_mode, SslMode::VerifyCa);
    assert_eq!(info.config.get_password(), Some(&b"a b'c"[..]));
    assert_eq!(info.config.get_dbname(), Some("d"));
    let env = env_of(&[("PGSSLMODE", "disable")]);
    assert_eq!(resolve("host=h", &env).unwrap().ssl_mode, SslMode::Disable);
    assert_eq!(
        resolve("host=h sslmode=sometimes", &env).unwrap_err(),
        ConnInfoError::SslMode("sometimes".into())
    );
}

#[test]
fn the_password_comes_from_the_string_the_environment_or_a_private_pgpass() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pgpass");
    std::fs::write(
        &file,
        "# comment\nother:*:*:*:nope\nh:5432:feeds:alice:s3cr\\:et\n*:*:*:*:fallback\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = file.to_str().unwrap();
    let env = env_of(&[("PGPASSFILE", path)]);
    let info = resolve("postgres://alice@h/feeds", &env).unwrap();
    assert_eq!(info.config.get_password(), Some(&b"s3cr:et"[..]));
    let info = resolve("postgres://bob@h/feeds", &env).unwrap();
    assert_eq!(info.config.get_password(), Some(&b"fallback"[..]));
    let env = env_of(&[("PGPASSFILE", path), ("PGPASSWORD", "fromenv")]);
    let info = resolve("postgres://alice@h/feeds", &env).unwrap();
    assert_eq!(info.config.get_password(), Some(&b"fromenv"[..]));
    // Readable by others: not used, as libpq does.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let env = env_of(&[("PGPASSFILE", path)]);
    let info = resolve("postgres://alice@h/feeds", &env).unwrap();
    assert_eq!(info.config.get_password(), None);
}

#[test]
fn nothing_shown_of_the_connection_holds_the_password() {
    let env = env_of(&[]);
    let info = resolve("postgres://alice:hunter2@h/feeds", &env).unwrap();
    assert!(!format!("{info:?}").contains("hunter2"));
    assert_eq!(info.describe(), "alice@h:5432/feeds");
    let err = resolve("postgres://alice:hunter2@h/feeds?bogus=1", &env).unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[test]
fn pgpass_matches_field_by_field() {
    let text = "a:1:d:u:one\n*:2:*:u:two\n";
    assert_eq!(
        lookup_pgpass(text, ["a", "1", "d", "u"]).as_deref(),
        Some("one")
    );
    assert_eq!(
        lookup_pgpass(text, ["b", "2", "x", "u"]).as_deref(),
        Some("two")
    );
    assert_eq!(lookup_pgpass(text, ["b", "1", "x", "u"]), None);
}

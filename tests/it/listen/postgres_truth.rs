//! Integration tests: `mllp listen --postgres` answers positively only for rows the table holds:
//! an INSERT a trigger or a constraint turned into nothing is answered negatively, a COMMIT lost
//! in a server crash is settled by looking the rows up (never by a transaction ID the server
//! reuses), a server's error text never reaches stderr, and a role given only what
//! docs/scale-out.md grants starts while one without INSERT is refused at start.

use crate::support::listen_proc::{is, with_postgres, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::no_payload::MARKER;
use crate::support::pg;
use std::time::Duration;

/// `marked(id)` sent as from sending application `msh3`.
fn from(msh3: &str, id: &str) -> Vec<u8> {
    let m = String::from_utf8(marked(id, "")).unwrap();
    m.replacen("|SND|", &format!("|{msh3}|"), 1).into_bytes()
}

/// Send each message after the last one's answer; the answers' codes.
async fn answers(listener: &ListenProc, messages: &[Vec<u8>]) -> Vec<String> {
    let mut client = MllpClient::connect(listener.addr).await;
    let mut codes = Vec::new();
    for m in messages {
        client.send(m).await;
        codes.push(client.ack().await.expect("an answer").code);
    }
    codes
}

#[tokio::test(flavor = "multi_thread")]
async fn an_insert_a_trigger_drops_is_answered_negatively() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    for dedupe in [false, true] {
        let (url, listener) = with_postgres(&server, &format!("drop_{dedupe}"), dedupe, "CREATE FUNCTION drop_row() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN IF NEW.control_id LIKE 'X%' THEN RETURN NULL; END IF; RETURN NEW; END $$;
                 CREATE TRIGGER drop_row BEFORE INSERT ON messages
                   FOR EACH ROW EXECUTE FUNCTION drop_row();",).await;
        let sent = [marked("K1", ""), marked("X1", ""), marked("X2", "")];
        let codes = answers(&listener, &sent).await;
        let stored: Vec<String> = pg::rows(&url).await.into_iter().map(|r| r.0).collect();
        assert_eq!(stored, ["K1"], "dedupe {dedupe}");
        assert_eq!(codes, ["AA", "AE", "AE"], "dedupe {dedupe}");
        listener.assert_no_payload();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_an_extra_unique_constraint_refuses_is_answered_negatively() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    for dedupe in [false, true] {
        let (url, listener) = with_postgres(
            &server,
            &format!("unique_{dedupe}"),
            dedupe,
            "ALTER TABLE messages ADD CONSTRAINT one_id UNIQUE (control_id)",
        )
        .await;
        // Two senders reusing one control ID: not duplicates of each other.
        let sent = [from("A", "U1"), from("B", "U1"), from("A", "U2")];
        let codes = answers(&listener, &sent).await;
        let stored: Vec<String> = pg::rows(&url).await.into_iter().map(|r| r.0).collect();
        assert_eq!(stored, ["U1", "U2"], "dedupe {dedupe}");
        assert_eq!(codes, ["AA", "AE", "AA"], "dedupe {dedupe}");
        let event = listener.wait_event(is("sink_error"));
        let detail = event["detail"].as_str().unwrap();
        assert!(
            detail.contains("23505") && detail.contains("unique_violation"),
            "{detail}"
        );
        assert!(detail.contains("one_id"), "the constraint named: {detail}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_error_text_never_reaches_stderr() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let (_, listener) = with_postgres(
        &server,
        "error_text",
        false,
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN RAISE EXCEPTION 'refused row: %', convert_from(NEW.payload, 'UTF8')
              USING DETAIL = convert_from(NEW.payload, 'UTF8'); END $$;
         CREATE TRIGGER refuse BEFORE INSERT ON messages
           FOR EACH ROW EXECUTE FUNCTION refuse();",
    )
    .await;
    let codes = answers(&listener, &[marked("E1", "")]).await;
    assert_eq!(codes, ["AE"]);
    let event = listener.wait_event(is("sink_error"));
    let detail = event["detail"].as_str().unwrap();
    assert!(
        detail.contains("P0001") && detail.contains("raise_exception"),
        "{detail}"
    );
    assert!(!detail.contains("refused row"), "{detail}");
    assert!(!detail.contains(MARKER), "{detail}");
    listener.assert_no_payload();
}

#[tokio::test(flavor = "multi_thread")]
async fn object_names_a_trigger_makes_up_are_withheld() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    // Every name an error can carry, built from the row's payload (the part after `NTE|1||`).
    let (_, listener) = with_postgres(
        &server,
        "error_names",
        false,
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
               $$ DECLARE v text := split_part(convert_from(NEW.payload, 'UTF8'), 'NTE|1||', 2);
                  BEGIN RAISE EXCEPTION 'refused' USING COLUMN = v, TABLE = 'patient ' || v,
                    CONSTRAINT = v, SCHEMA = v, DATATYPE = v; END $$;
             CREATE TRIGGER refuse BEFORE INSERT ON messages
               FOR EACH ROW EXECUTE FUNCTION refuse();",
    )
    .await;
    let codes = answers(&listener, &[marked("N1", "")]).await;
    assert_eq!(codes, ["AE"]);
    let event = listener.wait_event(is("sink_error"));
    let detail = event["detail"].as_str().unwrap();
    assert!(detail.contains("P0001"), "{detail}");
    assert!(detail.contains("(name withheld)"), "{detail}");
    assert!(!detail.contains(MARKER), "{detail}");
    listener.assert_no_payload();
}

/// A role named for this test and process, dropped first if an earlier run left it.
pub(crate) async fn role(admin: &tokio_postgres::Client, url: &str, name: &str) -> String {
    let db = url.rsplit('/').next().unwrap().split('?').next().unwrap();
    let name = format!("{name}_{}", std::process::id());
    // An earlier run's role goes with its database; one left over is reused.
    let _ = admin
        .batch_execute(&format!("DROP ROLE IF EXISTS {name}"))
        .await;
    let _ = admin
        .batch_execute(&format!("CREATE ROLE {name} LOGIN"))
        .await;
    admin
        .batch_execute(&format!("GRANT CONNECT ON DATABASE {db} TO {name}"))
        .await
        .unwrap();
    name
}

/// `url` logging in as `user`.
pub(crate) fn as_user(url: &str, user: &str) -> String {
    url.replacen("postgres@", &format!("{user}@"), 1)
}

/// The table, the index and the grants exactly as docs/scale-out.md gives them.
pub(crate) fn documented_setup(user: &str) -> String {
    let doc =
        std::fs::read_to_string(crate::support::repo_root().join("docs/scale-out.md")).unwrap();
    let start = doc.find("```sql\nCREATE TABLE").expect("the SQL block") + "```sql\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end]
        .lines()
        .filter(|l| !l.starts_with("CREATE ROLE"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(" mllp;", &format!(" {user};"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_documented_grants_let_a_listener_start_and_store() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let url = pg::fresh_database(&server, "grants").await;
    let admin = pg::connect(&url).await;
    let user = role(&admin, &url, "mllp_least").await;
    admin.batch_execute(&documented_setup(&user)).await.unwrap();
    for dedupe in [false, true] {
        let as_role = as_user(&url, &user);
        let mut args = vec!["--postgres", as_role.as_str()];
        if dedupe {
            args.push("--dedupe");
        }
        let listener = ListenProc::start(&args);
        let id = format!("G{dedupe}");
        let codes = answers(&listener, &[marked(&id, ""), marked(&id, "")]).await;
        assert_eq!(codes, ["AA", "AA"], "dedupe {dedupe}");
    }
    let stored: Vec<String> = pg::rows(&url).await.into_iter().map(|r| r.0).collect();
    assert_eq!(stored, ["Gfalse", "Gfalse", "Gtrue"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_without_insert_is_refused_at_start_naming_it() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let url = pg::fresh_database(&server, "no_insert").await;
    let admin = pg::connect(&url).await;
    let user = role(&admin, &url, "mllp_reader").await;
    let setup = documented_setup(&user).replace("SELECT, INSERT ON", "SELECT ON");
    admin.batch_execute(&setup).await.unwrap();
    let out = crate::support::mllp()
        .args([
            "--log-format",
            "json",
            "listen",
            "--port",
            "0",
            "--postgres",
        ])
        .arg(as_user(&url, &user))
        .timeout(Duration::from_secs(15))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("INSERT"), "{stderr}");
}

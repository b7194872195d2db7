//! TLS to the server (`sslmode` in the URL, docs/postgres.md#connecting), against a real
//! server started with `ssl = on` and a CA and server certificate made for the test by the
//! `openssl` command (tests/setup.sh installs it): `verify-full` with the right CA connects over
//! TLS, with another CA it is refused naming the certificate; `require` connects over TLS
//! without checking; `require` and `verify-full` against a server without TLS are refused;
//! without `sslmode` the connection stays plain.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use guild_pg::testing::{TestServer, TestServerError};
use guild_pg::{PgConfig, PgError, PgLedgerStore};
use guild_receipts::{AuditKind, LedgerStore};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl (tests/setup.sh installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed CA: its certificate's path (its key is `NAME.key` beside it).
fn ca(dir: &Path, name: &str) -> PathBuf {
    let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &crt,
            "-days",
            "2",
            "-subj",
            &format!("/CN=Guild test {name}"),
        ],
    );
    dir.join(crt)
}

/// A server certificate for 127.0.0.1 and localhost signed by the CA `ca`: (cert, key) PEM.
fn server_cert(dir: &Path, ca: &str) -> (Vec<u8>, Vec<u8>) {
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName = IP:127.0.0.1, DNS:localhost\nbasicConstraints = CA:FALSE\n\
         keyUsage = digitalSignature\nextendedKeyUsage = serverAuth\n",
    )
    .expect("write the extensions");
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            &format!("{ca}.crt"),
            "-CAkey",
            &format!("{ca}.key"),
            "-set_serial",
            "2",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ],
    );
    let read = |name: &str| std::fs::read(dir.join(name)).expect("read a PEM file");
    (read("server.crt"), read("server.key"))
}

/// A server with TLS on, or `None` when PostgreSQL is not installed (see common::server).
fn tls_server(cert: &[u8], key: &[u8]) -> Option<TestServer> {
    match TestServer::start_tls(cert, key) {
        Ok(server) => Some(server),
        Err(e @ TestServerError::NotInstalled)
            if std::env::var_os(common::REQUIRE_ENV).is_none() =>
        {
            eprintln!("SKIPPED: {e} (set {} to fail instead)", common::REQUIRE_ENV);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Connections to `db` using TLS right now, as the server sees them.
fn tls_connections(server: &TestServer, db: &str) -> i64 {
    server
        .client("postgres")
        .expect("client")
        .query_one(
            "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE s.ssl AND a.datname = $1",
            &[&db],
        )
        .expect("read pg_stat_ssl")
        .get(0)
}

/// Waits until the server has no connection to `db` left (a dropped store's backend exits
/// after its client closed).
fn until_gone(server: &TestServer, db: &str) {
    let mut admin = server.client("postgres").expect("client");
    for _ in 0..24_000 {
        let left: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1",
                &[&db],
            )
            .expect("read pg_stat_activity")
            .get(0);
        if left == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("connections to {db} stayed open");
}

fn open(url: &str) -> Result<PgLedgerStore, PgError> {
    PgLedgerStore::open(&PgConfig::with_password(url, None)?)
}

#[test]
fn verify_full_checks_the_ca_and_require_encrypts() {
    let pki = tempfile::tempdir().expect("tempdir");
    let right = ca(pki.path(), "ca");
    let wrong = ca(pki.path(), "other-ca");
    let (cert, key) = server_cert(pki.path(), "ca");
    let Some(server) = tls_server(&cert, &key) else {
        return;
    };
    server.create_database("tls").expect("database");
    let base = server.url("tls");

    let url = format!("{base}?sslmode=verify-full&sslrootcert={}", right.display());
    let store = open(&url).expect("verify-full with the server's CA connects");
    store
        .audit(AuditKind::GrantChanged, "tls", "over TLS")
        .expect("write over TLS");
    assert_eq!(
        tls_connections(&server, "tls"),
        1,
        "the store's connection is TLS"
    );
    assert!(store.verify().expect("verify").ok);
    drop(store);
    until_gone(&server, "tls");

    let url = format!("{base}?sslmode=verify-full&sslrootcert={}", wrong.display());
    match open(&url) {
        Err(e @ PgError::Connect { .. }) => {
            let said = e.to_string();
            assert!(
                said.contains("TLS") && said.contains("certificate"),
                "the refusal says the certificate was not trusted: {said}"
            );
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a certificate from another CA was accepted"),
    }

    let store = open(&format!("{base}?sslmode=require")).expect("require connects");
    assert_eq!(tls_connections(&server, "tls"), 1, "require is TLS too");
    drop(store);
    until_gone(&server, "tls");

    let _store = open(&base).expect("no sslmode connects");
    assert_eq!(tls_connections(&server, "tls"), 0, "no sslmode stays plain");
}

#[test]
fn tls_against_a_server_without_it_is_refused() {
    let Some(server) = common::server() else {
        return;
    };
    let config = common::fresh(&server);
    let db = config.target().rsplit('/').next().expect("db").to_owned();
    let pki = tempfile::tempdir().expect("tempdir");
    let ca = ca(pki.path(), "ca");
    let base = server.url(&db);
    for url in [
        format!("{base}?sslmode=require"),
        format!("{base}?sslmode=verify-full&sslrootcert={}", ca.display()),
    ] {
        match open(&url) {
            Err(e @ PgError::Connect { .. }) => {
                assert!(e.to_string().contains("TLS"), "{url}: {e}")
            }
            Err(e) => panic!("{url}: refused for another reason: {e}"),
            Ok(_) => panic!("{url}: connected without TLS"),
        }
    }
    open(&base).expect("the same server without sslmode");
}

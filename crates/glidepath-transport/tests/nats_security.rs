//! Secured NATS connections against a real `nats-server` configured for each case:
//! user and password (also from the URL), token, NKey, TLS with a private CA and
//! client certificates, and subject permissions. Each bad credential fails with an
//! error naming its cause (authorization, TLS, unreachable, a file), never
//! printing the secret; a federate whose permissions exclude a federation's subjects
//! cannot inject into it, and the refusal is counted and returned.
//!
//! Certificates are made for each run with `rcgen`; NKeys with `nkeys`; JWTs (operator,
//! account, user) are signed here as `nsc` signs them, for a server in operator mode.

use std::path::{Path, PathBuf};
use std::time::Duration;

use glidepath_core::{
    Body, ConnectCause, DimensionHandle, ExecReply, ExecRequest, Extent, FederationId, RangeBounds,
    RegionSet,
};
use glidepath_transport::nats::{
    serve_executive_with, NatsAuth, NatsOptions, NatsSecurity, NatsServerProcess, NatsTls, Secret,
};
use glidepath_transport::{Endpoint, NatsTransport, TransportError};

mod support;
use support::{create, data, expect_within, TOPIC};

const TIMEOUT: Duration = Duration::from_secs(10);

/// A directory of its own for one test's files, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("glidepath-sec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `nats-server` started with the configuration `conf`.
fn server(dir: &Dir, conf: &str) -> NatsServerProcess {
    let path = dir.write("server.conf", conf);
    NatsServerProcess::start_with(None, &["-c", path.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn with(auth: NatsAuth, tls: NatsTls) -> NatsOptions {
    NatsOptions {
        security: NatsSecurity { auth, tls },
        connect_timeout: Duration::from_secs(5),
        ..NatsOptions::default()
    }
}

fn user(name: &str, password: &str) -> NatsAuth {
    NatsAuth::UserPassword {
        user: name.into(),
        password: Secret::new(password),
    }
}

/// Connects, and checks the connection works end to end: an executive served with
/// the same options, a federation created, an envelope published and received.
fn works(url: &str, options: NatsOptions) {
    let executive = serve_executive_with(url, options.clone()).unwrap_or_else(|e| panic!("{e}"));
    let transport = NatsTransport::connect_with(url, options).unwrap_or_else(|e| panic!("{e}"));
    let endpoint = transport.open_endpoint().unwrap();
    let federation = create(&endpoint, "secured");
    endpoint.subscribe(federation, TOPIC).unwrap();
    let sender = transport.open_endpoint().unwrap();
    sender.publish(federation, TOPIC, data(7, 1)).unwrap();
    sender.flush().unwrap();
    expect_within(&endpoint, 7, 1, TIMEOUT);
    drop(executive);
}

/// The error of connecting with `options`, checked not to contain `secret`.
fn refused(url: &str, options: NatsOptions, secret: &str) -> TransportError {
    let error = NatsTransport::connect_with(url, options).expect_err("connecting must fail");
    let text = error.to_string();
    eprintln!("refused as expected: {text}");
    assert!(!secret.is_empty() && !text.contains(secret), "{text}");
    assert!(!format!("{error:?}").contains(secret), "{error:?}");
    error
}

fn cause(error: &TransportError) -> Option<ConnectCause> {
    match error {
        TransportError::ConnectFailed { cause, .. } => Some(*cause),
        _ => None,
    }
}

#[test]
fn user_and_password_from_options_or_the_url_and_a_wrong_password_is_an_authorization_error() {
    let dir = Dir::new("userpass");
    let nats = server(
        &dir,
        r#"authorization { users = [ { user: alice, password: "s3cret-pw" } ] }"#,
    );
    works(
        &nats.url(),
        with(user("alice", "s3cret-pw"), NatsTls::default()),
    );
    // The NATS clients' own convention: credentials in the URL.
    let in_url = format!("nats://alice:s3cret-pw@127.0.0.1:{}", nats.port());
    works(&in_url, NatsOptions::default());

    let e = refused(
        &nats.url(),
        with(user("alice", "wrong-pw"), NatsTls::default()),
        "wrong-pw",
    );
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");
    assert!(e.to_string().contains("authorization"), "{e}");
    let bad_url = format!("nats://alice:wrong-pw@127.0.0.1:{}", nats.port());
    let e = refused(&bad_url, NatsOptions::default(), "wrong-pw");
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");
    assert!(e.to_string().contains("alice:***@"), "{e}");
    // No credential at all: refused the same way.
    let e = refused(&nats.url(), NatsOptions::default(), "s3cret-pw");
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");
}

#[test]
fn nothing_listening_is_told_apart_from_a_refusal() {
    // A port nothing listens on: bind one, learn its number, let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://bob:hunter2@127.0.0.1:{port}");
    let options = NatsOptions {
        connect_timeout: Duration::from_secs(2),
        ..NatsOptions::default()
    };
    let e = refused(&url, options, "hunter2");
    assert_eq!(cause(&e), Some(ConnectCause::Unreachable), "{e}");
    assert!(e.to_string().contains("is `nats-server` running"), "{e}");
}

#[test]
fn a_token_and_an_nkey_sign_in_and_wrong_ones_are_refused() {
    let dir = Dir::new("token");
    let nats = server(&dir, r#"authorization { token: "t0k3n-value" }"#);
    works(
        &nats.url(),
        with(
            NatsAuth::Token(Secret::new("t0k3n-value")),
            NatsTls::default(),
        ),
    );
    let e = refused(
        &nats.url(),
        with(
            NatsAuth::Token(Secret::new("not-the-t0k3n")),
            NatsTls::default(),
        ),
        "not-the-t0k3n",
    );
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");

    let dir = Dir::new("nkey");
    let key = nkeys::KeyPair::new_user();
    let seed = key.seed().unwrap();
    let nats = server(
        &dir,
        &format!(
            "authorization {{ users = [ {{ nkey: {} }} ] }}",
            key.public_key()
        ),
    );
    works(
        &nats.url(),
        with(
            NatsAuth::NKeySeed(Secret::new(seed.clone())),
            NatsTls::default(),
        ),
    );
    let stranger = nkeys::KeyPair::new_user().seed().unwrap();
    let e = refused(
        &nats.url(),
        with(
            NatsAuth::NKeySeed(Secret::new(stranger.clone())),
            NatsTls::default(),
        ),
        &stranger,
    );
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");
    let e = refused(
        &nats.url(),
        with(
            NatsAuth::NKeySeed(Secret::new("SUnot-a-seed")),
            NatsTls::default(),
        ),
        "SUnot-a-seed",
    );
    assert!(e.to_string().contains("NKey seed"), "{e}");
    // A credentials file that is not there is named.
    let e = refused(
        &nats.url(),
        with(
            NatsAuth::CredsFile(dir.0.join("missing.creds")),
            NatsTls::default(),
        ),
        "SU",
    );
    assert!(e.to_string().contains("missing.creds"), "{e}");
}

/// A certificate authority, and certificates it signs.
struct Ca {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A certificate for `names` (IP addresses or DNS names), written as PEM files
    /// `<stem>.pem` and `<stem>-key.pem`; `expired` makes one that ended in 2020.
    fn issue(&self, dir: &Dir, stem: &str, names: &[&str], expired: bool) -> (PathBuf, PathBuf) {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, stem);
        if expired {
            params.not_before = rcgen::date_time_ymd(2019, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 1, 1);
        }
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (
            dir.write(&format!("{stem}.pem"), &cert.pem()),
            dir.write(&format!("{stem}-key.pem"), &key.serialize_pem()),
        )
    }

    fn write(&self, dir: &Dir, name: &str) -> PathBuf {
        dir.write(name, &self.cert.pem())
    }
}

fn tls(ca: Option<&Path>, client: Option<&(PathBuf, PathBuf)>) -> NatsTls {
    NatsTls {
        ca_file: ca.map(Path::to_path_buf),
        cert_file: client.map(|c| c.0.clone()),
        key_file: client.map(|c| c.1.clone()),
        required: true,
    }
}

#[test]
fn tls_with_a_private_ca_and_client_certificates_and_each_bad_certificate_named() {
    let dir = Dir::new("tls");
    let ca = Ca::new("glidepath test CA");
    let ca_file = ca.write(&dir, "ca.pem");
    let (server_cert, server_key) = ca.issue(&dir, "server", &["127.0.0.1", "localhost"], false);
    let nats = server(
        &dir,
        &format!(
            "tls {{ cert_file: {:?}, key_file: {:?}, ca_file: {:?}, verify: true, timeout: 5 }}",
            server_cert, server_key, ca_file
        ),
    );
    let client = ca.issue(&dir, "client", &["glidepath-client"], false);
    works(
        &nats.url(),
        with(NatsAuth::None, tls(Some(&ca_file), Some(&client))),
    );

    // The server's certificate from a CA we were not told to trust.
    let other = Ca::new("someone else's CA");
    let other_file = other.write(&dir, "other-ca.pem");
    let e = refused(
        &nats.url(),
        with(NatsAuth::None, tls(Some(&other_file), Some(&client))),
        "PRIVATE KEY",
    );
    assert_eq!(cause(&e), Some(ConnectCause::Tls), "{e}");

    // Our certificate signed by a CA the server does not trust, or expired, or none.
    let stranger = other.issue(&dir, "stranger", &["glidepath-client"], false);
    let expired = ca.issue(&dir, "expired", &["glidepath-client"], true);
    for (alert, client) in [
        ("UnknownCA", Some(&stranger)),
        ("CertificateExpired", Some(&expired)),
        ("CertificateRequired", None),
    ] {
        let e = refused(
            &nats.url(),
            with(NatsAuth::None, tls(Some(&ca_file), client)),
            "PRIVATE KEY",
        );
        assert_eq!(cause(&e), Some(ConnectCause::Tls), "{alert}: {e}");
        assert!(e.to_string().contains(alert), "{e}");
    }

    // A file that is not there is named before anything is sent.
    let e = refused(
        &nats.url(),
        with(NatsAuth::None, tls(Some(&dir.0.join("nope.pem")), None)),
        "PRIVATE KEY",
    );
    assert!(e.to_string().contains("nope.pem"), "{e}");
}

/// The example configuration shipped in `examples/nats/secure-accounts.conf`.
fn example_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/nats/secure-accounts.conf")
}

fn role(name: &str) -> NatsOptions {
    with(user(name, &format!("change-me-{name}")), NatsTls::default())
}

#[test]
fn the_example_permissions_let_each_role_work_and_keep_a_federate_out_of_another_federation() {
    let conf = example_conf();
    let nats = NatsServerProcess::start_with(None, &["-c", conf.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let executive = serve_executive_with(
        &url,
        NatsOptions {
            lost_after: Some(Duration::from_millis(1500)),
            ..role("executive")
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let federate = NatsTransport::connect_with(&url, role("federate-1")).unwrap();
    let receiver = federate.open_endpoint().unwrap();
    let federation = create(&receiver, "permitted");
    assert_eq!(
        federation,
        FederationId(1),
        "the example permits federation 1"
    );
    // A grid over the plane, so that what is sent with regions goes to cells: the
    // example permits those subjects too.
    let dims = [
        (DimensionHandle(1), "X".to_string(), 1000),
        (DimensionHandle(2), "Y".to_string(), 1000),
    ];
    receiver.set_dimensions(federation, &dims).unwrap();
    receiver.subscribe(federation, TOPIC).unwrap();
    // A joined federate answers the executive's liveness probes: the example lets it
    // subscribe to them and answer, so it is never taken for lost.
    let joined = receiver.request(ExecRequest::Join {
        federation,
        federate_name: Some("permitted".into()),
        federate_type: "test".into(),
    });
    assert!(matches!(joined, Ok(ExecReply::Joined { .. })), "{joined:?}");
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(executive.lost_federates(), 0);
    assert_eq!(receiver.stats().permission_violations, 0);

    // The monitor reads federation 1's traffic with a plain NATS client.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut monitor = runtime.block_on(async {
        let client = async_nats::ConnectOptions::with_user_and_password(
            "monitor".into(),
            "change-me-monitor".into(),
        )
        .connect(&url)
        .await
        .unwrap();
        let sub = client.subscribe("glidepath.1.>").await.unwrap();
        client.flush().await.unwrap();
        (client, sub)
    });

    // The federate's own traffic flows.
    let sender = federate.open_endpoint().unwrap();
    sender.set_dimensions(federation, &dims).unwrap();
    sender.publish(federation, TOPIC, data(7, 1)).unwrap();
    let mut with_region = data(7, 2);
    if let Body::Interaction { regions, .. } = &mut with_region.body {
        *regions = RegionSet::new(vec![Extent::new([
            (DimensionHandle(1), RangeBounds::new(10, 10)),
            (DimensionHandle(2), RangeBounds::new(990, 990)),
        ])]);
    }
    sender.publish(federation, TOPIC, with_region).unwrap();
    sender.flush().unwrap();
    expect_within(&receiver, 7, 1, TIMEOUT);
    expect_within(&receiver, 7, 2, TIMEOUT);
    assert_eq!(receiver.stats().permission_violations, 0);
    assert_eq!(sender.stats().permission_violations, 0);
    let seen = runtime.block_on(async {
        use futures::StreamExt;
        tokio::time::timeout(TIMEOUT, monitor.1.next()).await
    });
    let seen = seen.expect("the monitor reads federation 1").unwrap();
    assert!(seen.subject.starts_with("glidepath.1."), "{}", seen.subject);

    // Publishing into federation 2 is refused by the server; the refusal is counted
    // and the next call returns it (NATS reports it asynchronously: bounded wait).
    let intruder = federate.open_endpoint().unwrap();
    intruder
        .publish(FederationId(2), TOPIC, data(66, 1))
        .unwrap();
    let deadline = std::time::Instant::now() + TIMEOUT;
    let e = loop {
        if let Err(e) = intruder.flush() {
            break e;
        }
        assert!(std::time::Instant::now() < deadline, "no refusal heard");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(matches!(e, TransportError::PermissionDenied { .. }), "{e}");
    assert!(e.to_string().contains("glidepath.2."), "{e}");
    assert!(intruder.stats().permission_violations >= 1);
    drop(monitor);
}

/// A NATS JWT (header, claims, ed25519 signature by `issuer`), as `nsc` makes them.
fn jwt(
    issuer: &nkeys::KeyPair,
    subject: &str,
    name: &str,
    nats: serde_json::Value,
    exp: Option<u64>,
) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut claims = serde_json::json!({
        "jti": format!("GLIDEPATHTEST{}{}", now, name.to_uppercase()),
        "iat": now - 60,
        "iss": issuer.public_key(),
        "name": name,
        "sub": subject,
        "nats": nats,
    });
    if let Some(exp) = exp {
        claims["exp"] = exp.into();
    }
    let header = b64.encode(r#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let body = b64.encode(claims.to_string());
    let signed = format!("{header}.{body}");
    let signature = b64.encode(issuer.sign(signed.as_bytes()).unwrap());
    format!("{signed}.{signature}")
}

/// An operator, an account and a `nats-server` in operator mode trusting them.
struct Operator {
    account: nkeys::KeyPair,
    server: NatsServerProcess,
}

impl Operator {
    fn start(dir: &Dir) -> Operator {
        let operator = nkeys::KeyPair::new_operator();
        let account = nkeys::KeyPair::new_account();
        let operator_jwt = jwt(
            &operator,
            &operator.public_key(),
            "glidepath-test-operator",
            serde_json::json!({ "type": "operator", "version": 2 }),
            None,
        );
        let unlimited = serde_json::json!({
            "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
            "wildcards": true, "conn": -1, "leaf": -1
        });
        let account_jwt = jwt(
            &operator,
            &account.public_key(),
            "glidepath-test-account",
            serde_json::json!({ "type": "account", "version": 2, "limits": unlimited }),
            None,
        );
        let operator_file = dir.write("operator.jwt", &operator_jwt);
        let conf = format!(
            "operator: {:?}\nresolver: MEMORY\nresolver_preload: {{ {}: {:?} }}\n",
            operator_file,
            account.public_key(),
            account_jwt
        );
        let server = server(dir, &conf);
        Operator { account, server }
    }

    /// A `.creds` file for a new user of the account, expiring at `exp` if given.
    fn creds(&self, dir: &Dir, name: &str, exp: Option<u64>) -> PathBuf {
        creds_of(&self.account, dir, name, exp)
    }
}

/// A `.creds` file for a new user of `account`, expiring at `exp` if given.
fn creds_of(account: &nkeys::KeyPair, dir: &Dir, name: &str, exp: Option<u64>) -> PathBuf {
    let user = nkeys::KeyPair::new_user();
    let token = jwt(
        account,
        &user.public_key(),
        name,
        serde_json::json!({
            "type": "user", "version": 2, "pub": {}, "sub": {},
            "subs": -1, "data": -1, "payload": -1
        }),
        exp,
    );
    let text = format!(
        "-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\
             NKEY Seed printed below can be used to sign and prove identity.\n\n\
             -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n",
        user.seed().unwrap()
    );
    dir.write(&format!("{name}.creds"), &text)
}

#[test]
fn a_jwt_credentials_file_signs_in_and_an_expired_or_foreign_one_is_refused() {
    let dir = Dir::new("jwt");
    let operator = Operator::start(&dir);
    let url = operator.server.url();
    let creds = operator.creds(&dir, "federate", None);
    works(
        &url,
        with(NatsAuth::CredsFile(creds.clone()), NatsTls::default()),
    );
    let seed_line = std::fs::read_to_string(&creds)
        .unwrap()
        .lines()
        .find(|l| l.starts_with("SU"))
        .unwrap()
        .to_string();

    // Expired an hour ago.
    let past = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 3600;
    let expired = operator.creds(&dir, "expired", Some(past));
    let e = refused(
        &url,
        with(NatsAuth::CredsFile(expired), NatsTls::default()),
        &seed_line,
    );
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");

    // Signed by an account the operator never trusted.
    let foreign = creds_of(&nkeys::KeyPair::new_account(), &dir, "foreign", None);
    let e = refused(
        &url,
        with(NatsAuth::CredsFile(foreign), NatsTls::default()),
        &seed_line,
    );
    assert_eq!(cause(&e), Some(ConnectCause::Authorization), "{e}");

    // A file that is not a credentials file is named.
    let garbage = dir.write("garbage.creds", "not a credentials file\n");
    let e = refused(
        &url,
        with(NatsAuth::CredsFile(garbage), NatsTls::default()),
        &seed_line,
    );
    assert!(e.to_string().contains("garbage.creds"), "{e}");
}

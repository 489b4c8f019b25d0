//! A forge behind a private certificate authority: trusted with `tls.ca_file`, and without it
//! refused with a message that says "certificate", names the host and gives the reason. The
//! fake GitHub is put behind a TLS front (`tests/tls/`: a test CA and a `localhost` certificate
//! it signed).

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;

use crate::support::env::TestEnv;

const CA: &str = include_str!("../tls/ca.pem");
const SERVER_CERT: &str = include_str!("../tls/server.pem");
const SERVER_KEY: &str = include_str!("../tls/server.key");

/// A TLS front on `127.0.0.1:<port>` that passes every connection's bytes to `backend`.
fn tls_front(backend: &str) -> u16 {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(SERVER_CERT.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let backend = backend.to_owned();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let config = Arc::clone(&config);
            let backend = backend.clone();
            std::thread::spawn(move || relay(client, &backend, config));
        }
    });
    port
}

/// Passes bytes both ways until either side closes.
fn relay(client: TcpStream, backend: &str, config: Arc<rustls::ServerConfig>) {
    let tick = Some(Duration::from_millis(5));
    let Ok(mut server) = TcpStream::connect(backend) else {
        return;
    };
    let _ = client.set_read_timeout(tick);
    let _ = server.set_read_timeout(tick);
    let mut tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), client);
    let mut buf = vec![0u8; 64 * 1024];
    let idle = |e: &std::io::Error| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    loop {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if server.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
        match server.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() {
                    return;
                }
            }
            Err(e) if idle(&e) => {}
            Err(_) => return,
        }
    }
}

/// An env whose GitHub API is the fake behind a TLS front signed by the test CA; with
/// `ca_file`, the config trusts the CA.
fn behind_a_private_ca(ca_file: bool) -> TestEnv {
    let extra = if ca_file {
        "tls:\n  ca_file: ca.pem\n"
    } else {
        ""
    };
    let mut env = TestEnv::with_config(extra);
    std::fs::write(env.dir.path().join("ca.pem"), CA).unwrap();
    let backend = env.gh.url();
    let port = tls_front(backend.trim_start_matches("http://"));
    env.set_github_api_url(&format!("https://localhost:{port}"));
    env.gh.world(|w| {
        w.pr("octo/app", 1);
        w.check_run("octo/app", 1, "lint").success();
    });
    env.ok(&["watch", "add", "octo/app#1"]);
    env
}

#[test]
fn a_forge_behind_a_private_ca_is_trusted_with_its_ca_file() {
    let env = behind_a_private_ca(true);
    env.ok(&["run"]);
    let s = env.status("octo/app#1");
    assert_eq!(s["last_error"], json!(null), "{s}");
    assert!(s["head_sha"].is_string(), "{s}");
    assert!(env.gh.requests().total() > 0);
}

#[test]
fn without_the_ca_file_the_error_says_the_certificate_is_not_trusted() {
    let env = behind_a_private_ca(false);
    let out = env.run(&["run"]);
    assert_ne!(out.code, 0, "{}", out.stderr);
    let s = env.status("octo/app#1");
    let error = s["last_error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("certificate"), "{error}");
    assert!(error.contains("`localhost:"), "{error}");
    assert!(error.contains("UnknownIssuer"), "{error}");
    assert_eq!(env.gh.requests().total(), 0, "nothing got through");
}

#[test]
fn an_unreadable_ca_file_is_a_usage_error_naming_it() {
    let env = TestEnv::with_config("tls:\n  ca_file: missing.pem\n");
    let out = env.run(&["run"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("tls.ca_file"), "{}", out.stderr);
    assert!(out.stderr.contains("missing.pem"), "{}", out.stderr);
}

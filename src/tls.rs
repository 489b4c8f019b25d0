//! The certificate authorities every TLS connection trusts (forges, SMTP, Slack, webhook
//! agents): Mozilla's roots, bundled, plus the PEM certificates of `tls.ca_file` (a company
//! CA). A process reads one config, so the extra roots are set once where it is loaded
//! ([`set_extra_roots`]) and read by each client as it is built.

use std::path::Path;
use std::sync::{Arc, RwLock};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject as _;

static EXTRA: RwLock<Option<Arc<Vec<CertificateDer<'static>>>>> = RwLock::new(None);

/// The certificates of the PEM file at `path`; an error naming the file when it cannot be
/// read or holds none.
pub(crate) fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| {
        format!(
            "cannot read `tls.ca_file` `{shown}`: {}",
            e.kind().to_string().to_lowercase()
        )
    })?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("`tls.ca_file` `{shown}` is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "`tls.ca_file` `{shown}` holds no certificate (`BEGIN CERTIFICATE`)"
        ));
    }
    Ok(certs)
}

/// Makes `certs` trusted beside the bundled roots by every client built from now on.
pub(crate) fn set_extra_roots(certs: Vec<CertificateDer<'static>>) {
    *EXTRA
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(certs));
}

fn extra() -> Option<Arc<Vec<CertificateDer<'static>>>> {
    EXTRA
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// ureq's TLS settings with the extra roots beside Mozilla's; `None` (ureq's own bundled
/// roots) when there are none.
pub(crate) fn ureq_tls() -> Option<ureq::tls::TlsConfig> {
    let extra = extra()?;
    let certs: Vec<ureq::tls::Certificate<'static>> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .chain(extra.iter())
        .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    Some(
        ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
            .build(),
    )
}

/// The extra roots as lettre adds them to its bundled ones.
pub(crate) fn lettre_roots() -> Vec<lettre::transport::smtp::client::Certificate> {
    extra().map_or_else(Vec::new, |certs| {
        certs
            .iter()
            .filter_map(|c| {
                lettre::transport::smtp::client::Certificate::from_der(c.as_ref().to_vec()).ok()
            })
            .collect()
    })
}

/// Why a TLS handshake failed, when `e` is one (rustls reports it as invalid data carrying
/// its error: `invalid peer certificate: UnknownIssuer`).
pub(crate) fn handshake_failure(e: &std::io::Error) -> Option<String> {
    (e.kind() == std::io::ErrorKind::InvalidData)
        .then(|| e.get_ref().map(ToString::to_string))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_must_hold_pem_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none.pem");
        assert!(
            read_ca_file(&missing)
                .unwrap_err()
                .starts_with("cannot read `tls.ca_file`")
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        assert!(
            read_ca_file(&empty)
                .unwrap_err()
                .contains("holds no certificate")
        );
    }

    #[test]
    fn only_a_failed_handshake_has_a_reason() {
        let tls = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        );
        assert_eq!(
            handshake_failure(&tls).as_deref(),
            Some("invalid peer certificate: UnknownIssuer")
        );
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(handshake_failure(&refused), None);
    }
}

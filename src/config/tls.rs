//! The `tls:` block: the trust roots every TLS connection adds to the bundled ones.

use std::path::PathBuf;

use serde::Deserialize;

use super::de;

/// The `tls:` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(
    deny_unknown_fields,
    default,
    expecting = "a mapping (the `tls` block)"
)]
pub struct TlsConfig {
    /// PEM certificates of certificate authorities trusted beside the bundled roots by every
    /// TLS connection (forges, SMTP, Slack, webhook agents): a company CA. Default none.
    #[serde(deserialize_with = "de::opt_path")]
    pub ca_file: Option<PathBuf>,
}

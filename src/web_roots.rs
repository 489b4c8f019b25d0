//! The process's web roots. A process reads one config, so its roots are set once where it is
//! loaded ([`set_roots`]) and read by [`roots`]; until then they are the public forges'. The
//! shell writes every PR address on them ([`PrRef::url`]: the watch's name in every output,
//! and the key of its seen items, history and outbox rows) and parses a PR address against
//! them (`"…".parse::<PrRef>()`); the model and the core take roots as a value
//! ([`PrRef::url_on`], [`PrRef::parse_on`]), never this process-wide one.

use std::str::FromStr;
use std::sync::RwLock;

use crate::model::PrRef;
use crate::model::branch::BranchRef;
use crate::model::reference::ForgeHosts;
use crate::model::web::WebRoots;

static ROOTS: RwLock<Option<WebRoots>> = RwLock::new(None);

/// Makes `roots` the process's web roots (the config's, once it is loaded).
pub(crate) fn set_roots(roots: WebRoots) {
    *ROOTS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(roots);
}

/// The process's web roots: the config's, else the public forges'.
pub(crate) fn roots() -> WebRoots {
    ROOTS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}

impl PrRef {
    /// The PR's web address on its forge's host, under the process's [`roots`].
    pub fn url(&self) -> String {
        self.url_on(&roots())
    }
}

impl BranchRef {
    /// The branch's web address on its forge's host, under the process's [`roots`].
    pub fn url(&self) -> String {
        self.url_on(&roots())
    }
}

impl FromStr for PrRef {
    type Err = String;

    /// [`PrRef::parse_on`] the default hosts, `github.com` and `gitlab.com`, and the hosts of
    /// the process's web roots ([`roots`]): a PR's own address parses back.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PrRef::parse_on(s, &ForgeHosts::default().with_web(&roots()))
    }
}

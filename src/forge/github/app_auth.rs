//! GitHub App authentication: the App's JWT opens `GET /app` (for the bot's login,
//! `<slug>[bot]`), the installation lookup of each repository owner and the minting of
//! installation tokens (`POST /app/installations/{id}/access_tokens`).
//!
//! What is learned lives for the process, shared by every client of the same API and App (the
//! daemon builds new clients every sweep): installation ids are looked up once per owner;
//! installation tokens are held in memory only (and masked by value as secrets), reused until a
//! margin before they expire — measured on the forge's own clock, `expires_at` against the
//! answer's `date`, then counted down locally — and dropped as soon as the forge refuses one.

use std::collections::BTreeMap;
use std::sync::{MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::app_key::AppKey;
use crate::forge::ForgeError;
use crate::forge::http::{HttpClient, Idempotency, Response, error_message};
use crate::locked::Locked;

/// How long before its expiry an installation token is replaced (at most half its life).
pub const RENEW_MARGIN: Duration = Duration::from_secs(300);

/// A GitHub App as one API knows it: its id and key.
#[derive(Debug)]
pub struct AppAuth {
    api_url: String,
    app_id: u64,
    key: AppKey,
}

/// Which API and App a learned fact belongs to, and the owner (lower case) or installation.
type Scope = (String, u64, String);

/// A live installation token.
struct Held {
    token: String,
    renew_at: Instant,
}

/// What this process has learned about every App it signed in as.
#[derive(Default)]
struct Learned {
    installations: BTreeMap<Scope, u64>,
    tokens: BTreeMap<Scope, Held>,
}

fn learned() -> MutexGuard<'static, Learned> {
    static LEARNED: OnceLock<Locked<Learned>> = OnceLock::new();
    LEARNED.get_or_init(Locked::default).borrow()
}

/// Forgets every installation token of this process (installation ids stay): the next request
/// mints anew. For a client dropped after a 401.
pub fn forget_tokens() {
    learned().tokens.clear();
}

/// How long a token minted now stays usable before it is replaced: `expires_at` minus the
/// answer's `date` (the forge's clock; this machine's when it sent none), less the margin.
pub fn usable_for(expires_at: &str, date: Option<&str>, local_now: i64) -> Duration {
    let expires = crate::model::parse_instant(expires_at).map(|t| t.timestamp());
    let now = date
        .and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok())
        .map_or(local_now, |t| t.timestamp());
    let life = Duration::from_secs(expires.map_or(0, |e| u64::try_from(e - now).unwrap_or(0)));
    life.saturating_sub(RENEW_MARGIN.min(life / 2))
}

impl AppAuth {
    pub fn new(api_url: &str, app_id: u64, key: AppKey) -> Self {
        AppAuth {
            api_url: api_url.trim_end_matches('/').to_owned(),
            app_id,
            key,
        }
    }

    fn scope(&self, what: &str) -> Scope {
        (self.api_url.clone(), self.app_id, what.to_ascii_lowercase())
    }

    /// A fresh JWT (the real clock: GitHub checks it against its own).
    fn jwt(&self) -> Result<String, ForgeError> {
        let jwt = self
            .key
            .jwt(self.app_id, crate::clock::wall_secs())
            .map_err(ForgeError::Unexpected)?;
        crate::secrets::hold(&jwt);
        Ok(jwt)
    }

    /// A request the App makes as itself, with its JWT.
    fn as_app(
        &self,
        http: &HttpClient,
        method: &str,
        path: &str,
    ) -> Result<(Response, Value), ForgeError> {
        let url = format!("{}{path}", self.api_url);
        let resp = http.send_as(method, &url, None, Idempotency::Retry, &self.jwt()?)?;
        match resp.status {
            200..=299 => {
                let body = serde_json::from_str(&resp.body).map_err(|e| {
                    ForgeError::Unexpected(format!("{path} answered with no JSON: {e}"))
                })?;
                Ok((resp, body))
            }
            401 => Err(ForgeError::Unauthorized(format!(
                "GitHub refused the JWT of App {} ({}): check `github.app.id` and its private key",
                self.app_id,
                error_message(&resp.body)
            ))),
            _ => Err(crate::forge::http::status_error(&resp)),
        }
    }

    /// The App's bot login, `<slug>[bot]`: who its installation tokens act as.
    pub fn bot_login(&self, http: &HttpClient) -> Result<String, ForgeError> {
        let (_, app) = self.as_app(http, "GET", "/app")?;
        app["slug"]
            .as_str()
            .map(|slug| format!("{slug}[bot]"))
            .ok_or_else(|| ForgeError::Unexpected("GET /app has no slug".into()))
    }

    /// An installation token for the owner of `repo` (`owner/name`): the one held while it is
    /// good, else a new one.
    pub fn token_for(&self, http: &HttpClient, repo: &str) -> Result<String, ForgeError> {
        let owner = repo.split('/').next().unwrap_or(repo);
        let owner_scope = self.scope(owner);
        let mut learned = learned();
        let id = if let Some(id) = learned.installations.get(&owner_scope) {
            *id
        } else {
            let id = self.installation(http, repo, owner)?;
            learned.installations.insert(owner_scope.clone(), id);
            id
        };
        let token_scope = self.scope(&id.to_string());
        if let Some(held) = learned.tokens.get(&token_scope)
            && Instant::now() < held.renew_at
        {
            return Ok(held.token.clone());
        }
        match self.mint(http, id) {
            Ok(held) => {
                let token = held.token.clone();
                learned.tokens.insert(token_scope, held);
                Ok(token)
            }
            Err(e) => {
                // An installation removed (and perhaps added again): look it up next time.
                learned.installations.remove(&owner_scope);
                learned.tokens.remove(&token_scope);
                Err(e)
            }
        }
    }

    /// Drops `token`, which the forge just refused: the next request mints anew.
    pub fn drop_token(&self, token: &str) {
        learned().tokens.retain(|_, held| held.token != token);
    }

    fn installation(&self, http: &HttpClient, repo: &str, owner: &str) -> Result<u64, ForgeError> {
        let found = self.as_app(http, "GET", &format!("/repos/{repo}/installation"));
        let (_, body) = found.map_err(|e| match e {
            ForgeError::NotFound(_) => ForgeError::Unauthorized(format!(
                "GitHub App {} is not installed for `{owner}` (no installation sees `{repo}`)",
                self.app_id
            )),
            e => e,
        })?;
        body["id"]
            .as_u64()
            .ok_or_else(|| ForgeError::Unexpected("the installation has no id".into()))
    }

    fn mint(&self, http: &HttpClient, installation: u64) -> Result<Held, ForgeError> {
        let path = format!("/app/installations/{installation}/access_tokens");
        let (resp, body) = self.as_app(http, "POST", &path)?;
        let token = body["token"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ForgeError::Unexpected("the installation token is missing".into()))?;
        crate::secrets::hold(token);
        let usable = usable_for(
            body["expires_at"].as_str().unwrap_or_default(),
            resp.date.as_deref(),
            crate::clock::wall_secs(),
        );
        Ok(Held {
            token: token.to_owned(),
            renew_at: Instant::now() + usable,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_renewed_a_margin_before_it_expires_on_the_forge_s_clock() {
        let date = Some("Sun, 29 Nov 2026 12:00:00 GMT");
        let hour = "2026-11-29T13:00:00Z";
        // The forge's clock decides, whatever this machine's says.
        assert_eq!(usable_for(hour, date, 0), Duration::from_secs(3300));
        assert_eq!(
            usable_for(hour, date, 1_900_000_000),
            Duration::from_secs(3300)
        );
        // Without a date: this machine's clock.
        let local = crate::model::parse_instant("2026-11-29T12:30:00Z")
            .map(|t| t.timestamp())
            .unwrap_or_default();
        assert_eq!(usable_for(hour, None, local), Duration::from_secs(1500));
        // A short life keeps half of itself; an expired or unreadable one none.
        assert_eq!(
            usable_for("2026-11-29T12:00:04Z", date, 0),
            Duration::from_secs(2)
        );
        assert_eq!(usable_for("2026-11-29T11:00:00Z", date, 0), Duration::ZERO);
        assert_eq!(usable_for("soon", date, 0), Duration::ZERO);
    }
}

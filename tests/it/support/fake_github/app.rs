//! GitHub Apps in the fake: one App (`w.app(id, slug)`), its installations by account, and the
//! tokens it minted.
//!
//! - The App's endpoints (`GET /app`, `GET /repos/{o}/{r}/installation`,
//!   `POST /app/installations/{id}/access_tokens`) take only a JWT: RS256 verified with the
//!   test public key (`tests/keys/github-app-test.pub.pem`), `iss` the App's id, `iat` not in
//!   the future and `exp` in it, at most ten minutes apart — on the real clock, as GitHub checks
//!   it. Refusals are 401 with GitHub's messages.
//! - An installation token (`ghs_…`) expires `token_lifetime_secs` (default one hour) after it
//!   was minted on the world's clock (`w.now`); the answer's `date` header is `w.now`. Only a
//!   live one opens the API; an expired one is 401 "Bad credentials"; `GET /user` with one is
//!   403 "Resource not accessible by integration", as on GitHub.
//! - The token of an installation opens only its account's repositories: a request about a PR
//!   of another account is refused 404 (REST) or NOT_FOUND (GraphQL, the whole request).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use super::Reply;
use super::rest::message;
use super::world::{Time, World, timestamp};

/// The test key pair's public half (PKCS#1).
pub const PUBLIC_KEY_PEM: &str = include_str!("../../../keys/github-app-test.pub.pem");

/// The App the fake knows.
#[derive(Debug, Clone)]
pub struct FakeApp {
    pub id: u64,
    pub slug: String,
    /// PKCS#1 `RSAPublicKey` DER.
    pub public_key: Vec<u8>,
    /// Installation id by account login (lower case).
    pub installations: BTreeMap<String, u64>,
    /// How long a minted token lives on the world's clock.
    pub token_lifetime_secs: i64,
    pub tokens: Vec<MintedToken>,
}

#[derive(Debug, Clone)]
pub struct MintedToken {
    pub token: String,
    pub installation: u64,
    pub expires_at: Time,
}

/// Who a request's credentials name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The world's personal token.
    User,
    /// Another person's personal token (see `World::person_token`).
    Person(String),
    /// A live installation token of this installation, for this account (lower case).
    Installation { id: u64, account: String },
    /// A valid JWT of the App.
    App,
}

fn der_of(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    STANDARD
        .decode(body)
        .expect("the test public key is base64")
}

impl FakeApp {
    pub fn new(id: u64, slug: &str) -> Self {
        FakeApp {
            id,
            slug: slug.to_owned(),
            public_key: der_of(PUBLIC_KEY_PEM),
            installations: BTreeMap::new(),
            token_lifetime_secs: 3600,
            tokens: Vec::new(),
        }
    }

    /// The bot's login: `<slug>[bot]`.
    pub fn bot(&self) -> String {
        format!("{}[bot]", self.slug)
    }

    /// Verifies a JWT on the real clock; the error is GitHub's message.
    pub fn verify(&self, jwt: &str) -> Result<(), &'static str> {
        const UNDECODABLE: &str = "A JSON web token could not be decoded";
        let parts: Vec<&str> = jwt.split('.').collect();
        let [header, payload, signature] = parts.as_slice() else {
            return Err(UNDECODABLE);
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| UNDECODABLE);
        let header: Value = serde_json::from_slice(&decode(header)?).map_err(|_| UNDECODABLE)?;
        if header["alg"] != "RS256" {
            return Err(UNDECODABLE);
        }
        ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            &self.public_key,
        )
        .verify(
            format!("{}.{}", parts[0], parts[1]).as_bytes(),
            &decode(signature)?,
        )
        .map_err(|_| UNDECODABLE)?;
        let claims: Value = serde_json::from_slice(&decode(payload)?).map_err(|_| UNDECODABLE)?;
        let iss = claims["iss"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| claims["iss"].as_u64().map(|n| n.to_string()));
        if iss != Some(self.id.to_string()) {
            return Err("Integration not found");
        }
        let now = chrono::Utc::now().timestamp();
        let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
            return Err(UNDECODABLE);
        };
        if iat > now + 5 {
            return Err(
                "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
            );
        }
        if exp <= now {
            return Err(
                "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
            );
        }
        if exp - iat > 600 {
            return Err("'Expiration time' claim ('exp') is too far in the future");
        }
        Ok(())
    }

    /// Mints a token for installation `id` at `now`.
    fn mint(&mut self, id: u64, now: Time) -> MintedToken {
        let minted = MintedToken {
            token: format!("ghs_fakeInstallation{id}Token{:04}", self.tokens.len() + 1),
            installation: id,
            expires_at: now + chrono::Duration::seconds(self.token_lifetime_secs),
        };
        self.tokens.push(minted.clone());
        minted
    }

    fn account_of(&self, installation: u64) -> Option<String> {
        self.installations
            .iter()
            .find(|(_, id)| **id == installation)
            .map(|(account, _)| account.clone())
    }
}

/// Builds the App in place: `w.app(7, "prm").install("octo").token_lifetime(60)`.
pub struct AppBuilder<'a> {
    app: &'a mut FakeApp,
}

impl AppBuilder<'_> {
    /// Installs the App on `account`, with the next installation id.
    pub fn install(self, account: &str) -> Self {
        let id = 100 + self.app.installations.len() as u64 + 1;
        self.app
            .installations
            .insert(account.to_ascii_lowercase(), id);
        self
    }

    pub fn token_lifetime(self, secs: i64) -> Self {
        self.app.token_lifetime_secs = secs;
        self
    }
}

impl World {
    /// The App `id` called `slug`, created on first use; the viewer becomes its bot, who
    /// makes every change an installation token asks for.
    pub fn app(&mut self, id: u64, slug: &str) -> AppBuilder<'_> {
        let app = self.app.get_or_insert_with(|| FakeApp::new(id, slug));
        self.viewer = app.bot();
        AppBuilder { app }
    }

    /// Every installation token minted so far.
    pub fn minted_tokens(&self) -> Vec<String> {
        self.app
            .as_ref()
            .map(|a| a.tokens.iter().map(|t| t.token.clone()).collect())
            .unwrap_or_default()
    }

    /// Who `token` (the `Authorization` value without its scheme) names, or the 401 to send.
    pub fn caller(&self, token: &str, app_route: bool, doc: &str) -> Result<Caller, Reply> {
        let bad = |msg: &str| Err(message(401, msg, doc));
        if let Some(login) = self.people.get(token).filter(|_| !app_route) {
            return Ok(Caller::Person(login.clone()));
        }
        let Some(app) = &self.app else {
            return if token == self.token {
                Ok(Caller::User)
            } else {
                bad("Bad credentials")
            };
        };
        if app_route {
            return app.verify(token).map(|()| Caller::App).or_else(bad);
        }
        if token == self.token {
            return Ok(Caller::User);
        }
        match app.tokens.iter().find(|t| t.token == token) {
            Some(t) if t.expires_at > self.now => Ok(Caller::Installation {
                id: t.installation,
                account: app.account_of(t.installation).unwrap_or_default(),
            }),
            _ => bad("Bad credentials"),
        }
    }

    /// Answers one of the App's own routes (the caller is the App).
    pub fn app_route(&mut self, route: &AppRoute) -> Reply {
        let now = self.now;
        let Some(app) = &mut self.app else {
            return super::rest::not_found();
        };
        match route {
            AppRoute::App => Reply::json(
                200,
                &json!({ "id": app.id, "slug": app.slug, "name": app.slug, "node_id": "A_kwDOfake",
                         "owner": { "login": "octo", "type": "Organization" } }),
            ),
            AppRoute::RepoInstallation { repo } => {
                let account = repo.split('/').next().unwrap_or("").to_ascii_lowercase();
                let exists = self_repo_exists(&self.repos, repo);
                let app = self.app.as_ref().expect("the App");
                match app.installations.get(&account) {
                    Some(id) if exists => Reply::json(
                        200,
                        &json!({ "id": id, "app_id": app.id, "app_slug": app.slug,
                                 "account": { "login": account }, "target_type": "Organization" }),
                    ),
                    _ => super::rest::not_found(),
                }
            }
            AppRoute::AccessTokens { installation } => {
                if app.account_of(*installation).is_none() {
                    return super::rest::not_found();
                }
                let minted = app.mint(*installation, now);
                let mut reply = Reply::json(
                    201,
                    &json!({ "token": minted.token, "expires_at": timestamp(minted.expires_at),
                             "permissions": { "contents": "write", "pull_requests": "write",
                                              "checks": "read", "actions": "write" },
                             "repository_selection": "all" }),
                );
                reply.headers.push(("date".to_owned(), now.to_rfc2822()));
                reply
            }
        }
    }
}

fn self_repo_exists(repos: &BTreeMap<String, super::world::Repo>, repo: &str) -> bool {
    repos.keys().any(|r| r.eq_ignore_ascii_case(repo))
}

/// The App's own routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppRoute {
    App,
    RepoInstallation { repo: String },
    AccessTokens { installation: u64 },
}

//! A GitHub App's private key and the JWTs it signs: the PEM (PKCS#1 `BEGIN RSA PRIVATE KEY`,
//! as GitHub hands it out, or PKCS#8 `BEGIN PRIVATE KEY`) is read with the PEM reader rustls
//! already brings, and RS256 is signed with `ring`, so no OpenSSL is linked.
//!
//! A JWT says: issued 60 seconds ago (GitHub's allowance for clock drift), expiring nine
//! minutes from now (ten minutes after it was issued, GitHub's upper bound), issuer the app id.

use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;

/// How far in the past a JWT says it was issued.
pub const JWT_BACKDATE_SECS: i64 = 60;
/// How long a JWT lives, counted from its `iat` (GitHub refuses more than ten minutes).
pub const JWT_LIFETIME_SECS: i64 = 600;

/// A parsed App private key. `Debug` prints no part of it.
pub struct AppKey {
    pair: RsaKeyPair,
}

impl std::fmt::Debug for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppKey(***)")
    }
}

impl AppKey {
    /// Parses a PEM text. The error says what was expected, never any of the text.
    pub fn from_pem(pem: &str) -> Result<AppKey, String> {
        let der = PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|_| {
            "not a PEM private key (expected `-----BEGIN RSA PRIVATE KEY-----`, as GitHub gives \
             it, or `-----BEGIN PRIVATE KEY-----`)"
                .to_owned()
        })?;
        let pair = match &der {
            PrivateKeyDer::Pkcs1(key) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
            PrivateKeyDer::Pkcs8(key) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
            _ => return Err("not an RSA private key (a GitHub App key is RSA)".to_owned()),
        }
        .map_err(|e| format!("not a usable RSA private key ({e})"))?;
        Ok(AppKey { pair })
    }

    /// A JWT for app `app_id`, as of `now` (Unix seconds, the real clock).
    pub fn jwt(&self, app_id: u64, now: i64) -> Result<String, String> {
        let header = base64url(br#"{"alg":"RS256","typ":"JWT"}"#);
        let iat = now - JWT_BACKDATE_SECS;
        let claims = serde_json::json!({
            "iat": iat,
            "exp": iat + JWT_LIFETIME_SECS,
            "iss": app_id.to_string(),
        });
        let payload = base64url(claims.to_string().as_bytes());
        let signed = format!("{header}.{payload}");
        let mut signature = vec![0; self.pair.public().modulus_len()];
        self.pair
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signed.as_bytes(),
                &mut signature,
            )
            .map_err(|_| "the App key could not sign a JWT".to_owned())?;
        Ok(format!("{signed}.{}", base64url(&signature)))
    }
}

/// Base64url without padding (RFC 7515's encoding of JWT parts).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKCS1: &str = include_str!("../../../tests/keys/github-app-test.pem");
    const PKCS8: &str = include_str!("../../../tests/keys/github-app-test.pkcs8.pem");
    const PUBLIC: &str = include_str!("../../../tests/keys/github-app-test.pub.pem");

    /// The DER inside a one-section PEM text.
    fn pem_body(pem: &str) -> Vec<u8> {
        let text: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let value = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            _ => 63,
        };
        let mut out = Vec::new();
        for chunk in text.trim_end_matches('=').as_bytes().chunks(4) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, c)| n | u32::from(value(*c)) << (18 - 6 * i));
            for i in 0..chunk.len() - 1 {
                out.push(u8::try_from((n >> (16 - 8 * i)) & 0xff).unwrap());
            }
        }
        out
    }

    #[test]
    fn base64url_matches_rfc_4648_vectors_without_padding() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64url(plain.as_bytes()), encoded);
        }
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn a_jwt_is_rs256_signed_with_github_s_times() {
        let public = pem_body(PUBLIC);
        for pem in [PKCS1, PKCS8] {
            let key = AppKey::from_pem(pem).unwrap();
            let jwt = key.jwt(4242, 1_800_000_000).unwrap();
            let parts: Vec<&str> = jwt.split('.').collect();
            assert_eq!(parts.len(), 3);
            assert_eq!(parts[0], base64url(br#"{"alg":"RS256","typ":"JWT"}"#));
            let claims: serde_json::Value = serde_json::from_slice(&pem_body(&format!(
                "{}==",
                parts[1].replace('-', "+").replace('_', "/")
            )))
            .unwrap();
            assert_eq!(claims["iat"], 1_800_000_000 - 60);
            assert_eq!(claims["exp"], 1_800_000_000 + 540);
            assert_eq!(claims["iss"], "4242");
            let signature = pem_body(parts[2]);
            ring::signature::UnparsedPublicKey::new(
                &ring::signature::RSA_PKCS1_2048_8192_SHA256,
                &public,
            )
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
        }
    }

    #[test]
    fn a_bad_key_is_refused_without_quoting_it() {
        let cut = &PKCS1[..PKCS1.len() / 2];
        for (pem, want) in [
            ("", "not a PEM private key"),
            ("ghp_notakeyatall", "not a PEM private key"),
            (PUBLIC, "not a PEM private key"),
            (cut, "not a PEM private key"),
        ] {
            let err = AppKey::from_pem(pem).unwrap_err();
            assert!(err.starts_with(want), "{err}");
            assert!(!err.contains("MII"), "{err}");
        }
        let ec = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIm3\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(
            AppKey::from_pem(ec).unwrap_err(),
            "not an RSA private key (a GitHub App key is RSA)"
        );
        let garbage = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        assert!(
            AppKey::from_pem(garbage)
                .unwrap_err()
                .starts_with("not a usable RSA private key")
        );
        assert_eq!(
            format!("{:?}", AppKey::from_pem(PKCS1).unwrap()),
            "AppKey(***)"
        );
    }
}

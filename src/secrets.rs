//! Every secret this process holds (forge tokens, the SMTP user's password, webhook URLs),
//! gathered in one place as it is read, and masked by value in everything pr-monitor writes:
//! the database (history, `last_error`, outbox messages), log tails, feedback bodies, and the
//! errors it prints.

use crate::locked::Locked;

/// What a masked value reads as.
pub(crate) const MASK: &str = "***";

/// Values shorter than this are not masked by value (they would mask ordinary words).
const MIN_LEN: usize = 6;

/// The secrets held, longest first.
static HELD: Locked<Vec<String>> = Locked::new(Vec::new());

/// Remembers `value` as a secret, to be masked wherever it appears.
pub(crate) fn hold(value: &str) {
    let value = value.trim();
    if value.len() < MIN_LEN {
        return;
    }
    let mut list = HELD.borrow();
    if !list.iter().any(|v| v == value) {
        list.push(value.to_owned());
        // Longest first, so a secret containing another is masked whole.
        list.sort_by_key(|v| std::cmp::Reverse(v.len()));
    }
}

/// Holds the value of each environment variable in `names` that is set.
pub(crate) fn hold_env<'a>(names: impl IntoIterator<Item = &'a str>) {
    for name in names {
        if let Ok(value) = std::env::var(name) {
            hold(&value);
        }
    }
}

/// A URL's last path segment is held on its own only from this length: a key, not a word
/// (`…/T0/B0/<24-character key>` holds its key, `…/api/webhook` does not hold `webhook`).
const SEGMENT_MIN_LEN: usize = 16;

/// Remembers a secret URL (a Slack webhook): the whole URL, and its secret parts on their own
/// — the path and query after the host, and a key-like last path segment (Slack's secret) — so
/// a log that prints only the path or only the key still has them masked.
pub(crate) fn hold_url(url: &str) {
    let url = url.trim();
    hold(url);
    if let Ok(address) = crate::address::Address::parse(url)
        && address.path_onward() != "/"
    {
        hold(address.path_onward());
        if let Some(last) = address
            .path()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|l| l.len() >= SEGMENT_MIN_LEN)
        {
            hold(last);
        }
    }
}

/// Holds a PEM private key: the whole text, and each of its lines long enough to be key
/// material, so a log printing one line of the key has it masked too.
pub(crate) fn hold_pem(pem: &str) {
    hold(pem);
    for line in pem.lines().map(str::trim) {
        if line.len() >= SEGMENT_MIN_LEN && !line.starts_with("-----") {
            hold(line);
        }
    }
}

/// The opening of a PEM block that holds a private key (`RSA`, `EC`, PKCS#8, `OPENSSH` …).
const PEM_BEGIN: &str = "-----BEGIN ";
const PEM_PRIVATE: &str = "PRIVATE KEY-----";

/// `text` with every PEM private-key block, held or not, replaced by [`MASK`]: from its
/// `-----BEGIN … PRIVATE KEY-----` line through its `-----END … PRIVATE KEY-----` line, or to
/// the end of the text when the block is cut off.
pub(crate) fn mask_pem_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(begin) = rest.find(PEM_BEGIN) {
        let after = &rest[begin + PEM_BEGIN.len()..];
        let header_end = after.find('\n').unwrap_or(after.len());
        if !after[..header_end].trim_end().ends_with(PEM_PRIVATE) {
            out.push_str(&rest[..begin + PEM_BEGIN.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..begin]);
        out.push_str(MASK);
        rest = match after.find("-----END ") {
            Some(end) => {
                let tail = &after[end..];
                let close = tail
                    .find(PEM_PRIVATE)
                    .map_or(tail.len(), |i| i + PEM_PRIVATE.len());
                &tail[close..]
            }
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// `text` with every held secret, and every PEM private-key block, replaced by [`MASK`].
pub(crate) fn mask(text: &str) -> String {
    masked(text).into_owned()
}

/// [`mask`], borrowing `text` when there is nothing in it to mask (a page of megabytes is not
/// copied for nothing).
pub(crate) fn masked(text: &str) -> std::borrow::Cow<'_, str> {
    let list = HELD.borrow();
    let mut out = if text.contains(PEM_BEGIN) {
        std::borrow::Cow::Owned(mask_pem_blocks(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    for secret in list.iter() {
        if out.contains(secret.as_str()) {
            out = std::borrow::Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out
}

/// [`mask`] on an optional text.
pub(crate) fn mask_opt(text: Option<&str>) -> Option<String> {
    text.map(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_values_are_masked_wherever_they_appear() {
        let token = "0123456789abcdef0123456789abcdef01234567";
        hold(token);
        hold("hunter2-smtp-sentinel");
        hold("abc");
        assert_eq!(
            mask(&format!(
                "Authorization: token {token}\nproxy said hunter2-smtp-sentinel"
            )),
            "Authorization: token ***\nproxy said ***"
        );
        assert_eq!(mask("abc stays"), "abc stays", "too short to mask by value");
        assert!(
            matches!(masked("nothing held here"), std::borrow::Cow::Borrowed(_)),
            "a text with nothing to mask is not copied"
        );
        assert_eq!(
            masked(&format!("a {token} b")),
            "a *** b",
            "a text with a secret is"
        );
        assert_eq!(mask_opt(None), None);
    }

    #[test]
    fn private_key_blocks_and_a_held_keys_lines_are_masked() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAsentinelkeyline0001\nAnotherKeyLineOfBase64Material02\n-----END RSA PRIVATE KEY-----";
        assert_eq!(
            mask(&format!("before\n{pem}\nafter")),
            "before\n***\nafter",
            "a block is masked by its shape, held or not"
        );
        assert_eq!(
            mask("log: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk cut off here"),
            "log: ***"
        );
        let cert = "-----BEGIN CERTIFICATE-----\nMIIBpublic\n-----END CERTIFICATE-----";
        assert_eq!(mask(cert), cert, "a certificate is public");
        hold_pem(pem);
        assert_eq!(
            mask("step 3: AnotherKeyLineOfBase64Material02 leaked"),
            "step 3: *** leaked"
        );
    }

    #[test]
    fn a_held_url_masks_its_path_and_its_last_segment_too() {
        hold_url("https://hooks.example.com/services/T0/B0/url-sentinel-Zq9?x=1");
        assert_eq!(
            mask(
                "posting to https://hooks.example.com/services/T0/B0/url-sentinel-Zq9?x=1 \
                 (path /services/T0/B0/url-sentinel-Zq9?x=1, key url-sentinel-Zq9)"
            ),
            "posting to *** (path ***, key ***)"
        );
        assert_eq!(mask("services T0 B0"), "services T0 B0");
        hold_url("https://example.com/api/webhook");
        assert_eq!(mask("a webhook"), "a webhook", "a word, not a key");
    }
}

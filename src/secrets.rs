//! Every secret this process holds (forge tokens, the SMTP user's password, webhook URLs),
//! gathered in one place as it is read, and masked by value in everything pr-monitor writes:
//! the database (history, `last_error`, outbox messages), log tails, feedback bodies, and the
//! errors it prints.

use crate::locked::Locked;

/// What a masked value reads as.
pub const MASK: &str = "***";

/// Values shorter than this are not masked by value (they would mask ordinary words).
const MIN_LEN: usize = 6;

/// The secrets held, longest first.
static HELD: Locked<Vec<String>> = Locked::new(Vec::new());

/// Remembers `value` as a secret, to be masked wherever it appears.
pub fn hold(value: &str) {
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
pub fn hold_env<'a>(names: impl IntoIterator<Item = &'a str>) {
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
pub fn hold_url(url: &str) {
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

/// `text` with every held secret replaced by [`MASK`].
pub fn mask(text: &str) -> String {
    let list = HELD.borrow();
    let mut out = text.to_owned();
    for secret in list.iter() {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MASK);
        }
    }
    out
}

/// [`mask`] on an optional text.
pub fn mask_opt(text: Option<&str>) -> Option<String> {
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
        assert_eq!(mask_opt(None), None);
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

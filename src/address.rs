//! Web and mail server addresses: the one parser behind every rule about where pr-monitor sends
//! a request, a token or a webhook address.
//!
//! [`Address::parse`] reads `scheme://[userinfo@]host[:port][/path][?query][#fragment]` with the
//! `url` crate (the WHATWG rules a browser and the SMTP client follow), so a `?`, `#` or `\`
//! ends the authority exactly where the connection will see it end. On top it refuses what a
//! config file should not hold: whitespace, a host with other characters than letters, digits,
//! `-`, `.` and `_`, an empty or zero port. Everything else asks the parsed value:
//! [`Address::is_loopback`], [`is_https_or_loopback`], [`Address::host_port`],
//! [`without_userinfo`].

use std::net::IpAddr;

/// A parsed address, with the text it was read from.
#[derive(Debug, Clone)]
pub(crate) struct Address {
    url: url::Url,
}

impl Address {
    /// Parses `s`, explaining in one line (which quotes `s`) what is wrong with it.
    pub(crate) fn parse(s: &str) -> Result<Address, String> {
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("`{s}` is not a URL: it contains whitespace"));
        }
        let not_url = || format!("`{s}` is not a URL (scheme://host[:port][/path])");
        let (scheme, rest) = s.split_once("://").ok_or_else(not_url)?;
        if scheme.is_empty() {
            return Err(not_url());
        }
        let url = url::Url::parse(s).map_err(|e| match e {
            url::ParseError::EmptyHost => format!("`{s}` has no host"),
            url::ParseError::InvalidPort => format!("`{s}` has a malformed port"),
            url::ParseError::InvalidIpv6Address => {
                format!("`{s}` has a malformed IPv6 address")
            }
            url::ParseError::InvalidDomainCharacter | url::ParseError::IdnaError => {
                format!("`{s}` has a malformed host")
            }
            _ => not_url(),
        })?;
        let host = match url.host() {
            None | Some(url::Host::Domain("")) => return Err(format!("`{s}` has no host")),
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => String::new(),
        };
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        {
            return Err(format!("`{s}` has a malformed host `{host}`"));
        }
        // The parser drops an empty port (`host:`) silently; a config file should not hold one.
        let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
        let port_text = authority
            .rsplit_once('@')
            .map_or(authority, |(_, hp)| hp)
            .rsplit_once(':')
            .filter(|(h, _)| !h.starts_with('[') || h.ends_with(']'))
            .map(|(_, p)| p);
        if port_text == Some("") || url.port() == Some(0) {
            return Err(format!(
                "`{s}` has a malformed port `{}`",
                port_text.unwrap_or("")
            ));
        }
        Ok(Address { url })
    }

    /// The scheme, lower-cased.
    pub(crate) fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The host, lower-cased for a web address, without brackets for an IPv6 literal.
    pub(crate) fn host(&self) -> String {
        match self.url.host() {
            Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => String::new(),
        }
    }

    /// `host[:port]` as it would be written (brackets around IPv6), the port only when given.
    pub(crate) fn host_port(&self) -> String {
        let host = self.url.host_str().unwrap_or("").to_ascii_lowercase();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        }
    }

    /// Whether the address carries a user name or password.
    pub(crate) fn has_userinfo(&self) -> bool {
        !self.url.username().is_empty() || self.url.password().is_some()
    }

    /// The password of the userinfo, as written.
    pub(crate) fn password(&self) -> Option<&str> {
        self.url.password()
    }

    /// The path, as the parser normalised it (`/` at least for a web address).
    pub(crate) fn path(&self) -> &str {
        self.url.path()
    }

    /// The path with the query and fragment, as they would be sent.
    pub(crate) fn path_onward(&self) -> &str {
        &self.url[url::Position::BeforePath..]
    }

    /// The value of the query parameter `key`, if given.
    pub(crate) fn query(&self, key: &str) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }

    /// Whether the host is `localhost`, 127.0.0.0/8 or ::1.
    pub(crate) fn is_loopback(&self) -> bool {
        match self.url.host() {
            Some(url::Host::Domain(d)) => is_loopback_host(d),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }

    /// https, or plain http to a loopback host.
    pub(crate) fn is_https_or_loopback(&self) -> bool {
        match self.scheme() {
            "https" => true,
            "http" => self.is_loopback(),
            _ => false,
        }
    }
}

/// Whether `host` is `localhost`, 127.0.0.0/8 or ::1.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether `url` parses and its host is a loopback address (or `localhost`).
pub(crate) fn is_loopback(url: &str) -> bool {
    Address::parse(url).is_ok_and(|a| a.is_loopback())
}

/// The one rule for where a secret (a token, a webhook address) may travel: https, or plain
/// http to a loopback host. Anything that does not parse is refused.
pub(crate) fn is_https_or_loopback(url: &str) -> bool {
    Address::parse(url).is_ok_and(|a| a.is_https_or_loopback())
}

/// `s` with the userinfo of its authority (`user:password@`) shown as `***@`, for messages.
/// The authority ends where the parser ends it (`/`, `?`, `#`, or `\`), so a `@` after it is
/// left alone.
pub(crate) fn without_userinfo(s: &str) -> String {
    let Some((scheme, rest)) = s.split_once("://") else {
        return s.to_owned();
    };
    let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every "https, or plain http to loopback" question, asked of the one parser.
    #[test]
    fn only_https_or_plain_http_to_loopback_carries_a_secret() {
        let table = [
            ("https://api.github.com", true),
            ("HTTPS://Example.COM:443/x?y=1#z", true),
            ("http://127.0.0.1:8080/graphql", true),
            ("http://127.5.6.7", true),
            ("http://localhost/x", true),
            ("http://LocalHost:3000/api", true),
            ("http://[::1]:9/", true),
            ("http://user:pw@127.0.0.1/", true),
            ("http://example.com", false),
            ("http://10.0.0.1/", false),
            ("http://[::2]", false),
            ("ftp://x", false),
            ("http://127.0.0.1.evil.com/", false),
            ("http://localhost.evil.com/", false),
            // The authority ends at `?`, `#` and (for web schemes) `\`: what follows is the
            // query, the fragment or the path, not the host.
            ("http://hooks.example.com?@127.0.0.1/", false),
            ("http://x?@127.0.0.1/", false),
            ("http://x#@localhost/", false),
            ("http://x\\@127.0.0.1/", false),
            ("http://x?a=b@[::1]/", false),
            ("http://x#@[::1]:80", false),
            ("http://127.0.0.1:80@evil.com/", false),
            ("http://[::1]@evil.com/", false),
            ("http://localhost@evil.com/", false),
            // A `/` written as `%2f` stays in the userinfo: the host is loopback.
            ("http://evil.com%2f@127.0.0.1/", true),
            ("http:/127.0.0.1/", false),
            ("http://", false),
            ("127.0.0.1", false),
        ];
        for (url, want) in table {
            assert_eq!(is_https_or_loopback(url), want, "{url}");
        }
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        let bad = [
            ("api.github.com", "is not a URL"),
            ("https://", "has no host"),
            ("https://exa mple.com", "whitespace"),
            ("https://example.com:99999", "malformed port"),
            ("https://example.com:", "malformed port"),
            ("https://example.com:0/x", "malformed port `0`"),
            ("https://exa$mple.com", "malformed host"),
            ("https://[zz]:80", "malformed IPv6"),
        ];
        for (input, want) in bad {
            let err = Address::parse(input).unwrap_err();
            assert!(err.contains(want), "{input}: {err}");
        }
    }

    #[test]
    fn parts() {
        let a = Address::parse("SMTP://me:pw@Mail.Example:2525/x?tls=required#f").unwrap();
        assert_eq!(a.scheme(), "smtp");
        assert_eq!(a.host_port(), "mail.example:2525");
        assert_eq!(a.password(), Some("pw"));
        assert!(a.has_userinfo());
        assert_eq!(a.query("tls").as_deref(), Some("required"));
        let a = Address::parse("https://user:pw@GitLab.example/api?x=1").unwrap();
        assert_eq!(a.host_port(), "gitlab.example");
        assert_eq!(a.path_onward(), "/api?x=1");
        assert_eq!(Address::parse("http://[::1]:9/").unwrap().host(), "::1");
        assert_eq!(
            Address::parse("http://[::1]:9/").unwrap().host_port(),
            "[::1]:9"
        );
        assert!(
            !Address::parse("https://a.example/x@y")
                .unwrap()
                .has_userinfo()
        );
    }

    #[test]
    fn userinfo_is_hidden_up_to_where_the_authority_ends() {
        assert_eq!(
            without_userinfo("smtp://me:pw@mail.example:25"),
            "smtp://***@mail.example:25"
        );
        assert_eq!(
            without_userinfo("https://a.example/x@y"),
            "https://a.example/x@y"
        );
        assert_eq!(
            without_userinfo("http://a.example?u@v"),
            "http://a.example?u@v"
        );
    }
}

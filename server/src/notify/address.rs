//! Where a webhook may point. A player names the URL and the server makes the request, so a
//! URL on loopback, a private network or a link-local address (a cloud's metadata service)
//! would let any player probe the operator's network from inside it. Unless the operator
//! allows it (`--notify-allow-private`), every address a webhook's host resolves to is checked,
//! at registration and again at every send (a name may resolve elsewhere later), and a
//! redirect is never followed.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Whether `ip` is one a webhook may not reach without the operator's leave: loopback,
/// private, shared (carrier-grade NAT), link-local, unspecified, broadcast, multicast,
/// documentation and benchmarking ranges, IPv6 unique-local and site-local, and IPv4 inside
/// IPv6 forms of any of these.
pub fn forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return forbidden_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first & 0xffc0) == 0xfec0 // site-local fec0::/10
                || first == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
                || first == 0x0064 && v6.segments()[1] == 0xff9b // NAT64 to any IPv4
                || v6.segments()[..6] == [0; 6] // IPv4-compatible ::a.b.c.d
        }
    }
}

fn forbidden_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space 100.64/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18/15
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || a >= 240 // reserved
}

/// Checks webhook URLs and the addresses their hosts resolve to; the resolver of the
/// notifier's HTTP client.
#[derive(Clone)]
pub struct AddressGuard {
    allow_private: bool,
}

/// Longest webhook URL taken.
const URL_BYTES_MAX: usize = 2048;

/// Why a webhook's address is refused, in words for the player registering it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("`{0}` resolves to no address")]
    NoAddress(String),
    #[error("`{host}` resolves to {ip}, a loopback, private or link-local address, which this server does not send webhooks to (its operator may allow it with `--notify-allow-private`)")]
    Forbidden { host: String, ip: IpAddr },
    #[error("a webhook URL may be at most {URL_BYTES_MAX} bytes")]
    TooLong,
    #[error("`{url}` is not a URL ({why})")]
    NotUrl { url: String, why: String },
    #[error("a webhook is an http or https URL, not `{0}`")]
    Scheme(String),
    #[error("a webhook URL may not carry a user name or password")]
    Credentials,
    #[error("`{0}` names no host")]
    NoHost(String),
    #[error("`{host}` cannot be resolved ({why})")]
    Unresolved { host: String, why: String },
    /// A name the player gave that resolves to nothing, or to an address a webhook may not
    /// reach, told in one set of words naming no address: the answer to a player must not
    /// map the operator's network (which internal names exist, and where they point).
    #[error("`{0}` resolves to no public address (to none at all, or to a loopback, private or link-local one): this server sends webhooks only to names that resolve to public addresses (its operator may allow others with `--notify-allow-private`)")]
    NotPublic(String),
}

impl AddressGuard {
    pub fn new(allow_private: bool) -> AddressGuard {
        AddressGuard { allow_private }
    }

    fn refuse_any(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), AddressError> {
        if addrs.is_empty() {
            return Err(AddressError::NoAddress(host.to_string()));
        }
        if self.allow_private {
            return Ok(());
        }
        match addrs.iter().find(|a| forbidden(a.ip())) {
            Some(bad) => Err(AddressError::Forbidden {
                host: host.to_string(),
                ip: bad.ip(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses a webhook URL that is not `http`/`https` with a host, or whose host resolves
    /// to an address a webhook may not reach.
    pub async fn check_url(&self, url: &str) -> Result<(), AddressError> {
        if url.len() > URL_BYTES_MAX {
            return Err(AddressError::TooLong);
        }
        let parsed = reqwest::Url::parse(url).map_err(|e| AddressError::NotUrl {
            url: url.to_string(),
            why: e.to_string(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(AddressError::Scheme(parsed.scheme().to_string()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(AddressError::Credentials);
        }
        let host = parsed
            .host_str()
            .ok_or_else(|| AddressError::NoHost(url.to_string()))?
            .to_string();
        let port = parsed.port_or_known_default().unwrap_or(443);
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok();
        // An address the player typed is its own word, and may be named back; what a name
        // resolves to, or whether it resolves, is the operator's network, and is not told.
        if literal || self.allow_private {
            let addrs = self.resolve(&host, port).await?;
            return self.refuse_any(&host, &addrs);
        }
        match self.resolve(&host, port).await {
            Ok(addrs) if self.refuse_any(&host, &addrs).is_ok() => Ok(()),
            _ => Err(AddressError::NotPublic(host)),
        }
    }

    /// The addresses of `host` (an IP literal is its own), or why there are none.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, AddressError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        tokio::net::lookup_host((bare, port))
            .await
            .map(|addrs| addrs.collect())
            .map_err(|e| AddressError::Unresolved {
                host: host.to_string(),
                why: e.to_string(),
            })
    }

    /// Checks the host of a URL about to be requested: an IP literal here (the client's
    /// resolver never sees one), a name by the resolver below.
    pub(crate) fn check_literal(&self, url: &reqwest::Url) -> Result<(), AddressError> {
        let host = url.host_str().unwrap_or_default();
        let Ok(ip) = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        else {
            return Ok(());
        };
        self.refuse_any(&ip.to_string(), &[SocketAddr::new(ip, 0)])
    }
}

impl reqwest::dns::Resolve for AddressGuard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs = guard.resolve(&host, 0).await?;
            guard.refuse_any(&host, &addrs)?;
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The guard as the client's resolver.
pub(crate) fn resolver(guard: &AddressGuard) -> Arc<AddressGuard> {
    Arc::new(guard.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_link_local_are_forbidden_public_are_not() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            assert!(forbidden(bad.parse().unwrap()), "{bad} should be forbidden");
        }
        for good in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(
                !forbidden(good.parse().unwrap()),
                "{good} should be allowed"
            );
        }
    }

    #[tokio::test]
    async fn urls_are_checked_by_scheme_and_every_address() {
        let strict = AddressGuard::new(false);
        for (url, says) in [
            ("http://127.0.0.1:9/hook", "loopback"),
            ("http://[::1]/hook", "loopback"),
            ("http://localhost:8080/", "loopback"),
            ("http://169.254.169.254/latest", "link-local"),
            ("ftp://example.org/", "http or https"),
            ("http://user:pw@example.org/", "user name"),
            ("not a url", "not a URL"),
        ] {
            let refused = strict.check_url(url).await.unwrap_err().to_string();
            assert!(refused.contains(says), "{url}: {refused}");
        }
        let open = AddressGuard::new(true);
        open.check_url("http://127.0.0.1:9/hook").await.unwrap();
    }

    /// A player registering webhooks must not map the operator's network by the refusals: a
    /// name that resolves to a private address is refused in the very words a name that
    /// resolves to nothing is, and neither names an address the server looked up.
    #[tokio::test]
    async fn a_refusal_tells_no_address_a_name_resolves_to_nor_whether_it_resolves() {
        let strict = AddressGuard::new(false);
        let told = |host: &'static str| {
            let strict = strict.clone();
            async move {
                strict
                    .check_url(&format!("http://{host}:8080/hook"))
                    .await
                    .unwrap_err()
                    .to_string()
                    .replace(host, "HOST")
            }
        };
        let private = told("localhost").await;
        let nowhere = told("nosuch.invalid").await;
        assert_eq!(private, nowhere);
        for address in ["127.0.0.1", "::1"] {
            assert!(!private.contains(address), "{private}");
        }
        // An address the player typed is its own to be told about.
        let literal = strict
            .check_url("http://10.1.2.3/hook")
            .await
            .unwrap_err()
            .to_string();
        assert!(literal.contains("10.1.2.3"), "{literal}");
    }
}

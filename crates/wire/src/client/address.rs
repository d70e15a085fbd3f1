//! Whether a URL given by the user can ever be reached: checked before anything is sent, by
//! every command and for every flag that takes one, so that no command waits, retries or
//! reports "unreachable" for an address that no request could ever reach.

use super::shown_url;

/// Why `url` can never be an address, in words naming it as it may be shown (without its
/// user and password): no scheme, a scheme other than http or https, a port outside
/// 1–65535, or no URL at all.
pub fn check(url: &str) -> Result<(), String> {
    let shown = shown_url(url);
    // Without `://`, the URL parser would read `localhost:8080` as scheme `localhost`, and
    // the first request would fail as "scheme is not allowed".
    let scheme = url.split_once("://").map(|(s, _)| s).filter(|s| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let Some(scheme) = scheme else {
        return Err(format!(
            "{shown}: no scheme: write http://{shown} (or https://)"
        ));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!(
            "{shown}: scheme {scheme}:// is not supported: use http:// or https://"
        ));
    }
    if let Some(port) = port_of(url)
        && !port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
    {
        return Err(format!(
            "{shown}: port {port} is out of range: a port is 1 to 65535"
        ));
    }
    reqwest::Url::parse(url)
        .map(drop)
        .map_err(|e| format!("{shown}: not a valid URL ({e})"))
}

/// The host and port a URL's requests connect to (the scheme's port where it names none).
pub fn socket(url: &str) -> Option<(String, u16)> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_string(), u.port_or_known_default()?))
}

/// The digits after the host's colon, if the authority has a numeric port (a port that is
/// not a number is left to the URL parser, which names it).
fn port_of(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    // An IPv6 host holds colons of its own: the port follows its closing bracket.
    let after_host = match host_port.rfind(']') {
        Some(i) => &host_port[i + 1..],
        None => host_port,
    };
    let port = &after_host[after_host.rfind(':')? + 1..];
    (!port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())).then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_that_can_never_answer_are_named() {
        for ok in [
            "http://127.0.0.1:8080",
            "https://example.com/base?x=1",
            "http://[::1]:65535/v2",
            "http://user:pw@host:1",
            "http://host",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        let err = |u: &str| check(u).unwrap_err();
        assert_eq!(
            err("http://127.0.0.1:99999"),
            "http://127.0.0.1:99999: port 99999 is out of range: a port is 1 to 65535"
        );
        assert!(err("http://[::1]:0").contains("port 0 is out of range"));
        assert!(err("http://h:99999999999999999999/").contains("out of range"));
        assert!(err("localhost:8080").contains("no scheme: write http://localhost:8080"));
        assert!(err("ftp://h:21").contains("use http:// or https://"));
        assert!(err("http://").contains("not a valid URL"));
        assert!(err("http://h:8o80").contains("not a valid URL (invalid port number)"));
        assert_eq!(socket("http://u:p@[::1]:9/x"), Some(("::1".into(), 9)));
        assert_eq!(
            socket("https://example.com"),
            Some(("example.com".into(), 443))
        );
        // The password is never part of the message.
        let e = err("http://admin:hunter22@h:70000");
        assert!(!e.contains("hunter22") && e.contains("port 70000"), "{e}");
    }
}

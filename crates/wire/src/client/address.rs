//! Whether a URL given by the user can ever be reached: checked before anything is sent, by
//! every command and for every flag that takes one, so that no command waits, retries or
//! reports "unreachable" for an address that no request could ever reach.

use super::shown_url;

/// Why `url` can never be an address, in words naming it as it may be shown (without its
/// user and password): no scheme, a scheme other than http or https, a port outside
/// 1–65535, or no URL at all.
pub fn check(url: &str) -> Result<(), String> {
    check_schemes(url, false)
}

/// As `check`, for the flags that name the server under load (`--url`, `compare`'s
/// `url=`), which may also be a KServe v2 gRPC server: `grpc://host:port`, `grpcs://`.
pub fn check_target(url: &str) -> Result<(), String> {
    check_schemes(url, true)
}

fn check_schemes(url: &str, grpc: bool) -> Result<(), String> {
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
    let is = |s: &str| scheme.eq_ignore_ascii_case(s);
    let is_grpc = is("grpc") || is("grpcs");
    let allowed = is("http") || is("https") || (grpc && is_grpc);
    if !allowed {
        let also = if grpc {
            " (or grpc:// for a KServe v2 server's gRPC port)"
        } else {
            ""
        };
        return Err(format!(
            "{shown}: scheme {scheme}:// is not supported: use http:// or https://{also}"
        ));
    }
    if let Some(port) = port_of(url)
        && !port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
    {
        return Err(format!(
            "{shown}: port {port} is out of range: a port is 1 to 65535"
        ));
    }
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{shown}: not a valid URL ({e})"))?;
    if is_grpc {
        check_grpc(&parsed, &shown)?;
    }
    Ok(())
}

/// A gRPC address is a host and a port, nothing else: the service's paths are the
/// protocol's, and credentials travel as metadata (`--header`), never in the URL.
fn check_grpc(url: &reqwest::Url, shown: &str) -> Result<(), String> {
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{shown}: a gRPC URL takes no user or password: give credentials with --header"
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{shown}: no host"));
    }
    if url.port().is_none() {
        return Err(format!(
            "{shown}: no port: write grpc://HOST:PORT (Triton's gRPC port is 8001)"
        ));
    }
    if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{shown}: a gRPC URL has no path or query: write grpc://HOST:PORT (the protocol names the service)"
        ));
    }
    Ok(())
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
        // gRPC only where a server under load is named.
        assert!(err("grpc://127.0.0.1:8001").contains("use http:// or https://"));
    }

    #[test]
    fn a_grpc_address_is_a_host_and_a_port() {
        for ok in [
            "grpc://127.0.0.1:8001",
            "grpcs://triton.example:443/",
            "GRPC://[::1]:1",
        ] {
            assert_eq!(check_target(ok), Ok(()), "{ok}");
        }
        let err = |u: &str| check_target(u).unwrap_err();
        assert!(err("grpc://h").contains("no port: write grpc://HOST:PORT"));
        assert!(err("grpc://h:8001/v2/models").contains("no path or query"));
        assert!(err("grpc://h:70000").contains("port 70000 is out of range"));
        let e = err("grpc://u:hunter22@h:8001");
        assert!(
            e.contains("no user or password") && !e.contains("hunter22"),
            "{e}"
        );
        assert!(err("ftp://h:21").contains("(or grpc:// for"));
        assert_eq!(check_target("http://h:8000"), Ok(()));
    }
}

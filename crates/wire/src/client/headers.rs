//! Headers the user adds to every request of an HTTP target (`--header`,
//! `--bearer-token-env`): an API gateway's key, the Bearer token of a vLLM or TEI server
//! started with `--api-key`, Triton's access token. Their values are secrets: marked
//! sensitive for the HTTP stack and remembered by `scrub`, so that no export, log or screen
//! shows them, even where a server echoes them back.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

/// `Name: value`, as curl's `-H` takes it. A refusal names the header and what is wrong
/// with it, never the value: the value may be the secret itself.
pub fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once(':')
        .ok_or_else(|| "expected 'Name: value', with a ':' after the name".to_string())?;
    let (name, value) = (name.trim(), value.trim());
    check_name(name)?;
    check_value(name, value)?;
    Ok((name.to_string(), value.to_string()))
}

/// RFC 9110's token: visible ASCII but for separators. A refusal shows the name up to its
/// first bad character only: what follows may be a value typed without its ':'.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the header name before ':' is empty".into());
    }
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    let Some((at, bad)) = name.char_indices().find(|&(_, c)| !token(c)) else {
        return Ok(());
    };
    let what = if bad.is_whitespace() {
        "a space".to_string()
    } else if !bad.is_ascii() {
        format!(
            "'{}' (outside ASCII)",
            encbench_core::scrub::text(&bad.to_string())
        )
    } else if bad.is_ascii_control() {
        "a control character".to_string()
    } else {
        format!("'{bad}'")
    };
    let place = if at == 0 {
        "first".to_string()
    } else {
        format!("after '{}'", &name[..at])
    };
    Err(format!(
        "the header name has {what} {place}: a name is letters, digits and !#$%&'*+-.^_`|~"
    ))
}

fn check_value(name: &str, value: &str) -> Result<(), String> {
    let why = if value.contains(['\r', '\n']) {
        "holds a line break (CR or LF), which would end the header and start another"
    } else if HeaderValue::from_str(value).is_err() {
        "holds a control character"
    } else {
        return Ok(());
    };
    Err(format!(
        "the value of header {name} {why} (the value is not shown)"
    ))
}

/// The extra headers of one target, ready to send.
#[derive(Debug, Clone, Default)]
pub struct ExtraHeaders {
    list: Vec<(HeaderName, HeaderValue)>,
}

impl ExtraHeaders {
    /// From `Name: value` pairs and a Bearer token; every value is remembered as a secret.
    pub fn new(given: &[(String, String)], bearer: Option<&str>) -> Result<ExtraHeaders, String> {
        let mut list = Vec::new();
        for (name, value) in given {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                format!(
                    "'{}' is not a header name",
                    encbench_core::scrub::text(name)
                )
            })?;
            let mut v = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of {name} is not a header value"))?;
            v.set_sensitive(true);
            remember(value);
            list.push((name, v));
        }
        if let Some(token) = bearer {
            let mut v = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| "the bearer token is not a header value".to_string())?;
            v.set_sensitive(true);
            remember(token);
            list.push((AUTHORIZATION, v));
        }
        Ok(ExtraHeaders { list })
    }

    pub fn as_slice(&self) -> &[(HeaderName, HeaderValue)] {
        &self.list
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// For a reqwest client's default headers.
    pub fn map(&self) -> HeaderMap {
        self.list.iter().cloned().collect()
    }

    /// The header names, as the export may record them: never a value.
    pub fn names(&self) -> Vec<String> {
        self.list.iter().map(|(n, _)| n.to_string()).collect()
    }
}

/// A value, and each word of it ("Bearer", "Basic" schemes aside), is a secret.
fn remember(value: &str) {
    encbench_core::scrub::remember(value);
    for word in value.split_whitespace() {
        if !["bearer", "basic", "token"].contains(&word.to_ascii_lowercase().as_str()) {
            encbench_core::scrub::remember(word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_as_curl_takes_them_and_their_values_are_scrubbed() {
        assert_eq!(
            parse_header("X-Api-Key:  s3cr3t-key ").unwrap(),
            ("X-Api-Key".into(), "s3cr3t-key".into())
        );
        assert!(parse_header("no colon").is_err());
        for (given, why) in [
            ("bad name: v", "has a space after 'bad'"),
            ("X-Ключ: v", "has 'К' (outside ASCII) after 'X-'"),
            ("X(a): v", "has '(' after 'X'"),
            ("X-Key=hidden-secret: v", "has '=' after 'X-Key':"),
            (": v", "name before ':' is empty"),
            ("X-Key: a\r\nInjected: x", "X-Key holds a line break"),
            ("X-Key: a\u{7}b", "X-Key holds a control character"),
        ] {
            let e = parse_header(given).unwrap_err();
            assert!(e.contains(why), "{given:?}: {e}");
            assert!(!e.contains("hidden-secret"), "{e}");
        }
        let h = ExtraHeaders::new(
            &[("X-Tenant".into(), "acme-tenant-77".into())],
            Some("tok-abcdef-123"),
        )
        .unwrap();
        assert_eq!(h.names(), vec!["x-tenant", "authorization"]);
        assert!(h.as_slice().iter().all(|(_, v)| v.is_sensitive()));
        assert_eq!(
            encbench_core::scrub::text("echo: Bearer tok-abcdef-123 for acme-tenant-77"),
            "echo: Bearer *** for ***"
        );
    }
}

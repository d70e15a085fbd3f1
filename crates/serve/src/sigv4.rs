//! Checking a SigV4 signature the way SageMaker does: re-sign the request's canonical form
//! with the secret the server was started with (aws-sigv4 computes it) and compare.

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use axum::http::{HeaderMap, Method, Uri};
use std::time::SystemTime;

/// Why a request is refused: SageMaker's error code and message.
pub type Refusal = (&'static str, String);

struct Authorization<'a> {
    access_key: &'a str,
    region: &'a str,
    service: &'a str,
    signed_headers: Vec<&'a str>,
    signature: &'a str,
}

fn parse(header: &str) -> Option<Authorization<'_>> {
    let rest = header.strip_prefix("AWS4-HMAC-SHA256 ")?;
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for part in rest.split(',') {
        let (k, v) = part.trim().split_once('=')?;
        match k {
            "Credential" => credential = Some(v),
            "SignedHeaders" => signed = Some(v),
            "Signature" => signature = Some(v),
            _ => {}
        }
    }
    // AKID/yyyymmdd/region/service/aws4_request
    let mut scope = credential?.split('/');
    let access_key = scope.next()?;
    let _date = scope.next()?;
    let region = scope.next()?;
    let service = scope.next()?;
    Some(Authorization {
        access_key,
        region,
        service,
        signed_headers: signed?.split(';').collect(),
        signature: signature?,
    })
}

fn amz_date(headers: &HeaderMap) -> Option<SystemTime> {
    let text = headers.get("x-amz-date")?.to_str().ok()?;
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    let t = time::PrimitiveDateTime::parse(text, &format)
        .ok()?
        .assume_utc();
    Some(t.into())
}

pub fn verify(
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
    access_key: &str,
    secret: &str,
) -> Result<(), Refusal> {
    let missing = || {
        (
            "MissingAuthenticationToken",
            "Missing Authentication Token".to_string(),
        )
    };
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(missing)?;
    let auth = parse(auth).ok_or((
        "IncompleteSignature",
        "Authorization header is malformed".to_string(),
    ))?;
    if auth.access_key != access_key {
        return Err((
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".into(),
        ));
    }
    let time = amz_date(headers).ok_or((
        "IncompleteSignature",
        "x-amz-date is missing or malformed".to_string(),
    ))?;

    // Exactly the headers the client signed, in its canonical form.
    let mut signed: Vec<(&str, &str)> = Vec::new();
    for name in &auth.signed_headers {
        let value = headers
            .get(*name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        signed.push((name, value));
    }
    let content_sha = headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok());
    let mut settings = SigningSettings::default();
    let body = match content_sha {
        Some("UNSIGNED-PAYLOAD") => SignableBody::UnsignedPayload,
        _ => SignableBody::Bytes(body),
    };
    if content_sha.is_some() && auth.signed_headers.contains(&"x-amz-content-sha256") {
        settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    }
    let token = headers
        .get("x-amz-security-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let identity = Credentials::new(access_key, secret, token, None, "encbench-serve").into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(auth.region)
        .name(auth.service)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| ("IncompleteSignature", e.to_string()))?;
    let url = format!(
        "http://{}{}",
        headers
            .get("host")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("localhost"),
        uri
    );
    let request = SignableRequest::new(method.as_str(), &url, signed.into_iter(), body)
        .map_err(|e| ("IncompleteSignature", e.to_string()))?;
    let (_, expected) = sign(request, &params.into())
        .map_err(|e| ("IncompleteSignature", e.to_string()))?
        .into_parts();
    if expected != auth.signature {
        return Err((
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided.".into(),
        ));
    }
    Ok(())
}

//! A message on the stream: a flag byte (compressed or not), its length as a big-endian u32,
//! then the protobuf bytes.

use bytes::{BufMut, Bytes, BytesMut};

/// Bytes before each message.
pub const PREFIX: usize = 5;

/// One uncompressed message, framed.
pub fn frame(message: &impl prost::Message) -> Bytes {
    let mut out = BytesMut::with_capacity(PREFIX + message.encoded_len());
    frame_into(message, &mut out);
    out.freeze()
}

/// Frames `message` at the end of `out`, encoded in place: a request's tensors are copied
/// once, into the body that is sent.
pub fn frame_into(message: &impl prost::Message, out: &mut BytesMut) {
    let len = message.encoded_len();
    out.reserve(PREFIX + len);
    out.put_u8(0);
    out.put_u32(u32::try_from(len).expect("a message under 4 GiB"));
    message
        .encode(out)
        .expect("the buffer was reserved for the whole message");
}

/// The one message of a unary call's body. Anything else (a compressed message, which this
/// client never asks for; a length past the body; a second message) is not an answer.
pub fn unframe(body: &Bytes) -> Result<Bytes, String> {
    let Some(prefix) = body.get(..PREFIX) else {
        return Err(format!("the body holds no message ({} bytes)", body.len()));
    };
    if prefix[0] != 0 {
        return Err("the message is compressed, and no compression was asked for".into());
    }
    let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    let end = PREFIX
        .checked_add(len)
        .filter(|&e| e <= body.len())
        .ok_or_else(|| {
            format!(
                "the message says {len} bytes, the body holds {}",
                body.len() - PREFIX
            )
        })?;
    if end != body.len() {
        return Err("the body holds more than one message".into());
    }
    Ok(body.slice(PREFIX..end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::messages::ModelReadyResponse;

    #[test]
    fn a_message_round_trips_and_broken_frames_are_named() {
        let body = frame(&ModelReadyResponse { ready: true });
        assert_eq!(&body[..], &[0, 0, 0, 0, 2, 0x08, 0x01]);
        let msg = unframe(&body).unwrap();
        assert_eq!(
            <ModelReadyResponse as prost::Message>::decode(msg).unwrap(),
            ModelReadyResponse { ready: true }
        );
        assert!(unframe(&Bytes::from_static(&[0, 0, 0])).is_err());
        assert!(
            unframe(&Bytes::from_static(&[1, 0, 0, 0, 0]))
                .unwrap_err()
                .contains("compressed")
        );
        assert!(
            unframe(&Bytes::from_static(&[0, 0, 0, 0, 9, 1]))
                .unwrap_err()
                .contains("says 9 bytes")
        );
        assert!(
            unframe(&Bytes::from_static(&[0, 0, 0, 0, 0, 0]))
                .unwrap_err()
                .contains("more than one")
        );
        // An empty message is a message: `ServerLiveRequest {}`.
        assert_eq!(
            unframe(&Bytes::from_static(&[0, 0, 0, 0, 0]))
                .unwrap()
                .len(),
            0
        );
    }
}

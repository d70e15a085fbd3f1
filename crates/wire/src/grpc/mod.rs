//! The KServe v2 protocol over gRPC, as both ends of this project speak it: the service's
//! messages, a message's framing on an HTTP/2 stream, and the status a call ends with.
//! The client is `client::grpc`; the reference endpoint answers with the same pieces.
//!
//! gRPC is HTTP/2 with a fixed shape (the gRPC over HTTP/2 protocol document): a POST to
//! `/package.Service/Method` with `content-type: application/grpc` and `te: trailers`, a body
//! of length-prefixed messages, and the outcome in trailers (`grpc-status`,
//! `grpc-message`). A unary call, all this project makes, is one message each way.

pub mod frame;
pub mod messages;
pub mod status;

pub use frame::{frame, frame_into, unframe};
pub use status::Code;

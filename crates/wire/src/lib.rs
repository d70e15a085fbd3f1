//! encbench on the wire: how requests are built and replies read for each server's API, and
//! the clients that carry them.
//!
//! ```text
//! client     where requests go: a URL (HTTP/1.1 pool, reqwest, gRPC) or SageMaker (AWS SDK);
//!            the server's metrics endpoint and CloudWatch
//! discover   which API family a server at a URL speaks, from its metadata routes
//! grpc       KServe v2 over gRPC: the service's messages, framing and status codes
//! exact_text texts of an exact token count from the shipped corpus (--input-tokens)
//! payload    the API families (hf, triton, vllm, openai, tei, infinity, jina): request
//!            bodies, replies, labels, vectors, rankings, and their routes
//! timing     sub-millisecond sleeps (a timerfd on tokio's reactor), the timer slack, a
//!            thread's CPU time: here because the engine and the reference endpoint, two
//!            crates of the layer above, both keep time by it
//! tokenize   real token counts and client-side tokenization from a tokenizer.json
//! ```

pub mod client;
pub mod discover;
pub mod exact_text;
pub mod grpc;
pub mod payload;
pub mod timing;
pub mod tokenize;

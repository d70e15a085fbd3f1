//! The integration tests, in one binary: the library in-process where a run needs no
//! process of its own, the real binary where it does (environment, stderr, signals, a
//! terminal), real HTTP on 127.0.0.1 everywhere, and real third-party servers in `peers`.
#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as the session it drives; the limit holds for the code"
)]

mod common;

mod accuracy_and_input;
mod alone;
mod bounds;
mod capacity;
mod cli_conventions;
mod compare;
mod deploy;
mod docs_commands;
mod endpoint_lost;
mod export_schema;
mod families;
mod faults;
mod fresh_machine;
mod grpc;
mod hostile_files;
mod hostile_text;
mod html_report;
mod input_lengths;
mod known_answers;
mod layers;
mod live_segments;
mod newcomer_errors;
mod newcomer_small;
mod peers;
mod real_model;
mod records;
mod repeat;
mod replay;
mod report;
mod rerank;
mod sagemaker;
mod security;
mod server_metrics;
mod server_words;
mod shard_flags;
mod shards;
mod signals;
mod throughput;
mod tls;
mod traffic;
mod triton_vllm;
mod tui_e2e;
mod tune;
mod verdicts;
mod workload;

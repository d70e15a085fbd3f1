//! The accuracy check under arbitrary replies: it reads whatever the deployment answers,
//! through every format's parsers (whose own properties are in
//! `crates/wire/tests/parsers_fuzz.rs`), and may not panic on any of it.
//!
//! CI runs a short pass; `ENCBENCH_FUZZ_CASES=100000 cargo test --release -p encbench-load
//! --test accuracy_fuzz` is the long one (docs/testing.md).

// The strategies and formats of the parsers' fuzzing, written once in wire's tests.
#[path = "../../wire/tests/fuzz/mod.rs"]
mod fuzz;

use encbench_core::input::Shape;
use encbench_wire::client::Target;
use encbench_wire::payload::{HfFormat, Reply};
use fuzz::{body, cases, formats};
use proptest::prelude::*;

/// A target that answers every request with one fixed 2xx body.
struct Answers(bytes::Bytes);

impl Target for Answers {
    fn describe(&self) -> String {
        "fuzz".into()
    }

    fn check_ready<'a>(
        &'a self,
        _: &'a encbench_wire::client::OnWaiting,
    ) -> encbench_wire::client::BoxFuture<'a, Result<String, encbench_wire::client::TargetError>>
    {
        Box::pin(async { Ok(String::new()) })
    }

    fn invoke<'a>(
        &'a self,
        _: &'a encbench_wire::payload::Prepared,
    ) -> encbench_wire::client::BoxFuture<'a, Result<Reply, encbench_wire::client::Failure>> {
        let reply = Reply::new(self.0.clone(), None);
        Box::pin(async move { Ok(reply) })
    }
}

proptest! {
    #![proptest_config(cases(64))]

    /// The callers of the parsers too: the accuracy check reads whatever the deployment
    /// answers, every sample of the kind the first answer shows (NLI for labels or an
    /// error, retrieval for vectors) gets a verdict or an error, and a pass is only ever a
    /// verdict equal to the expected one.
    #[test]
    fn the_accuracy_check_never_panics_on_any_reply(body in body()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let setup = encbench_load::accuracy::AccuracySpec {
            samples: encbench_core::input::shipped_samples(),
            labels: encbench_wire::payload::LabelMap::default(),
            // A reply of vectors takes the check down the retrieval path.
            retrieval: encbench_core::input::shipped_retrieval(),
            rerank: encbench_core::input::shipped_rerank(),
            load_input: None,
        };
        let target = Answers(body.into());
        for f in formats() {
            let r = rt.block_on(encbench_load::accuracy::check(&target, f.as_ref(), &setup));
            let asked = match r.output {
                Some(encbench_core::verdicts::Output::Vectors { .. }) => setup.retrieval.len(),
                Some(encbench_core::verdicts::Output::Rankings) => setup.rerank.len(),
                _ => setup.samples.len(),
            };
            prop_assert_eq!(r.total, asked);
            for v in &r.samples {
                prop_assert_eq!(v.ok, v.predicted.as_deref() == Some(v.expected.as_str()));
                prop_assert!(v.predicted.is_some() || v.error.is_some());
            }
        }
    }
}

/// The reply the property once failed on (CI, stop 30): `[[0]]` reads as a 1-d vector, so
/// the check is a retrieval check, counted over the retrieval samples, each with a verdict.
#[test]
fn a_one_dimensional_vector_reply_is_checked_as_retrieval() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let setup = encbench_load::accuracy::AccuracySpec {
        samples: encbench_core::input::shipped_samples(),
        labels: encbench_wire::payload::LabelMap::default(),
        retrieval: encbench_core::input::shipped_retrieval(),
        rerank: vec![],
        load_input: None,
    };
    let r = rt.block_on(encbench_load::accuracy::check(
        &Answers(bytes::Bytes::from_static(b"[[0]]")),
        &HfFormat::new(Shape {
            pad_to_max: false,
            max_len: 512,
        }),
        &setup,
    ));
    assert_eq!(
        r.output,
        Some(encbench_core::verdicts::Output::Vectors { dim: 1 })
    );
    assert_ne!(setup.retrieval.len(), setup.samples.len());
    assert_eq!(r.total, setup.retrieval.len());
    assert_eq!(r.samples.len(), setup.retrieval.len());
    assert!(
        r.samples
            .iter()
            .all(|v| v.predicted.is_some() || v.error.is_some())
    );
}

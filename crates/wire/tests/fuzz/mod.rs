//! What the fuzzing of replies draws (arbitrary bodies and JSON) and feeds (every format of
//! every family), shared by the parsers' properties here and the accuracy check's in
//! `crates/load/tests/accuracy_fuzz.rs`, which includes this file.

use encbench_core::input::Shape;
use encbench_wire::payload::items::Items;
use encbench_wire::payload::json_api::ApiFormat;
use encbench_wire::payload::kserve::{KServeFormat, OutputName, TensorNames, Wire};
use encbench_wire::payload::{Format, HfFormat};
use encbench_wire::payload::{PayloadFormat, Pooling};
use encbench_wire::tokenize::TokenCounter;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::OnceLock;

pub fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("ENCBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Arbitrary JSON, biased towards the names the parsers look for.
pub fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("label".to_string()),
        Just("score".to_string()),
        Just("outputs".to_string()),
        Just("data".to_string()),
        Just("shape".to_string()),
        Just("name".to_string()),
        Just("parameters".to_string()),
        Just("binary_data_size".to_string()),
        Just("probs".to_string()),
        Just("model_stats".to_string()),
        Just("inference_stats".to_string()),
        Just("__type".to_string()),
        "[a-z_]{0,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::from),
        Just(json!("logits")),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Bytes that are arbitrary, or JSON, or JSON cut short.
pub fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        json_value().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        (json_value(), any::<prop::sample::Index>()).prop_map(|(v, i)| {
            let b = serde_json::to_vec(&v).unwrap();
            let cut = i.index(b.len() + 1);
            b[..cut].to_vec()
        }),
    ]
}

pub fn formats() -> &'static Vec<Box<dyn Format>> {
    static F: OnceLock<Vec<Box<dyn Format>>> = OnceLock::new();
    F.get_or_init(|| {
        let tok = TokenCounter::shipped();
        // The binary one reads whatever output its first reply has, as against a server
        // that declares none; the gRPC one reads protobuf replies.
        let kserve = |wire| -> Box<dyn Format> {
            Box::new(KServeFormat {
                model: "m".into(),
                names: TensorNames {
                    output: if wire == Wire::Binary {
                        OutputName::FirstReply(OnceLock::new())
                    } else {
                        OutputName::Named("logits".into())
                    },
                    ..TensorNames::default()
                },
                encoder: tok.encoder(512).unwrap(),
                pad_to_max: false,
                wire,
                text_input: None,
                pooling: encbench_wire::payload::Pooling::Mean,
            })
        };
        vec![
            Box::new(HfFormat::new(Shape {
                pad_to_max: false,
                max_len: 512,
            })),
            kserve(Wire::Json),
            kserve(Wire::Binary),
            kserve(Wire::Grpc),
        ]
        .into_iter()
        .chain(json_apis(&tok))
        .collect()
    })
}

/// Every route of every JSON API family.
pub fn json_apis(tok: &TokenCounter) -> Vec<Box<dyn Format>> {
    use encbench_core::choice::Choice;
    let mut out: Vec<Box<dyn Format>> = vec![];
    for family in PayloadFormat::ALL {
        for api in family.apis() {
            let items = Items::new(tok.encoder(512).unwrap(), false);
            let f = ApiFormat::new(*family, *api, Some("m".into()), items, Pooling::Mean).unwrap();
            out.push(Box::new(f));
        }
    }
    out
}

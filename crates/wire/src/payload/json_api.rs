//! The JSON API families (vLLM, OpenAI-compatible, TEI, Infinity, Jina/Cohere rerank): one
//! format, whose route and body shape the family and the task choose (`api::Route`).

use super::api::{Api, BodyShape, PayloadFormat, RerankOptions, Route};
use super::items::{Form, Items, PairForm};
use super::replies;
use super::{Answers, Format, Pooling, Prepared, Reply, check_verdict_count};
use bytes::Bytes;
use encbench_core::choice::Choice;
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Instant;

pub struct ApiFormat {
    pub family: PayloadFormat,
    pub api: Api,
    route: Route,
    /// The served model, where the family's requests name one.
    pub model: Option<String>,
    pub items: Items,
    pub pooling: Pooling,
    /// A rerank route's `top_n` and `return_documents` (`with_rerank`).
    rerank: RerankOptions,
    /// Switched once, by the accuracy check, when the server refuses the first form.
    form: Mutex<Form>,
}

impl ApiFormat {
    /// The format of `family` for `api`, which must be one of its routes
    /// (`PayloadFormat::check_api`).
    pub fn new(
        family: PayloadFormat,
        api: Api,
        model: Option<String>,
        items: Items,
        pooling: Pooling,
    ) -> Result<ApiFormat, String> {
        let route = family.check_api(api)?;
        Ok(ApiFormat {
            family,
            api,
            route,
            model,
            items,
            pooling,
            rerank: RerankOptions::default(),
            form: Mutex::new(default_form(family, api)),
        })
    }

    /// With a rerank route's options; `Err((flag, reason))` where its API has no such field.
    pub fn with_rerank(self, rerank: RerankOptions) -> Result<ApiFormat, (&'static str, String)> {
        rerank.check(self.family, Some(self.route))?;
        Ok(ApiFormat { rerank, ..self })
    }

    fn prepared(&self, inputs: &[&Input], whole: bool) -> Prepared {
        let started = Instant::now();
        let body = self.body(inputs, whole);
        let tokenized = self.current_form().tokenizes().then(|| started.elapsed());
        Prepared {
            tokenize: tokenized,
            ..Prepared::json(Bytes::from(
                serde_json::to_vec(&body).expect("JSON values serialize"),
            ))
        }
    }

    /// A rerank reply: the best `top_n` of the documents (all of them without it), each with
    /// its text where `return_documents` asked for it (a server that ignores the field would
    /// be measured at the other cost).
    fn check_ranked(&self, body: &[u8], documents: usize) -> Result<(), String> {
        let tei = self.route.shape == BodyShape::TeiRerank;
        let (scored, with_text) = replies::ranked_results(body, documents, tei)?;
        let wanted = self.rerank.top_n.unwrap_or(documents).min(documents);
        if scored < wanted {
            let count = encbench_core::text::count::<usize>;
            return Err(format!(
                "{} for {} (top_n {wanted})",
                count(scored, "score"),
                count(documents, "document")
            ));
        }
        if self.rerank.return_documents == Some(true) && !with_text {
            return Err(
                "return_documents was asked, but the results carry no document text".into(),
            );
        }
        Ok(())
    }

    fn current_form(&self) -> Form {
        *self
            .form
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn pair_form(&self) -> PairForm {
        match self.route.shape {
            BodyShape::TeiPredict => PairForm::List,
            _ => PairForm::Joined,
        }
    }

    /// The items of `inputs` as a JSON list, and whether the client tokenized them.
    fn list(&self, inputs: &[&Input]) -> Vec<Value> {
        let (form, pairs) = (self.current_form(), self.pair_form());
        inputs
            .iter()
            .map(|i| self.items.item(form, pairs, i))
            .collect()
    }

    /// The request body; `whole` asks every document's score whatever `--top-n` says (the
    /// accuracy check ranks them all).
    fn body(&self, inputs: &[&Input], whole: bool) -> Value {
        let model = self.model.as_deref();
        let with_model = |mut v: Value| {
            if let Some(m) = model {
                v["model"] = json!(m);
            }
            v
        };
        match self.route.shape {
            BodyShape::OpenAiEmbeddings => {
                with_model(json!({ "input": self.list(inputs), "encoding_format": "float" }))
            }
            BodyShape::VllmClassify | BodyShape::VllmPooling | BodyShape::InfinityClassify => {
                with_model(json!({ "input": self.list(inputs) }))
            }
            BodyShape::TeiEmbed => json!({ "inputs": self.list(inputs) }),
            // A batch of one text is one more list deep: `["a", "b"]` would be one pair.
            BodyShape::TeiPredict => {
                let nested: Vec<Value> = self
                    .list(inputs)
                    .into_iter()
                    .map(|v| if v.is_array() { v } else { json!([v]) })
                    .collect();
                json!({ "inputs": nested })
            }
            BodyShape::TeiRerank => {
                let (query, texts) = self.items.ranking(inputs);
                let return_text = self.rerank.return_documents.unwrap_or(false);
                json!({ "query": query, "texts": texts, "raw_scores": false, "return_text": return_text })
            }
            BodyShape::VllmScore => {
                let (query, documents) = self.items.ranking(inputs);
                with_model(json!({ "text_1": query, "text_2": documents }))
            }
            BodyShape::CohereRerank => {
                let (query, documents) = self.items.ranking(inputs);
                let n = documents.len();
                let top_n = self.rerank.top_n.filter(|_| !whole).unwrap_or(n);
                let mut v = json!({ "query": query, "documents": documents, "top_n": top_n });
                if let Some(r) = self.rerank.return_documents {
                    v["return_documents"] = json!(r);
                }
                with_model(v)
            }
        }
    }
}

/// What each family sends by default: strings where it takes strings; vLLM its mixed form
/// (it has no pair form and cannot pad).
fn default_form(family: PayloadFormat, api: Api) -> Form {
    match (family, api) {
        (PayloadFormat::Vllm, Api::Classify | Api::Embed | Api::Pooling) => Form::Mixed,
        _ => Form::Strings,
    }
}

/// The other form the server's API documents, to try once when the first is refused.
fn alternate(family: PayloadFormat, shape: BodyShape, form: Form) -> Option<Form> {
    let takes_ids = match family {
        // Its /classify, /v1/embeddings and /pooling take strings and token ids alike.
        PayloadFormat::Vllm => matches!(
            shape,
            BodyShape::VllmClassify | BodyShape::OpenAiEmbeddings | BodyShape::VllmPooling
        ),
        PayloadFormat::Openai => true,
        PayloadFormat::Tei => shape == BodyShape::TeiEmbed,
        _ => false,
    };
    match form {
        _ if !takes_ids => None,
        Form::Strings => Some(Form::Ids),
        Form::Ids | Form::Mixed => Some(Form::Strings),
    }
}

impl Format for ApiFormat {
    fn name(&self) -> &'static str {
        self.family.name()
    }

    fn path(&self) -> String {
        self.route.path.to_string()
    }

    fn ready_path(&self) -> Option<String> {
        self.family.ready_path().map(str::to_owned)
    }

    fn tokenizes(&self) -> bool {
        self.current_form().tokenizes()
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        self.prepared(inputs, false)
    }

    fn prepare_whole(&self, inputs: &[&Input]) -> Prepared {
        self.prepared(inputs, true)
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        match self.route.shape {
            BodyShape::VllmClassify => replies::vllm_labels(&reply.body),
            BodyShape::TeiPredict => replies::tei_labels(&reply.body),
            BodyShape::InfinityClassify => replies::infinity_labels(&reply.body),
            _ => Err(format!("{} answers no labels", self.route.path)),
        }
    }

    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        let body = &reply.body;
        match self.route.shape {
            BodyShape::OpenAiEmbeddings => replies::openai_vectors(body).map(Answers::Vectors),
            BodyShape::TeiEmbed => replies::tei_vectors(body).map(Answers::Vectors),
            BodyShape::VllmPooling => {
                replies::pooling_vectors(body, self.pooling).map(Answers::Vectors)
            }
            BodyShape::TeiRerank => replies::tei_scores(body, inputs.len()).map(Answers::Ranking),
            BodyShape::VllmScore => replies::vllm_scores(body, inputs.len()).map(Answers::Ranking),
            BodyShape::CohereRerank => {
                replies::cohere_scores(body, inputs.len()).map(Answers::Ranking)
            }
            BodyShape::VllmClassify | BodyShape::TeiPredict | BodyShape::InfinityClassify => {
                self.verdicts(reply).map(Answers::Labels)
            }
        }
    }

    /// A vector, a label or a score for every input: vectors counted, not read.
    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        let body = &reply.body;
        let answered = match self.route.shape {
            BodyShape::OpenAiEmbeddings => replies::openai_count(body)?,
            BodyShape::TeiEmbed => replies::tei_count(body)?,
            BodyShape::VllmPooling => replies::pooling_vectors(body, Pooling::Cls)?.len(),
            BodyShape::TeiRerank | BodyShape::CohereRerank => {
                return self.check_ranked(body, inputs);
            }
            BodyShape::VllmScore => replies::vllm_scores(body, inputs)?.len(),
            BodyShape::VllmClassify | BodyShape::TeiPredict | BodyShape::InfinityClassify => {
                self.verdicts(reply)?.len()
            }
        };
        check_verdict_count(answered, inputs)
    }

    fn ranks(&self) -> bool {
        self.api.ranks()
    }

    /// A one-label classifier's score per input (a cross-encoder behind a classify route):
    /// the first, best, label's score (TEI, Infinity), or vLLM's first probability.
    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        let scores = match self.route.shape {
            BodyShape::TeiPredict => replies::tei_scores_per_input(&reply.body)?,
            BodyShape::InfinityClassify => replies::infinity_scores_per_input(&reply.body)?,
            BodyShape::VllmClassify => replies::vllm_scores_per_input(&reply.body)?,
            _ => {
                return Err(format!(
                    "{} {} answers no score per input",
                    self.name(),
                    self.path()
                ));
            }
        };
        check_verdict_count(scores.len(), inputs)?;
        Ok(scores)
    }

    fn joins_pairs(&self) -> bool {
        self.current_form() == Form::Strings && self.pair_form() == PairForm::Joined
    }

    fn form(&self) -> Option<Form> {
        Some(self.current_form())
    }

    fn switch_form(&self) -> Option<Form> {
        let mut form = self
            .form
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = alternate(self.family, self.route.shape, *form)?;
        *form = next;
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenCounter;

    fn format(family: PayloadFormat, api: Api, pad: bool) -> ApiFormat {
        let items = Items::new(TokenCounter::shipped().encoder(512).unwrap(), pad);
        ApiFormat::new(family, api, Some("m".into()), items, Pooling::Mean).unwrap()
    }

    fn body(f: &ApiFormat, inputs: &[&Input]) -> Value {
        serde_json::from_slice(&f.prepare(inputs).body).unwrap()
    }

    #[test]
    fn each_family_builds_its_documented_body() {
        let pair = Input::pair("premise", "hypothesis");
        let text = Input::Text("a text".into());
        let tei = format(PayloadFormat::Tei, Api::Classify, false);
        assert_eq!(
            body(&tei, &[&pair, &text]),
            json!({ "inputs": [["premise", "hypothesis"], ["a text"]] })
        );
        assert_eq!(tei.path(), "/predict");
        let tei_embed = format(PayloadFormat::Tei, Api::Embed, false);
        assert_eq!(body(&tei_embed, &[&text]), json!({ "inputs": ["a text"] }));
        let openai = format(PayloadFormat::Openai, Api::Embed, false);
        assert_eq!(
            body(&openai, &[&text]),
            json!({ "input": ["a text"], "encoding_format": "float", "model": "m" })
        );
        let jina = format(PayloadFormat::Jina, Api::Rerank, false);
        assert_eq!(
            body(&jina, &[&pair, &Input::pair("premise", "other")]),
            json!({ "query": "premise", "documents": ["hypothesis", "other"], "top_n": 2, "model": "m" })
        );
        let score = format(PayloadFormat::Vllm, Api::Score, false);
        assert_eq!(
            body(&score, &[&pair]),
            json!({ "text_1": "premise", "text_2": ["hypothesis"], "model": "m" })
        );
        let rerank = format(PayloadFormat::Tei, Api::Rerank, false);
        assert_eq!(
            body(&rerank, &[&pair]),
            json!({ "query": "premise", "texts": ["hypothesis"], "raw_scores": false, "return_text": false })
        );
        // vLLM: pairs and padded inputs as ids, texts as strings.
        let vllm = format(PayloadFormat::Vllm, Api::Classify, true);
        let v = body(&vllm, &[&pair, &text]);
        assert_eq!(v["input"][0].as_array().unwrap().len(), 512);
        assert!(vllm.tokenizes());
    }

    #[test]
    fn a_refused_form_gives_way_to_the_other_once_where_the_api_takes_both() {
        let text = Input::Text("a text".into());
        let openai = format(PayloadFormat::Openai, Api::Embed, false);
        assert!(!openai.tokenizes());
        assert_eq!(openai.switch_form(), Some(Form::Ids));
        assert_eq!(
            body(&openai, &[&text])["input"],
            json!([[101, 1037, 3793, 102]])
        );
        assert!(openai.tokenizes());
        let infinity = format(PayloadFormat::Infinity, Api::Embed, false);
        assert_eq!(infinity.switch_form(), None, "Infinity takes strings only");
        let vllm = format(PayloadFormat::Vllm, Api::Embed, false);
        assert_eq!(vllm.switch_form(), Some(Form::Strings));
    }

    #[test]
    fn top_n_cuts_the_loads_replies_not_the_accuracy_checks() {
        let (a, b, c) = (
            Input::pair("q", "a"),
            Input::pair("q", "b"),
            Input::pair("q", "c"),
        );
        let opts = RerankOptions {
            top_n: Some(1),
            return_documents: Some(true),
        };
        let jina = format(PayloadFormat::Jina, Api::Rerank, false)
            .with_rerank(opts)
            .unwrap();
        let sent = body(&jina, &[&a, &b, &c]);
        assert_eq!(
            (sent["top_n"].clone(), sent["return_documents"].clone()),
            (json!(1), json!(true))
        );
        let whole: Value = serde_json::from_slice(&jina.prepare_whole(&[&a, &b, &c]).body).unwrap();
        assert_eq!(whole["top_n"], 3);
        let r = |s: &str| Reply::new(s.to_string(), None);
        let best = r(r#"{"results":[{"index":2,"relevance_score":0.9,"document":{"text":"c"}}]}"#);
        assert!(jina.check(&best, 3).is_ok());
        let bare = r(r#"{"results":[{"index":2,"relevance_score":0.9,"document":null}]}"#);
        assert_eq!(
            jina.check(&bare, 3).unwrap_err(),
            "return_documents was asked, but the results carry no document text"
        );
        assert!(jina.check(&r(r#"{"results":[]}"#), 3).is_err());
        let tei = format(PayloadFormat::Tei, Api::Rerank, false);
        let refused = tei.with_rerank(opts).err().unwrap();
        assert_eq!(refused.0, "--top-n");
        let tei = format(PayloadFormat::Tei, Api::Rerank, false)
            .with_rerank(RerankOptions {
                top_n: None,
                ..opts
            })
            .unwrap();
        assert_eq!(body(&tei, &[&a])["return_text"], true);
        assert!(
            tei.check(&r(r#"[{"index":0,"score":0.5,"text":"a"}]"#), 1)
                .is_ok()
        );
        assert!(tei.check(&r(r#"[{"index":0,"score":0.5}]"#), 1).is_err());
        let classify = format(PayloadFormat::Tei, Api::Classify, false);
        assert_eq!(classify.with_rerank(opts).err().unwrap().0, "--top-n");
    }

    #[test]
    fn replies_are_checked_for_an_answer_per_input() {
        let r = |s: &str| Reply::new(s.to_string(), None);
        let rerank = format(PayloadFormat::Jina, Api::Rerank, false);
        let two = r(
            r#"{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}"#,
        );
        assert!(rerank.check(&two, 2).is_ok());
        assert!(rerank.check(&two, 3).is_err());
        let a = Input::pair("q", "d1");
        let b = Input::pair("q", "d2");
        assert_eq!(
            rerank.answers(&two, &[&a, &b]).unwrap(),
            Answers::Ranking(vec![0.1, 0.9])
        );
        assert!(
            rerank
                .check(&r(r#"{"results":[{"index":7,"relevance_score":0.9}]}"#), 2)
                .is_err()
        );
        let tei = format(PayloadFormat::Tei, Api::Embed, false);
        assert!(tei.check(&r("[[0.1],[0.2]]"), 2).is_ok());
        assert!(tei.check(&r("[[0.1]]"), 2).is_err());
        assert!(tei.check(&r("<html>"), 1).is_err());
    }
}

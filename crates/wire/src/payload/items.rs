//! How inputs travel in the JSON APIs: as strings (the server tokenizes) or as token ids (the
//! client does), and a pair in the form its route has for one.

use crate::tokenize::Encoder;
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

/// How inputs are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// Strings: the server tokenizes. `--pad-to-max` sends texts of exactly `--max-len`
    /// tokens (the input's own words repeated).
    Strings,
    /// Token ids built with the client's tokenizer: pairs with their [SEP], `--pad-to-max`
    /// exactly `--max-len` of them.
    Ids,
    /// vLLM's: texts as strings, pairs and padded inputs as ids (it has no pair form and
    /// cannot pad).
    Mixed,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Strings => "strings",
            Form::Ids => "token ids",
            Form::Mixed => "pairs as token ids",
        }
    }

    /// Whether requests in this form are tokenized on the client, per request.
    pub fn tokenizes(self) -> bool {
        !matches!(self, Form::Strings)
    }
}

/// How a pair travels where the route takes strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairForm {
    /// TEI's `[premise, hypothesis]`.
    List,
    /// One text, the two joined by a space: routes with no pair form (embeddings).
    Joined,
}

/// Past this many padded texts the cache starts again: a load reuses a few hundred.
const PADDED_LIMIT: usize = 10_000;

/// Builds the items of a request; padded texts are made once per input.
pub struct Items {
    pub encoder: Encoder,
    pub pad_to_max: bool,
    padded: Mutex<HashMap<(Option<String>, String), String>>,
}

impl Items {
    pub fn new(encoder: Encoder, pad_to_max: bool) -> Items {
        Items {
            encoder,
            pad_to_max,
            padded: Mutex::new(HashMap::new()),
        }
    }

    /// `text` (after `first`, as a pair's second part), padded to `--max-len` tokens when asked.
    pub fn text(&self, first: Option<&str>, text: &str) -> String {
        if !self.pad_to_max {
            return text.to_string();
        }
        let key = (first.map(str::to_owned), text.to_string());
        let mut cache = self
            .padded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(t) = cache.get(&key) {
            return t.clone();
        }
        let padded = self.encoder.text_of_len(first, text);
        if cache.len() >= PADDED_LIMIT {
            cache.clear();
        }
        cache.insert(key, padded.clone());
        padded
    }

    fn ids(&self, input: &Input) -> Value {
        if self.pad_to_max {
            json!(self.encoder.exact_len_ids(input))
        } else {
            json!(self.encoder.encode(&[input], false).input_ids)
        }
    }

    /// One input as an item of `form`.
    pub fn item(&self, form: Form, pairs: PairForm, input: &Input) -> Value {
        let ids = match form {
            Form::Strings => false,
            Form::Ids => true,
            Form::Mixed => self.pad_to_max || input.parts().1.is_some(),
        };
        if ids {
            return self.ids(input);
        }
        match (input.parts(), pairs) {
            ((a, Some(b)), PairForm::List) => json!([a, self.text(Some(a), b)]),
            ((a, Some(b)), PairForm::Joined) => json!(self.text(None, &format!("{a} {b}"))),
            ((a, None), _) => json!(self.text(None, a)),
        }
    }

    /// A rerank request's query and documents from a batch of inputs: the first input's first
    /// part is the query, each input's last part a document (a batch of pairs that share
    /// their premise is one query and its candidates).
    pub fn ranking<'a>(&self, inputs: &[&'a Input]) -> (&'a str, Vec<String>) {
        let query = inputs.first().map_or("", |i| i.parts().0);
        let documents = inputs
            .iter()
            .map(|i| {
                let (a, b) = i.parts();
                self.text(Some(query), b.unwrap_or(a))
            })
            .collect();
        (query, documents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenCounter;

    fn items(pad: bool) -> Items {
        Items::new(TokenCounter::shipped().encoder(64).unwrap(), pad)
    }

    #[test]
    fn each_form_sends_inputs_as_its_servers_take_them() {
        let pair = Input::pair("a dog runs", "an animal moves");
        let text = Input::Text("hello world".into());
        let plain = items(false);
        assert_eq!(
            plain.item(Form::Strings, PairForm::List, &pair),
            json!(["a dog runs", "an animal moves"])
        );
        assert_eq!(
            plain.item(Form::Strings, PairForm::Joined, &pair),
            json!("a dog runs an animal moves")
        );
        assert_eq!(
            plain.item(Form::Mixed, PairForm::Joined, &text),
            json!("hello world")
        );
        let ids = plain.item(Form::Mixed, PairForm::Joined, &pair);
        assert_eq!(ids[0], 101, "[CLS] first: {ids}");
        assert_eq!(
            plain.item(Form::Ids, PairForm::List, &text),
            json!([101, 7592, 2088, 102])
        );
        let padded = items(true);
        let t = TokenCounter::shipped();
        let Value::String(s) = padded.item(Form::Strings, PairForm::Joined, &text) else {
            panic!("a string")
        };
        assert_eq!(t.count(&Input::Text(s)), 64);
        assert_eq!(
            padded
                .item(Form::Ids, PairForm::Joined, &text)
                .as_array()
                .unwrap()
                .len(),
            64
        );
        let other = Input::pair("x", "y z");
        let (query, docs) = padded.ranking(&[&pair, &other]);
        assert_eq!(query, "a dog runs");
        assert_eq!(t.count(&Input::pair(query, &docs[1])), 64);
    }
}

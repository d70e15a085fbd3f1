//! The configurations a tune runs: every combination of the `--param` values (the first
//! parameter varies slowest, as nested loops), or with `--zip` the values taken in step.

use std::fmt;

/// One `--param name=v1,v2,…`: a name the placeholders use, and its values as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub values: Vec<String>,
}

/// Letters, digits and `_`, not starting with a digit: a placeholder's name and, upper-cased,
/// the end of an environment variable's (`ENCBENCH_PARAM_WORKERS`).
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl std::str::FromStr for Param {
    type Err = String;

    fn from_str(s: &str) -> Result<Param, String> {
        let Some((name, list)) = s.split_once('=') else {
            return Err(format!(
                "'{s}' has no '=': write name=v1,v2 (workers=1,2,4)"
            ));
        };
        let name = name.trim();
        if !is_name(name) {
            return Err(format!(
                "'{name}' is not a name: letters, digits and _, not starting with a digit"
            ));
        }
        let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
        // A value goes into --serve's shell command as it is: only characters no shell
        // reads as syntax, so that it stays one word and never runs as code.
        let word_char = |c: char| c.is_ascii_alphanumeric() || "_-.:/@%+=".contains(c);
        if let Some(bad) = values
            .iter()
            .find(|v| v.is_empty() || !v.chars().all(word_char))
        {
            return Err(format!(
                "{name}: {bad:?} is not a value: each is one word of letters, digits and _ - . : / @ % + = (it goes into --serve's shell command as it is), commas between them"
            ));
        }
        Ok(Param {
            name: name.to_string(),
            values,
        })
    }
}

/// One configuration: a value for each parameter, in the parameters' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment(pub Vec<(String, String)>);

impl Assignment {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// "workers=4 threads=2": how tables, the screen and the export name a configuration.
impl fmt::Display for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(n, v)| format!("{n}={v}")).collect();
        f.write_str(&parts.join(" "))
    }
}

/// Every configuration of `params`: their product, or with `zip` the i-th value of each;
/// a configuration given twice is refused (it would be measured twice under one name).
pub fn grid(params: &[Param], zip: bool) -> Result<Vec<Assignment>, String> {
    let all = configurations(params, zip)?;
    for (i, a) in all.iter().enumerate() {
        if all[..i].contains(a) {
            return Err(format!("{a} is given twice"));
        }
    }
    Ok(all)
}

fn configurations(params: &[Param], zip: bool) -> Result<Vec<Assignment>, String> {
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name == p.name) {
            return Err(format!("{} is given twice", p.name));
        }
    }
    if zip {
        let n = params.first().map_or(0, |p| p.values.len());
        if let Some(p) = params.iter().find(|p| p.values.len() != n) {
            return Err(format!(
                "--zip pairs the values in step: {} has {} values, {} has {n}",
                p.name,
                p.values.len(),
                params[0].name
            ));
        }
        return Ok((0..n)
            .map(|i| {
                Assignment(
                    params
                        .iter()
                        .map(|p| (p.name.clone(), p.values[i].clone()))
                        .collect(),
                )
            })
            .collect());
    }
    let mut out = vec![Assignment(vec![])];
    for p in params {
        out = out
            .into_iter()
            .flat_map(|a| {
                p.values.iter().map(move |v| {
                    let mut next = a.0.clone();
                    next.push((p.name.clone(), v.clone()));
                    Assignment(next)
                })
            })
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Param {
        s.parse().unwrap()
    }

    #[test]
    fn the_product_varies_the_last_parameter_fastest() {
        let g = grid(&[p("workers=1,2"), p("threads=a,b,c")], false).unwrap();
        let labels: Vec<String> = g.iter().map(ToString::to_string).collect();
        assert_eq!(labels.len(), 6);
        assert_eq!(labels[0], "workers=1 threads=a");
        assert_eq!(labels[1], "workers=1 threads=b");
        assert_eq!(labels[5], "workers=2 threads=c");
    }

    #[test]
    fn zip_takes_the_values_in_step_and_refuses_uneven_lists() {
        let g = grid(&[p("workers=1,2,4"), p("price=1,1.5,4")], true).unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g[2].to_string(), "workers=4 price=4");
        assert_eq!(g[1].get("price"), Some("1.5"));
        let e = grid(&[p("workers=1,2,4"), p("price=1,2")], true).unwrap_err();
        assert!(e.contains("price has 2 values, workers has 3"), "{e}");
    }

    #[test]
    fn params_are_named_and_valued_or_refused_in_words() {
        assert_eq!(p(" workers = 1, 2 ").values, ["1", "2"]);
        for (bad, why) in [
            ("workers", "no '='"),
            ("2w=1", "not a name"),
            ("w-x=1", "not a name"),
            ("w=1,,2", "not a value"),
            ("w=a\u{1b}b", "not a value"),
        ] {
            let e = bad.parse::<Param>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let e = grid(&[p("w=1"), p("w=2")], false).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        let e = grid(&[p("w=1,1")], false).unwrap_err();
        assert_eq!(e, "w=1 is given twice");
        // In step, a value may repeat where the other's differs.
        assert_eq!(grid(&[p("w=1,2"), p("price=1,1")], true).unwrap().len(), 2);
    }
}

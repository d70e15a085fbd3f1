//! Placeholders: `{name}` in the server's command, its URL and the run's flags takes the
//! configuration's value of `--param name`. `${name}` is left alone (the shell's own), and
//! so is a brace around anything but a name (`'{"a": 1}'`, `{a,b}`). A flag whose value is
//! placeholders joined by integers and `+ - * /` (`--concurrency '{workers}*2'`) is computed,
//! only there: the arithmetic is written by the user, never read from a value.

/// A template with its placeholders filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filled {
    pub text: String,
    /// Whether any placeholder was filled.
    pub any: bool,
}

/// The `{name}` placeholders of `template` (not `${name}`), each with its byte range.
fn spans(template: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while let Some(open) = template[i..].find('{').map(|o| o + i) {
        let Some(close) = template[open..].find('}').map(|c| c + open) else {
            break;
        };
        let name = &template[open + 1..close];
        let shell = open > 0 && bytes[open - 1] == b'$';
        if !shell && super::grid::is_name(name) {
            out.push((open..close + 1, name));
            i = close + 1;
        } else {
            i = open + 1;
        }
    }
    out
}

/// The names `template`'s placeholders use, in order, each once.
pub fn placeholders(template: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (_, n) in spans(template) {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
}

/// `template` with each placeholder replaced by `value(name)`; a name with no value is the
/// error.
pub fn fill(template: &str, value: &dyn Fn(&str) -> Option<String>) -> Result<Filled, String> {
    let mut text = String::with_capacity(template.len());
    let mut at = 0;
    let mut any = false;
    for (range, name) in spans(template) {
        let v = value(name).ok_or_else(|| name.to_string())?;
        text.push_str(&template[at..range.start]);
        text.push_str(&v);
        at = range.end;
        any = true;
    }
    text.push_str(&template[at..]);
    Ok(Filled { text, any })
}

/// One word of the run's command line filled: placeholders replaced, and where the word's
/// value (after `--flag=` when it has one) is placeholders and integers joined by `+ - * /`,
/// computed. The error names a missing placeholder, or says why the arithmetic failed.
pub fn fill_arg(arg: &str, value: &dyn Fn(&str) -> Option<String>) -> Result<String, FillError> {
    let (flag, template) = match arg.split_once('=') {
        Some((f, t)) if f.starts_with("--") => (Some(f), t),
        _ => (None, arg),
    };
    let filled = fill(template, value).map_err(FillError::Unknown)?;
    let text = if filled.any && is_arithmetic(template) {
        evaluate(&filled.text)
            .map_err(|why| FillError::Arithmetic(format!("{template} = {}: {why}", filled.text)))?
            .to_string()
    } else {
        filled.text
    };
    Ok(match flag {
        Some(f) => format!("{f}={text}"),
        None => text,
    })
}

/// Why a word could not be filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FillError {
    /// A placeholder with no `--param` of its name.
    Unknown(String),
    Arithmetic(String),
}

/// Placeholders, digits, spaces and at least one operator outside the placeholders.
fn is_arithmetic(template: &str) -> bool {
    let mut rest = String::new();
    let mut at = 0;
    for (range, _) in spans(template) {
        rest.push_str(&template[at..range.start]);
        rest.push(' ');
        at = range.end;
    }
    rest.push_str(&template[at..]);
    rest.contains(['+', '-', '*', '/'])
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || c == ' ' || "+-*/".contains(c))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token {
    Int(i64),
    Op(char),
}

fn tokens(s: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' {
            chars.next();
        } else if c.is_ascii_digit() {
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(d);
                chars.next();
            }
            out.push(Token::Int(
                digits
                    .parse()
                    .map_err(|_| format!("{digits} is too large"))?,
            ));
        } else if "+-*/".contains(c) {
            out.push(Token::Op(c));
            chars.next();
        } else {
            return Err(format!(
                "'{c}' is not integer arithmetic (integers and + - * /)"
            ));
        }
    }
    Ok(out)
}

/// Integer arithmetic with `+ - * /` (`*` and `/` first, then left to right), a leading `-`
/// for a negative number; a division must come out whole and nothing may overflow.
pub fn evaluate(expr: &str) -> Result<i64, String> {
    let t = tokens(expr)?;
    let mut at = 0;
    let value = sum(&t, &mut at)?;
    if at != t.len() {
        return Err("an operator is missing between two numbers".into());
    }
    Ok(value)
}

fn sum(t: &[Token], at: &mut usize) -> Result<i64, String> {
    let mut acc = product(t, at)?;
    while let Some(Token::Op(op @ ('+' | '-'))) = t.get(*at).copied() {
        *at += 1;
        let rhs = product(t, at)?;
        acc = if op == '+' {
            acc.checked_add(rhs)
        } else {
            acc.checked_sub(rhs)
        }
        .ok_or("overflows")?;
    }
    Ok(acc)
}

fn product(t: &[Token], at: &mut usize) -> Result<i64, String> {
    let mut acc = number(t, at)?;
    while let Some(Token::Op(op @ ('*' | '/'))) = t.get(*at).copied() {
        *at += 1;
        let rhs = number(t, at)?;
        acc = if op == '*' {
            acc.checked_mul(rhs).ok_or("overflows")?
        } else if rhs == 0 {
            return Err("divides by zero".into());
        } else if acc % rhs != 0 {
            return Err(format!("{acc}/{rhs} is not a whole number"));
        } else {
            acc / rhs
        };
    }
    Ok(acc)
}

fn number(t: &[Token], at: &mut usize) -> Result<i64, String> {
    match t.get(*at).copied() {
        Some(Token::Int(n)) => {
            *at += 1;
            Ok(n)
        }
        Some(Token::Op('-')) => {
            *at += 1;
            number(t, at).map(|n| -n)
        }
        _ => Err("a number is missing".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(name: &str) -> Option<String> {
        match name {
            "workers" => Some("4".into()),
            "port" => Some("8081".into()),
            "model" => Some("mini-lm".into()),
            _ => None,
        }
    }

    #[test]
    fn placeholders_are_names_in_braces_and_the_shells_own_are_left_alone() {
        let t = r#"WORKERS={workers} ./serve --port {port} --home ${HOME} --json '{"a": 1}' {a,b} {workers}"#;
        assert_eq!(placeholders(t), ["workers", "port"]);
        let f = fill(t, &values).unwrap();
        assert!(f.any);
        assert_eq!(
            f.text,
            r#"WORKERS=4 ./serve --port 8081 --home ${HOME} --json '{"a": 1}' {a,b} 4"#
        );
        assert_eq!(fill("{wokers}", &values).unwrap_err(), "wokers");
        assert!(!fill("no placeholder", &values).unwrap().any);
    }

    #[test]
    fn a_flags_arithmetic_is_computed_only_where_a_placeholder_was() {
        let f = |a: &str| fill_arg(a, &values);
        assert_eq!(f("{workers}*2").unwrap(), "8");
        assert_eq!(
            f("--concurrency={workers} * 2 + 1").unwrap(),
            "--concurrency=9"
        );
        assert_eq!(f("{workers}").unwrap(), "4");
        assert_eq!(
            f("http://127.0.0.1:{port}").unwrap(),
            "http://127.0.0.1:8081"
        );
        assert_eq!(f("--model={model}").unwrap(), "--model=mini-lm");
        // Written by the user without a placeholder: the run's own parser reads it.
        assert_eq!(f("2*4").unwrap(), "2*4");
        assert_eq!(
            f("{model}-2").unwrap_err(),
            FillError::Arithmetic(
                "{model}-2 = mini-lm-2: 'm' is not integer arithmetic (integers and + - * /)"
                    .into()
            )
        );
        assert!(
            matches!(f("{workers}/3"), Err(FillError::Arithmetic(e)) if e.contains("4/3 is not a whole number"))
        );
        assert_eq!(
            f("{nope}*2").unwrap_err(),
            FillError::Unknown("nope".into())
        );
    }

    #[test]
    fn arithmetic_is_small_and_exact() {
        assert_eq!(evaluate("2+3*4"), Ok(14));
        assert_eq!(evaluate("20/4/5"), Ok(1));
        assert_eq!(evaluate("10-2-3"), Ok(5));
        assert_eq!(evaluate("-2*3"), Ok(-6));
        assert!(evaluate("4/0").unwrap_err().contains("zero"));
        assert!(
            evaluate("9223372036854775807*2")
                .unwrap_err()
                .contains("overflows")
        );
        assert!(evaluate("2 3").is_err());
        assert!(evaluate("2*").is_err());
    }
}

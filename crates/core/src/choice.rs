//! A setting picked by name from a few (`--engine hf`, and `engine=hf` in compare's
//! `--target`): each value's name and other spellings given once, by its type, so that the
//! command line offers the same names that every reader of them accepts.

/// A closed set of values, each with a name.
pub trait Choice: Copy + 'static {
    /// Every value, in the order they are offered.
    const ALL: &'static [Self];

    fn name(self) -> &'static str;

    /// Other names it is known by (`kserve` for `triton`): accepted, never offered.
    fn aliases(self) -> &'static [&'static str] {
        &[]
    }
}

/// The value `s` names: its name or an alias, in any case (compare's `--target` has always
/// taken `engine=TEI`; the command line's own flags are held to the case offered first).
pub fn parse<T: Choice>(s: &str) -> Result<T, String> {
    let named = |v: &T| {
        std::iter::once(v.name())
            .chain(v.aliases().iter().copied())
            .any(|n| n.eq_ignore_ascii_case(s))
    };
    T::ALL.iter().copied().find(named).ok_or_else(|| {
        let names: Vec<&str> = T::ALL.iter().map(|v| v.name()).collect();
        format!("'{s}' is none of {}", names.join(", "))
    })
}

/// `FromStr` by `parse`, for each type named: a blanket impl over `Choice` is not allowed for
/// the other crates' types, so the impl is written once here instead of once per type.
#[macro_export]
macro_rules! parse_by_name {
    ($($ty:ty),+ $(,)?) => {$(
        impl ::std::str::FromStr for $ty {
            type Err = String;

            fn from_str(s: &str) -> Result<$ty, String> {
                $crate::choice::parse(s)
            }
        }
    )+};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Family {
        Triton,
        Jina,
    }

    impl Choice for Family {
        const ALL: &'static [Family] = &[Family::Triton, Family::Jina];

        fn name(self) -> &'static str {
            match self {
                Family::Triton => "triton",
                Family::Jina => "jina",
            }
        }

        fn aliases(self) -> &'static [&'static str] {
            match self {
                Family::Triton => &["kserve"],
                Family::Jina => &[],
            }
        }
    }

    #[test]
    fn a_name_or_an_alias_in_any_case() {
        assert_eq!(parse("jina"), Ok(Family::Jina));
        assert_eq!(parse("KServe"), Ok(Family::Triton));
        assert_eq!(
            parse::<Family>("tei"),
            Err("'tei' is none of triton, jina".into())
        );
    }
}

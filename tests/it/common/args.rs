//! Argument vectors for the command line, built by name instead of written out each time.

/// Arguments in the order given.
#[derive(Debug, Clone, Default)]
pub struct Args(Vec<String>);

pub fn args() -> Args {
    Args::default()
}

impl Args {
    pub fn arg(mut self, a: impl std::fmt::Display) -> Args {
        self.0.push(a.to_string());
        self
    }

    pub fn opt(self, flag: &str, value: impl std::fmt::Display) -> Args {
        self.arg(flag).arg(value)
    }

    /// These, then `more`.
    pub fn and(mut self, more: &Args) -> Args {
        self.0.extend(more.0.iter().cloned());
        self
    }

    /// These, then each of `more`.
    pub fn and_all(self, more: &[&str]) -> Args {
        more.iter().fold(self, Args::arg)
    }

    pub fn n(self, n: u64) -> Args {
        self.opt("-n", n)
    }

    pub fn no_accuracy(self) -> Args {
        self.arg("--no-accuracy")
    }

    /// A payload format and its model.
    pub fn engine(self, engine: &str, model: &str) -> Args {
        self.opt("--engine", engine).opt("--model", model)
    }

    /// A SageMaker endpoint behind a local runtime API.
    pub fn endpoint(self, name: &str, runtime_url: &str) -> Args {
        self.opt("--endpoint", name)
            .opt("--endpoint-url", runtime_url)
    }

    pub fn strs(&self) -> Vec<&str> {
        self.0.iter().map(String::as_str).collect()
    }
}

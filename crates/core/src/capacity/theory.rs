//! Queueing theory's answers to a capacity search: the highest arrival rate at which an
//! M/M/c or M/D/1 queue keeps a share q of its requests within t. The search's simulator
//! (`sim`) and the known-answer tests through the binary (`tests/it/capacity.rs`) check the
//! search against them; nothing in the binary calls them.

/// P(sojourn > t) in an M/M/c queue whose workers serve μ a second each (Erlang C for the
/// wait, plus the exponential service).
pub fn mmc_tail(lambda: f64, mu: f64, c: usize, t: f64) -> f64 {
    let a = lambda / mu;
    let cf = c as f64;
    let rho = a / cf;
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let last = term * a / cf / (1.0 - rho);
    let erlang_c = last / (sum + last);
    let g = cf * mu - lambda;
    if (g - mu).abs() < 1e-9 {
        return (-mu * t).exp() * (1.0 + erlang_c * mu * t);
    }
    (-mu * t).exp() + erlang_c * mu / (g - mu) * ((-mu * t).exp() - (-g * t).exp())
}

/// P(wait ≤ x) in an M/D/1 queue of service time d, Erlang's closed form:
/// (1 − ρ) Σ_{k ≤ x/d} (λ(kd − x))^k / k! · e^{−λ(kd − x)}.
pub fn md1_wait_within(lambda: f64, d: f64, x: f64) -> f64 {
    if x < 0.0 {
        return 0.0;
    }
    let mut sum = 0.0;
    let mut fact = 1.0;
    for k in 0..=((x / d).floor() as i32) {
        if k > 0 {
            fact *= f64::from(k);
        }
        let y = lambda * (f64::from(k) * d - x);
        sum += y.powi(k) / fact * (-y).exp();
    }
    (1.0 - lambda * d) * sum
}

/// The highest rate below `limit` at which `tail(rate)` (the share of requests past the
/// bound) is at most 1 − q, by bisection: the tail grows with the rate.
fn highest(limit: f64, q: f64, tail: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0, limit * (1.0 - 1e-9));
    for _ in 0..200 {
        let mid = f64::midpoint(lo, hi);
        if tail(mid) <= 1.0 - q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// M/M/c: the highest λ with P(sojourn > t) ≤ 1 − q.
pub fn mmc_capacity(mu: f64, c: usize, q: f64, t: f64) -> f64 {
    highest(c as f64 * mu, q, |l| mmc_tail(l, mu, c, t))
}

/// M/D/1 of service time d: the highest λ whose sojourn (wait + d) is within t for a share q.
pub fn md1_capacity(d: f64, q: f64, t: f64) -> f64 {
    highest(1.0 / d, q, |l| 1.0 - md1_wait_within(l, d, t - d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1's closed form (μ − ln(1/(1 − q))/t), Erlang C's M/M/4 answer the tests quote,
    /// and M/D/1's P(W = 0) = 1 − ρ.
    #[test]
    fn the_known_answers() {
        assert!((mmc_capacity(100.0, 1, 0.99, 0.1) - (100.0 - 100f64.ln() / 0.1)).abs() < 1e-6);
        assert!((mmc_capacity(100.0, 4, 0.99, 0.1) - 350.09).abs() < 0.01);
        assert!((md1_wait_within(50.0, 0.01, 0.0) - 0.5).abs() < 1e-12);
        assert!((md1_capacity(0.01, 0.99, 0.1) - 77.349).abs() < 0.001);
    }
}

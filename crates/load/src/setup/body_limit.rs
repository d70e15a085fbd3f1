//! A body over the target's limit (SageMaker's 6 MiB, a URL's 64 MiB) is refused before
//! anything is sent, naming the largest batch of these inputs that fits.

use super::{SetupError, usage};
use encbench_core::input::{Input, batch_inputs};
use encbench_wire::payload::Format;

/// The sizes of a run's requests: its batch (documents per query for a reranker) and a
/// sweep's.
pub(super) struct Sizes<'a> {
    pub(super) batch: usize,
    pub(super) sweep: &'a [usize],
    pub(super) rerank: bool,
}

/// The most a target takes in one request body, and whose limit that is.
#[derive(Clone, Copy)]
pub(super) struct BodyLimit {
    pub(super) bytes: usize,
    pub(super) whose: &'static str,
}

/// A body over the target's limit would be refused (SageMaker's 6 MiB) or make the client
/// build what no server takes: say so before sending anything.
pub(super) fn check_body_limit(
    sizes: &Sizes<'_>,
    texts: &[Input],
    format: &dyn Format,
    limit: BodyLimit,
) -> Result<(), SetupError> {
    let mib = |n: usize| n as f64 / (1024.0 * 1024.0);
    let (one, sweep, of, up_to) = if sizes.rerank {
        (
            "--docs-per-query",
            "--sweep-docs",
            "documents",
            "documents per query",
        )
    } else {
        ("--batch-size", "--batch-sizes", "inputs", "batches")
    };
    for &b in std::iter::once(&sizes.batch).chain(sizes.sweep) {
        let flag = if b == sizes.batch { one } else { sweep };
        let size = match largest_body(texts, format, b, limit.bytes) {
            Ok(n) if n <= limit.bytes => continue,
            Ok(n) => format!(" (a {:.1} MiB request body)", mib(n)),
            // Only a lower bound, where the estimate stopped: not a figure worth showing.
            Err(_) => String::new(),
        };
        let fits = match largest_batch_that_fits(texts, format, limit.bytes) {
            0 => "not even one of them fits: give shorter --texts".to_string(),
            n => format!("{up_to} of up to {n} fit"),
        };
        return Err(usage(
            flag,
            format!(
                "{b} is too large: a batch of {b} of these {of} is over {}{size}; {fits}",
                limit.whose
            ),
        ));
    }
    Ok(())
}

/// The largest batch whose every body fits in `limit`: as many copies of the largest input
/// as fit (each input of a request costs at most as much). The first guess leaves out what
/// grows with the count itself (a `batch_size` field's digits), so the body of that many
/// copies is built, and the count lowered by what it is over until it fits.
fn largest_batch_that_fits(texts: &[Input], format: &dyn Format, limit: usize) -> usize {
    let alone = |i: usize| format.prepare(&[&texts[i]]).body.len();
    let twice = format.prepare(&[&texts[0], &texts[0]]).body.len();
    let overhead = (2 * alone(0)).saturating_sub(twice);
    let Some((largest, size)) = (0..texts.len()).map(|i| (i, alone(i))).max_by_key(|t| t.1) else {
        return 0;
    };
    let each = size.saturating_sub(overhead).max(1);
    let mut b = limit.saturating_sub(overhead) / each;
    while b > 0 {
        let body = format.prepare(&vec![&texts[largest]; b]).body.len();
        if body <= limit {
            break;
        }
        b = b.saturating_sub((body - limit).div_ceil(each));
    }
    b
}

/// The largest body of a phase's first requests (up to 8) at batch size `b`, or `Err` with
/// an estimate once a body is sure to be far over `limit`. A body is built only when its
/// inputs' sizes say it could fit: a batch of a billion inputs is refused, never built.
fn largest_body(
    texts: &[Input],
    format: &dyn Format,
    b: usize,
    limit: usize,
) -> Result<usize, usize> {
    let n = texts.len();
    let alone = |i: usize| format.prepare(&[&texts[i]]).body.len();
    // What a body costs besides its inputs: two bodies of one input each hold it once more
    // than a body of the input twice.
    let twice = format.prepare(&[&texts[0], &texts[0]]).body.len();
    let overhead = (2 * alone(0)).saturating_sub(twice);
    let mut sizes: Vec<Option<usize>> = vec![None; n];
    let mut largest = 0;
    for k in 0..n.min(8) {
        let mut estimate = overhead;
        // Input j of request k is text (k·b + j) mod n, as `batch_inputs` takes it.
        let first = (k % n) * (b % n) % n;
        for j in 0..b {
            let i = (first + j % n) % n;
            let size = *sizes[i].get_or_insert_with(|| alone(i));
            estimate += size.saturating_sub(overhead);
            // Leeway over the limit: the estimate is close, not exact, and the body built
            // below is measured.
            if estimate > limit + limit / 8 {
                return Err(estimate);
            }
        }
        largest = largest.max(format.prepare(&batch_inputs(texts, b, k)).body.len());
    }
    Ok(largest)
}

//! `tune`: one local server restarted per configuration of its settings. What is pure of it
//! lives here: the grid of configurations from `--param` (their product, or `--zip`), the
//! placeholders filled into the server's command and the run's flags, the small integer
//! arithmetic a client flag may do with them, and the Pareto front of capacity against cost.

mod fill;
mod front;
mod grid;

pub use fill::{FillError, Filled, evaluate, fill, fill_arg, placeholders};
pub use front::{Point, pareto_front};
pub use grid::{Assignment, Param, grid, is_name};
